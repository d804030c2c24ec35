/**
 * The layers the server and the CLI run on: SQLite or PostgreSQL storage, settings with the
 * server key, randomness, scrypt, the throttle policy (its counters are in the store),
 * and the audit trail as log lines.
 */
import {
  Audit,
  type AuditStore,
  Config,
  Entropy,
  type Http,
  type PasswordHasher,
  SettingStore,
  type StorageError,
  type Stores,
  Throttle
} from "@latchkey/core"
import { NodeCrypto } from "@latchkey/node"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Context, Effect, Layer } from "effect"
import type { ServerEnv } from "./Env.js"
import * as Log from "./Log.js"
import * as ScryptHasher from "./ScryptHasher.js"

/** Whether the store answers, whichever it is: for `/readyz`. */
export class Readiness extends Context.Tag("@latchkey/server/Readiness")<
  Readiness,
  Effect.Effect<void, StorageError.StorageError>
>() {}

/** Every service of the server. */
export type Services = Http.Requirements | Readiness | Audit.AuditLog | AuditStore.AuditStore

/** `storage` with the readiness check `ping`, which needs what `storage` provides. */
const withReadiness = <H>(
  storage: Layer.Layer<Stores.Stores | AuditStore.AuditStore | H, StorageError.StorageError>,
  ping: Effect.Effect<void, StorageError.StorageError, H>
) =>
  Layer.merge(
    storage,
    Layer.effect(
      Readiness,
      Effect.map(Effect.context<H>(), (services) => Effect.provide(ping, services))
    ).pipe(Layer.provide(storage))
  )

/** The store of `env` (PostgreSQL when `DATABASE_URL` is set, SQLite otherwise) and its readiness check. */
export const storageLayer = (
  env: ServerEnv
): Layer.Layer<Stores.Stores | AuditStore.AuditStore | Readiness, StorageError.StorageError> =>
  env.databaseUrl !== null
    ? withReadiness(
        PostgresStorage.layer({
          connectionString: env.databaseUrl,
          poolMax: env.pgPoolMax,
          auditRetentionDays: env.auditRetentionDays
        }),
        PostgresStorage.ping
      )
    : withReadiness(
        SqliteStorage.layer({ filename: env.dbPath, auditRetentionDays: env.auditRetentionDays }),
        SqliteStorage.ping
      )

/** Replacements for tests (a cheaper password hash). */
export interface Overrides {
  readonly hasher?: Layer.Layer<PasswordHasher.PasswordHasher>
}

/** Name of the generated server key in the settings table. */
export const serverKeySetting = "server_key"

/**
 * All services over the store of `env` (`storageLayer`). The server key is LATCHKEY_SECRET
 * or, when unset, one generated on first start and kept in the database.
 */
export const layer = (
  env: ServerEnv,
  issuer: string,
  log: Log.Log,
  overrides: Overrides = {}
): Layer.Layer<Services, StorageError.StorageError | Config.InvalidConfig> => {
  const storage = storageLayer(env)
  const config = Layer.effect(
    Config.Config,
    Effect.gen(function* () {
      const serverKey =
        env.secret ??
        (yield* Effect.flatMap(SettingStore.SettingStore, (s) =>
          Effect.flatMap(Entropy.token, (candidate) => s.getOrCreate(serverKeySetting, candidate))
        ))
      return yield* Config.make({
        issuer,
        serverKey,
        ...(env.codeTtl !== undefined ? { codeTtl: env.codeTtl } : {}),
        ...(env.accessTokenTtl !== undefined ? { accessTokenTtl: env.accessTokenTtl } : {}),
        ...(env.refreshTokenTtl !== undefined ? { refreshTokenTtl: env.refreshTokenTtl } : {}),
        ...(env.refreshReuseGrace !== undefined ? { refreshReuseGrace: env.refreshReuseGrace } : {}),
        ...(env.sessionTtl !== undefined ? { sessionTtl: env.sessionTtl } : {})
      })
    })
  ).pipe(Layer.provide(Layer.merge(storage, NodeCrypto.layer)))
  // Audit events go to the append-only table and, as "audit" log lines, to pino
  const audit = Audit.layer.pipe(Layer.provide(storage))
  return Layer.mergeAll(
    storage,
    config,
    // Synchronous node:crypto for digests and randomness: nothing per request in the thread pool
    NodeCrypto.layer,
    overrides.hasher ?? ScryptHasher.layer(),
    // Counters in the store: every process on the database shares one budget
    Throttle.policyLayer(env.throttle),
    audit,
    Log.effectLayer(log)
  )
}

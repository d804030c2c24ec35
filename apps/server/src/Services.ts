/**
 * The layers the server and the CLI run on: SQLite or PostgreSQL storage, settings with the
 * server key, randomness, scrypt, the throttle policy (its counters are in the store),
 * and the audit trail as log lines; with `Overrides.metrics`, the stores timed and the audit
 * events counted into Prometheus metrics; with `Overrides.watch`, the store's changes of
 * availability logged.
 */
import {
  Audit,
  type AuditStore,
  Config,
  Entropy,
  type Http,
  Keys,
  LogoutStore,
  PasswordChecks,
  type PasswordHasher,
  SettingStore,
  type StorageError,
  type StorageHealth,
  type Stores,
  Throttle
} from "@latchkey/core"
import { NodeCrypto, ScryptHasher, WebAuthnServer } from "@latchkey/node"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as Availability from "./Availability.js"
import { describeStore, type ServerEnv } from "./Env.js"
import * as Log from "./Log.js"
import * as Metrics from "./Metrics.js"
import { countingLines, sessionStats, timedStorage } from "./Observed.js"
import * as Tracing from "./Tracing.js"

/** Every service of the server. */
export type Services =
  | Http.Requirements
  | StorageHealth.StorageHealth
  | Audit.AuditLog
  | AuditStore.AuditStore

/** The store of `env`: PostgreSQL when `DATABASE_URL` is set, SQLite otherwise; either provides its health for `/readyz`. */
const storageLayer = (
  env: ServerEnv
): Layer.Layer<
  Stores.Stores | AuditStore.AuditStore | StorageHealth.StorageHealth,
  StorageError.StorageError
> =>
  env.databaseUrl !== null
    ? PostgresStorage.layer({
        connectionString: env.databaseUrl,
        poolMax: env.pgPoolMax,
        preparedStatements: env.pgPreparedStatements,
        auditRetentionDays: env.auditRetentionDays
      })
    : SqliteStorage.layer({ filename: env.dbPath, auditRetentionDays: env.auditRetentionDays })

/** Replacements for tests (a cheaper password hash, another store), and the metrics to record into. */
export interface Overrides {
  readonly hasher?: Layer.Layer<PasswordHasher.PasswordHasher>
  /** The store instead of the one `env` names (`storageLayer`), e.g. PostgreSQL over an embedded PGlite. */
  readonly storage?: ReturnType<typeof storageLayer>
  /** Time every store call and count every audit event into these metrics (the server's); none by default (the CLI). */
  readonly metrics?: Metrics.Metrics
  /** Log when the store becomes unavailable and available again (`Availability.watched`); off by default (the CLI). */
  readonly watch?: boolean
}

/** Name of the generated server key in the settings table. */
const serverKeySetting = "server_key"

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
  const metrics = overrides.metrics
  const given = overrides.storage ?? storageLayer(env)
  // Watched and timed in one match around each store call
  const storage =
    overrides.watch === true
      ? Availability.watched(given, describeStore(env), metrics)
      : metrics === undefined
        ? given
        : timedStorage(given, metrics)
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
        ...(env.idTokenTtl !== undefined ? { idTokenTtl: env.idTokenTtl } : {}),
        ...(env.jwtAccessTokenTtl !== undefined ? { jwtAccessTokenTtl: env.jwtAccessTokenTtl } : {}),
        signingAlgorithm: env.signingAlgorithm,
        mfa: env.mfa,
        appReview: env.appReview,
        registration: env.registration,
        ...(env.sessionTtl !== undefined ? { sessionTtl: env.sessionTtl } : {}),
        ...(env.sessionMaxAge !== undefined ? { sessionMaxAge: env.sessionMaxAge } : {})
      })
    })
  ).pipe(Layer.provide(Layer.merge(storage, NodeCrypto.layer)))
  // Audit events go to the append-only table and, as "audit" log lines, straight to pino; each
  // kept event is counted where its line is written
  const line = (event: Audit.AuditEvent) => log.info({ audit: event }, "audit")
  const audit = Audit.layerWriting(metrics === undefined ? line : countingLines(line, metrics)).pipe(
    Layer.provide(storage)
  )
  return Layer.mergeAll(
    storage,
    config,
    // Synchronous node:crypto for digests and randomness: nothing per request in the thread pool
    NodeCrypto.layer,
    overrides.hasher ?? ScryptHasher.layer(),
    // Counters in the store: every process on the database shares one budget. As many
    // password checks run at once as there are hashing threads; the others wait in line.
    Throttle.policyLayer(env.throttle, {
      ...PasswordChecks.defaultLimits,
      concurrency: ScryptHasher.threads
    }),
    audit,
    Log.effectLayer(log),
    // Passkeys only when asked for: without the WebAuthn service the core has none
    env.passkeys ? WebAuthnServer.layer : Layer.empty
  )
}

/** A built runtime of every service, and the metrics it records into. */
export interface Started {
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  readonly metrics: Metrics.Metrics
}

/**
 * Build the server's services (`layer` with metrics, and the trace export when `env.otel` is
 * set) and bind the sessions gauge to their store; disposes what it built when building fails.
 */
export const start = async (env: ServerEnv, issuer: string, log: Log.Log): Promise<Started> => {
  const metrics = Metrics.make()
  const tracing = await Tracing.layer(env.otel)
  const runtime: ManagedRuntime.ManagedRuntime<Services, unknown> = ManagedRuntime.make(
    Layer.merge(layer(env, issuer, log, { metrics, watch: true }), tracing)
  )
  try {
    await runtime.runtime()
    // The first signing key is made on first start (after the store migrated), not on a first request
    await runtime.runPromise(Keys.ensured)
  } catch (e) {
    await runtime.dispose()
    throw e
  }
  metrics.bindSessions(sessionStats((effect) => runtime.runPromise(effect)))
  metrics.bindBackchannel(() =>
    runtime.runPromise(Effect.flatMap(LogoutStore.LogoutStore, (s) => s.pending()))
  )
  return { runtime, metrics }
}

/**
 * Latchkey storage on PostgreSQL through node-postgres (`pg`): a connection pool, versioned
 * migrations applied once at layer build, single use decided by conditional writes, and every
 * transaction run again on serialization failures and deadlocks.
 */
import {
  AuditStore,
  SessionStore,
  StorageError,
  StorageHealth,
  type Stores,
  Sweep,
  Transaction
} from "@latchkey/core"
import { Context, Effect, Layer } from "effect"
import * as PostgresAudit from "./internal/audit.js"
import * as Database from "./internal/database.js"
import * as Errors from "./internal/errors.js"
import { latestVersion, migrate as migrateSchema } from "./internal/migrations.js"
import * as PostgresStores from "./internal/stores.js"

/** The part of a connection pool the adapter uses; node-postgres' `pg.Pool` has it. */
export type Pool = Database.Pool
/** A connection checked out of a `Pool`. */
export type PoolClient = Database.PoolClient
/** What a query answers. */
export type QueryResult = Database.QueryResult
/** A statement, its parameters and the name it is prepared under. */
export type QueryConfig = Database.QueryConfig

/** How to reach the database. */
export interface Options {
  /**
   * A libpq connection URI, e.g. `postgres://latchkey:secret@db.internal:5432/latchkey`. Without
   * it (and without `pool`) node-postgres reads the `PG*` environment variables.
   */
  readonly connectionString?: string
  /**
   * A pool of your own (a `pg.Pool`, or `PgliteClient.make(db)` in tests) instead of one the
   * layer creates: the layer neither configures nor ends it. The pool options below are then refused.
   */
  readonly pool?: Pool
  /**
   * Schema the tables live in (created when missing), set as the search_path of every
   * connection of the pool the layer creates. Default: the server's search_path (`public`).
   */
  readonly schema?: string
  /** Most connections the pool opens (default 10). */
  readonly poolMax?: number
  /** How long to wait for a connection, new or from the pool, before failing with StorageError (default 5000). */
  readonly connectionTimeoutMs?: number
  /** How long an unused connection stays open (default 30000). */
  readonly idleTimeoutMs?: number
  /** The server's `statement_timeout` for every connection of the pool (default 10000; 0: none). */
  readonly statementTimeoutMs?: number
  /**
   * Bounds of the session store (default `SessionStore.defaultLimits` of the core: 10 000
   * sessions, 8 pending requests per session, 16 MiB of pending authorize queries, counted in
   * characters as PostgreSQL's `length()` does). Each must be a positive integer.
   */
  readonly sessions?: Partial<SessionStore.SessionLimits>
  /**
   * Days audit events stay append-only (default `defaultAuditRetentionDays`, 90; a whole number
   * from 1 to `maxAuditRetentionDays`, 3650). Written to the database when the layer opens it,
   * where a trigger refuses, to every connection, deleting an event whose `at` is within that
   * many days of the database's clock; `AuditStore.purgeBefore` refuses such a cutoff with
   * StorageError. The last layer opened sets it: give every instance the same value.
   */
  readonly auditRetentionDays?: number
  /**
   * Send every statement with parameters as a named prepared statement, parsed and planned once
   * per connection (default true). `false` sends every statement unnamed, parsed and planned each
   * time: for a connection path that does not keep a session's prepared statements (a pooler
   * between the adapter and PostgreSQL must run in session mode anyway, for the advisory locks).
   */
  readonly preparedStatements?: boolean
}

/** Connections of the pool the layer creates, unless `Options.poolMax` says otherwise. */
export const defaultPoolMax = 10
/** Wait for a connection, unless `Options.connectionTimeoutMs` says otherwise. */
export const defaultConnectionTimeoutMs = 5000
/** Life of an unused connection, unless `Options.idleTimeoutMs` says otherwise. */
export const defaultIdleTimeoutMs = 30_000
/** The server's `statement_timeout`, unless `Options.statementTimeoutMs` says otherwise. */
export const defaultStatementTimeoutMs = 10_000
/** Days audit events stay append-only unless `Options.auditRetentionDays` says otherwise (the core's). */
export const defaultAuditRetentionDays = AuditStore.defaultRetentionDays
/** The longest retention `Options.auditRetentionDays` takes (the core's, about ten years). */
export const maxAuditRetentionDays = AuditStore.maxRetentionDays

/** The schema version this version of the adapter writes. */
export const schemaVersion: number = latestVersion

/** Audit events in a running transaction, or as the tail of one write statement. */
const eventWrites: Database.EventWrites = {
  insert: (tx, events) => PostgresAudit.insertEvents(tx.query, events),
  statement: PostgresAudit.eventsStatement
}

/**
 * Whether `error` is the refusal of a server that offers no TLS (SSL) to a connection that asked
 * for it (`sslmode=require` in the connection string, or `PGSSLMODE`).
 */
export const isTlsRefused = (error: StorageError.StorageError): boolean => Errors.isTlsRefused(error.cause)

const invalid = (message: string): StorageError.StorageError => new StorageError.StorageError({ message })

/** The audit retention `options` ask for, in days; throws StorageError when invalid. */
const auditRetentionDays = (options: Options): number =>
  AuditStore.retentionDaysOf(options.auditRetentionDays)

/** The session bounds `options` ask for, over the core's defaults; throws StorageError when invalid. */
const sessionLimits = (options: Options): SessionStore.SessionLimits =>
  SessionStore.limitsOf(options.sessions)

// A plain identifier: it goes into the connection's options unquoted.
const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

/** The pool settings `options` ask for; throws StorageError when invalid. */
const poolSettings = (options: Options) => {
  const own = [
    "connectionString",
    "schema",
    "poolMax",
    "connectionTimeoutMs",
    "idleTimeoutMs",
    "statementTimeoutMs"
  ]
  if (options.pool !== undefined) {
    const given = own.filter((name) => options[name as keyof Options] !== undefined)
    if (given.length > 0) throw invalid(`${given.join(", ")} cannot be given with a pool of your own`)
  }
  if (options.schema !== undefined && !schemaName.test(options.schema)) {
    throw invalid("schema must be a lowercase identifier (letters, digits and _, at most 63)")
  }
  const whole = (name: string, value: number, min: number) => {
    if (!Number.isSafeInteger(value) || value < min || value > 2 ** 31 - 1) {
      throw invalid(`${name} must be an integer from ${min}`)
    }
    return value
  }
  return {
    max: whole("poolMax", options.poolMax ?? defaultPoolMax, 1),
    connectionTimeoutMillis: whole(
      "connectionTimeoutMs",
      options.connectionTimeoutMs ?? defaultConnectionTimeoutMs,
      0
    ),
    idleTimeoutMillis: whole("idleTimeoutMs", options.idleTimeoutMs ?? defaultIdleTimeoutMs, 0),
    statement_timeout: whole("statementTimeoutMs", options.statementTimeoutMs ?? defaultStatementTimeoutMs, 0)
  }
}

// An idle connection the server closed (a restart, a failover, a network cut) is dropped by the
// pool, which emits it as an 'error': without a listener Node would end the process.
const ignoreIdleError = (): void => {}

/**
 * The pool `options` name: the one given (kept open at the end), or a new `pg.Pool`, ended when
 * the scope closes. Idle connections' errors are listened to while the scope is open, and on a
 * created pool until it has ended.
 */
const acquirePool = (options: Options) =>
  Effect.gen(function* () {
    const settings = yield* Errors.attemptSync(() => poolSettings(options))
    const given = options.pool
    // A given pool is listened to while the scope is open; a created one for its whole life, so
    // that a connection closed by the server while `end()` runs is not an unhandled 'error'
    const pool: Pool = yield* given !== undefined
      ? Effect.acquireRelease(
          Effect.sync(() => {
            given.on?.("error", ignoreIdleError)
            return given
          }),
          () => Effect.sync(() => given.removeListener?.("error", ignoreIdleError))
        )
      : Effect.acquireRelease(
          Errors.attempt(async () => {
            const pg = await import("pg")
            const created = new pg.default.Pool({
              ...(options.connectionString !== undefined
                ? { connectionString: options.connectionString }
                : {}),
              ...settings,
              // A transaction left open by a stuck process cannot hold its row locks for long.
              idle_in_transaction_session_timeout: 60_000,
              // An answer lost on the network (a partition, not a closed socket) fails the query
              // on the client too, a little after the server would have cancelled it.
              ...(settings.statement_timeout > 0 ? { query_timeout: settings.statement_timeout + 2000 } : {}),
              application_name: "latchkey",
              keepAlive: true,
              ...(options.schema !== undefined ? { options: `-c search_path=${options.schema}` } : {})
            })
            created.on("error", ignoreIdleError)
            return created
          }),
          (created) => Effect.promise(() => created.end().catch(() => undefined))
        )
    return pool
  })

/**
 * Apply pending migrations and write the audit retention, in one transaction under the
 * migration lock; returns the version found before.
 */
const open = (db: Database.Database, options: Options, retentionDays: number) =>
  db.transaction(
    (tx) =>
      Effect.gen(function* () {
        if (options.schema !== undefined) yield* tx.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`)
        const from = yield* migrateSchema(tx)
        yield* tx.query("UPDATE audit_retention SET seconds = $1 WHERE id = 1", [retentionDays * 86_400])
        return from
      }),
    { locks: ["migrate"] }
  )

/** Health of the database, for readiness probes: the core's `StorageHealth`, which the layer provides. */
export const Health = StorageHealth.StorageHealth
/** The core's `StorageHealth` service. */
export type Health = StorageHealth.StorageHealth

/** Succeeds when the database answers; fails with StorageError otherwise. */
export const ping: Effect.Effect<void, StorageError.StorageError, Health> = StorageHealth.ping

/**
 * Every store over one PostgreSQL database, the audit store, its Health, and the `Transaction`
 * that runs several store calls in one database transaction. The pool is
 * created (unless given), the schema migrated and the audit retention written when the layer
 * is built; the pool the layer created is ended when its scope closes.
 */
export const layer = (
  options: Options
): Layer.Layer<
  Stores.Stores | AuditStore.AuditStore | Health | Transaction.Transaction,
  StorageError.StorageError
> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const limits = yield* Errors.attemptSync(() => sessionLimits(options))
      const retentionDays = yield* Errors.attemptSync(() => auditRetentionDays(options))
      const pool = yield* acquirePool(options)
      const db = Database.make(pool, eventWrites, options.preparedStatements ?? true)
      yield* open(db, options, retentionDays)
      return Context.merge(PostgresStores.make(db, limits), PostgresAudit.make(db)).pipe(
        Context.add(Transaction.Transaction, { run: db.unit }),
        Context.add(Health, {
          ping: Effect.asVoid(db.query("SELECT max(version) AS version FROM latchkey_schema"))
        })
      )
    })
  )

/** Apply pending migrations (creating the schema if asked) and close again; returns the versions before and after. */
export const migrate = (
  options: Options
): Effect.Effect<{ readonly from: number; readonly to: number }, StorageError.StorageError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const retentionDays = yield* Errors.attemptSync(() => auditRetentionDays(options))
      const pool = yield* acquirePool(options)
      const db = Database.make(pool, eventWrites, options.preparedStatements ?? true)
      const from = yield* open(db, options, retentionDays)
      return { from, to: latestVersion }
    })
  )

/**
 * Delete codes, tokens, sessions, pending authorization requests and throttle counters whose
 * expiry has passed, at most `limit` of each: the core's `Sweep.expired`. Several instances may sweep
 * at once: each skips the rows another is deleting.
 */
export const sweep = Sweep.expired

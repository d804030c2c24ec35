/**
 * Latchkey storage on one SQLite file through better-sqlite3: WAL, synchronous=FULL,
 * BEGIN IMMEDIATE for every read-modify-write, versioned migrations at open.
 */
import {
  AuditStore,
  SessionStore,
  type StorageError,
  StorageHealth,
  type Stores,
  Sweep,
  Transaction
} from "@latchkey/core"
import { Context, Effect, Layer } from "effect"
import * as SqliteAudit from "./internal/audit.js"
import * as SqliteBackup from "./internal/backup.js"
import {
  assertSameFile,
  attempt,
  defaultOpenTimeoutMs,
  fileIdentity,
  openSync,
  retryBusy
} from "./internal/database.js"
import { latestVersion } from "./internal/migrations.js"
import * as SqliteStores from "./internal/stores.js"
import * as WalSync from "./internal/walSync.js"
import * as Writer from "./internal/writer.js"

/** How to open the database. */
export interface Options {
  /** Path of the database file (its directory is created), or `:memory:` for a private in-memory database. */
  readonly filename: string
  /**
   * `FULL` (default): a commit survives power loss. `NORMAL`: faster, but with WAL the
   * last commits (a consumed code, a rotated refresh token) may roll back on power loss
   * or an OS crash and become usable once more. Application crashes lose nothing either way.
   */
  readonly synchronous?: "FULL" | "NORMAL"
  /** How long a writer waits for another connection's lock before failing with StorageError (default 5000). */
  readonly busyTimeoutMs?: number
  /**
   * How long opening keeps retrying while the database is busy, besides each statement's busy
   * timeout (default 30 000 ms): processes that start together on one new file (two servers, a
   * server and the CLI) wait for each other's WAL switch and migration instead of failing.
   */
  readonly openTimeoutMs?: number
  /**
   * Bounds of the session store (default `SessionStore.defaultLimits` of the core: 10 000
   * sessions, 8 pending requests per session, 16 MiB of pending authorize queries, counted in
   * characters as SQLite's `length()` does). Each must be a positive integer.
   */
  readonly sessions?: Partial<SessionStore.SessionLimits>
  /**
   * Days audit events stay append-only (default `defaultAuditRetentionDays`, 90; a whole number
   * from 1 to `maxAuditRetentionDays`, 3650). Written to the database when the layer opens it,
   * where a trigger refuses, to every connection, deleting an event whose `at` is within that
   * many days of the database's clock; `AuditStore.purgeBefore` refuses such a cutoff with
   * StorageError. The last layer opened sets it: give every process on the file the same value.
   */
  readonly auditRetentionDays?: number
}

/** Days audit events stay append-only unless `Options.auditRetentionDays` says otherwise (the core's). */
export const defaultAuditRetentionDays = AuditStore.defaultRetentionDays
/** The longest retention `Options.auditRetentionDays` takes (the core's, about ten years). */
export const maxAuditRetentionDays = AuditStore.maxRetentionDays

/** The audit retention `options` ask for, in days; throws StorageError when invalid. */
const auditRetentionDays = (options: Options): number =>
  AuditStore.retentionDaysOf(options.auditRetentionDays)

/** The session bounds `options` ask for, over the core's defaults; throws StorageError when invalid. */
const sessionLimits = (options: Options): SessionStore.SessionLimits =>
  SessionStore.limitsOf(options.sessions)

/** The schema version this version of the adapter writes. */
export const schemaVersion: number = latestVersion

/** Health of the database, for readiness probes: the core's `StorageHealth`, which the layer provides. */
export const Health = StorageHealth.StorageHealth
/** The core's `StorageHealth` service. */
export type Health = StorageHealth.StorageHealth

/**
 * Succeeds when the database answers and, for a database file, the path still names the file
 * the layer opened; fails with StorageError otherwise (the file was deleted, or replaced, e.g.
 * by a restore renamed over it: an open connection would go on using the old one).
 */
export const ping: Effect.Effect<void, StorageError.StorageError, Health> = StorageHealth.ping

/**
 * Every store over one SQLite database, the audit store, its Health, and the `Transaction` that
 * runs several store calls as one write of the group commit. The file is
 * opened and migrated when the layer is built (and the audit retention written to it),
 * and closed when its scope ends.
 */
export const layer = (
  options: Options
): Layer.Layer<
  Stores.Stores | AuditStore.AuditStore | Health | Transaction.Transaction,
  StorageError.StorageError
> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const limits = yield* attempt(() => sessionLimits(options))
      const retentionDays = yield* attempt(() => auditRetentionDays(options))
      const { db, writer, insertEvents, identity } = yield* Effect.acquireRelease(
        attempt(() => {
          const { db } = openSync(options)
          try {
            // The file opened, which the ping compares with the one at the path
            const identity = fileIdentity(options.filename)
            // Migration 7's row, read by the trigger that guards audit_events against deletes.
            const retention = db.prepare("UPDATE audit_retention SET seconds = ? WHERE id = 1")
            retryBusy(Date.now() + (options.openTimeoutMs ?? defaultOpenTimeoutMs), () =>
              retention.run(retentionDays * 86_400)
            )
            const insertEvents = SqliteAudit.inserter(db)
            return {
              db,
              insertEvents,
              identity,
              writer: Writer.make(db, insertEvents, WalSync.open(db, options.filename))
            }
          } catch (e) {
            db.close()
            throw e
          }
        }),
        ({ db, writer }) =>
          Effect.sync(() => {
            // Commit what is still queued before the file closes.
            writer.close()
            db.close()
          })
      )
      const stores = yield* attempt(() => SqliteStores.make(db, writer, limits))
      const probe = yield* attempt(() => db.prepare("SELECT max(version) FROM latchkey_schema").pluck())
      const audit = yield* attempt(() => SqliteAudit.make(db, writer, insertEvents))
      return Context.merge(stores, audit).pipe(
        Context.add(Transaction.Transaction, { run: writer.unit }),
        Context.add(Health, {
          ping: attempt(() => {
            assertSameFile(identity)
            probe.get()
          })
        })
      )
    })
  )

/** Open the database, apply pending migrations and close it again; returns the versions before and after. */
export const migrate = (
  options: Options
): Effect.Effect<{ readonly from: number; readonly to: number }, StorageError.StorageError> =>
  Effect.acquireUseRelease(
    attempt(() => openSync(options)),
    ({ migratedFrom }) => Effect.succeed({ from: migratedFrom, to: latestVersion }),
    ({ db }) => Effect.sync(() => db.close())
  )

/** Where `backup` reads from: the database file, and how long to wait for a lock (default 5000 ms). */
export type BackupSource = SqliteBackup.Source
/** What `backup` copied: the pages of the new file. */
export type BackupResult = SqliteBackup.Result

/**
 * Copy the database at `source.filename` to the new file `destination` (its directory is
 * created) with SQLite's online backup API, while other connections and processes go on
 * reading and writing: the copy holds every commit made before it started, including those
 * still in the WAL, and is consistent (taken in one read transaction). Fails with StorageError,
 * writing nothing, when `destination` exists already, when the source is `:memory:` or missing,
 * and, leaving no file at `destination`, when the copy fails or is interrupted.
 */
export const backup = (
  source: BackupSource,
  destination: string
): Effect.Effect<BackupResult, StorageError.StorageError> => SqliteBackup.run(source, destination)

/**
 * Delete codes, tokens, sessions, pending authorization requests and throttle counters whose
 * expiry has passed, at most `limit` of each: the core's `Sweep.expired`.
 */
export const sweep = Sweep.expired

/**
 * Opening the database file: pragmas, migrations, and the mapping of every
 * driver exception to the core's StorageError.
 */
import {
  type BigIntStats,
  chmodSync,
  closeSync,
  fchmodSync,
  mkdirSync,
  openSync as openFile,
  type Stats,
  statSync
} from "node:fs"
import { dirname, resolve } from "node:path"
import { Migrations, StorageError } from "@latchkey/core"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Either, ParseResult } from "effect"
import { migrations, NewerSchemaError } from "./migrations.js"

/** How to open the database. */
export interface Options {
  readonly filename: string
  readonly synchronous?: "FULL" | "NORMAL"
  readonly busyTimeoutMs?: number
  /**
   * How long opening keeps retrying while the database answers SQLITE_BUSY (another process
   * migrating or switching it to WAL at the same moment), besides each statement's busy timeout.
   */
  readonly openTimeoutMs?: number
}

/** Default of `Options.openTimeoutMs`. */
export const defaultOpenTimeoutMs = 30_000

/** Default time a writer waits for the lock held by another connection or process. */
export const defaultBusyTimeoutMs = 5000

const messages: Record<string, string> = {
  SQLITE_BUSY: "the database is locked by another writer (busy timeout exceeded)",
  SQLITE_LOCKED: "the database table is locked",
  SQLITE_FULL: "the disk holding the database is full",
  SQLITE_READONLY: "the database is read-only",
  SQLITE_IOERR: "an I/O error occurred in the database",
  SQLITE_CORRUPT: "the database file is corrupt",
  SQLITE_CANTOPEN: "the database file cannot be opened",
  SQLITE_NOTADB: "the file is not a database",
  SQLITE_CONSTRAINT: "a database constraint was violated"
}

/** Map anything the driver (or our own checks) throws to a StorageError. */
export const toStorageError = (cause: unknown): StorageError.StorageError => {
  if (cause instanceof StorageError.StorageError) return cause
  if (cause instanceof NewerSchemaError)
    return new StorageError.StorageError({ message: cause.message, cause })
  if (ParseResult.isParseError(cause) || cause instanceof SyntaxError) {
    return new StorageError.StorageError({ message: "a stored row could not be decoded", cause })
  }
  const code =
    typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
      ? cause.code
      : undefined
  // Extended result codes (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_FSYNC, ...) share their primary code's message.
  const primary = code?.match(/^SQLITE_[A-Z]+/)?.[0]
  const message =
    (primary !== undefined ? messages[primary] : undefined) ??
    (code !== undefined ? `sqlite error ${code}` : "sqlite storage failed")
  return new StorageError.StorageError({ message, cause })
}

/** Run synchronous driver work as an Effect whose only error is StorageError. */
export const attempt = <A>(f: () => A): Effect.Effect<A, StorageError.StorageError> =>
  Effect.try({ try: f, catch: toStorageError })

/** Whether `filename` names a database in a plain file (not `:memory:`, a temporary database or a `file:` URI). */
export const isFile = (filename: string): boolean =>
  filename !== "" && filename !== ":memory:" && !filename.startsWith("file:")

/** Whether the driver refused because another connection held a lock (SQLITE_BUSY or an extended code of it). */
export const isBusy = (e: unknown): boolean =>
  typeof e === "object" &&
  e !== null &&
  "code" in e &&
  typeof e.code === "string" &&
  e.code.startsWith("SQLITE_BUSY")

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Run `f` until it does not fail with SQLITE_BUSY or `deadline` (epoch ms) has passed, waiting
 * 10 ms, doubling to 200 ms, between attempts: SQLite answers BUSY at once, without its busy
 * handler, where waiting could deadlock (two connections converting a new file to WAL, a read
 * lock waiting to become a write lock). For opening only: it blocks the thread while it waits.
 */
export const retryBusy = <A>(deadline: number, f: () => A): A => {
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    try {
      return f()
    } catch (e) {
      if (!isBusy(e) || Date.now() >= deadline) throw e
      Atomics.wait(pause, 0, 0, wait)
    }
  }
}

/** The busy timeout `options` ask for (default `defaultBusyTimeoutMs`); throws StorageError when invalid. */
export const busyTimeoutOf = (options: { readonly busyTimeoutMs?: number | undefined }): number => {
  const busyTimeoutMs = options.busyTimeoutMs ?? defaultBusyTimeoutMs
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2 ** 31 - 1) {
    throw new StorageError.StorageError({ message: "busyTimeoutMs must be a non-negative integer" })
  }
  return busyTimeoutMs
}

/** The file a database was opened from: its absolute path, device and inode. */
export interface FileIdentity {
  readonly path: string
  readonly dev: bigint
  readonly ino: bigint
}

/** The identity of the file `filename` names now, or null for a database not in a plain file. */
export const fileIdentity = (filename: string): FileIdentity | null => {
  if (!isFile(filename)) return null
  const path = resolve(filename)
  const { dev, ino } = statSync(path, { bigint: true })
  return { path, dev, ino }
}

/**
 * Throw StorageError unless the path of `identity` still names that file. An open connection
 * keeps working on a file deleted or renamed over, so without this check a server would go on
 * answering from a database nobody else reaches any more.
 */
export const assertSameFile = (identity: FileIdentity | null): void => {
  if (identity === null) return
  let now: BigIntStats | undefined
  try {
    now = statSync(identity.path, { bigint: true, throwIfNoEntry: false })
  } catch (cause) {
    throw new StorageError.StorageError({
      message: `the database file ${identity.path} cannot be read`,
      cause
    })
  }
  if (now === undefined) {
    throw new StorageError.StorageError({
      message: `the database file ${identity.path} no longer exists; restart to open the file at that path`
    })
  }
  if (now.dev !== identity.dev || now.ino !== identity.ino) {
    throw new StorageError.StorageError({
      message: `the database file ${identity.path} was replaced by another file; restart to open it`
    })
  }
}

const isCode = (e: unknown, code: string): boolean =>
  typeof e === "object" && e !== null && "code" in e && e.code === code

/** Words for the file system errors that refuse a path. */
const refusals: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "the file system is read-only",
  ENOTDIR: "a part of the path is not a directory",
  ENOENT: "no such file or directory (the file system may not allow it)",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the name is too long",
  EISDIR: "it is a directory"
}

/** Why a file system call refused, in words with its code (`permission denied (EACCES)`). */
const refusal = (cause: unknown): string => {
  const code =
    typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
      ? cause.code
      : undefined
  if (code === undefined) return cause instanceof Error ? cause.message : String(cause)
  return `${refusals[code] ?? "refused"} (${code})`
}

/** A path the adapter cannot use, with what it tried and why, in words. */
const pathError = (message: string, cause?: unknown): StorageError.StorageError =>
  new StorageError.StorageError({ message, cause })

/**
 * The directories of `dir` that do not exist, outermost first; throws StorageError when a part of
 * it is no directory or cannot be looked at.
 */
const missingDirectories = (dir: string): Array<string> => {
  const missing: Array<string> = []
  for (let d = resolve(dir); ; d = dirname(d)) {
    let found: Stats | undefined
    try {
      found = statSync(d, { throwIfNoEntry: false })
    } catch (cause) {
      // Under a file: the walk up finds it and says so
      if (!isCode(cause, "ENOTDIR"))
        throw pathError(`the directory ${d} cannot be looked at: ${refusal(cause)}`, cause)
    }
    if (found !== undefined) {
      if (!found.isDirectory()) throw pathError(`${d} is not a directory`)
      return missing
    }
    missing.unshift(d)
    if (dirname(d) === d) return missing
  }
}

/**
 * Create the missing directories of `dir` with mode 0700, whatever the umask: they hold the
 * server key and password hashes (K9 in docs/security.md). Existing directories keep their mode.
 * One directory at a time, each failure a StorageError naming the directory and the reason (a
 * recursive mkdir loops forever where the file system refuses with ENOENT, as /proc does).
 */
export const makePrivateDirectory = (dir: string): void => {
  for (const d of missingDirectories(dir)) {
    try {
      mkdirSync(d, { mode: 0o700 })
    } catch (cause) {
      // Another process created it meanwhile: theirs, with their mode
      if (isCode(cause, "EEXIST")) continue
      throw pathError(`the directory ${d} cannot be created: ${refusal(cause)}`, cause)
    }
    // mkdir applied the umask to 0700: set it exactly
    chmodSync(d, 0o700)
  }
}

/**
 * Create `path` as an empty file with mode 0600, whatever the umask (K9 in docs/security.md);
 * throws EEXIST when it exists, and never opens or changes an existing file.
 */
export const createPrivateFile = (path: string): void => {
  const fd = openFile(path, "wx", 0o600)
  try {
    fchmodSync(fd, 0o600)
  } finally {
    closeSync(fd)
  }
}

/**
 * Create the database file (and its directories) readable by its owner only before SQLite opens
 * it: SQLite gives the `-wal` and `-shm` files the mode of the database file. A file that exists
 * keeps its mode: the operator chose it.
 */
const createDatabaseFile = (filename: string): void => {
  const path = resolve(filename)
  try {
    makePrivateDirectory(dirname(path))
  } catch (e) {
    const reason = e instanceof StorageError.StorageError ? e.message : refusal(e)
    throw pathError(`the database file ${path} cannot be created: ${reason}`, e)
  }
  try {
    createPrivateFile(path)
  } catch (e) {
    if (!isCode(e, "EEXIST")) throw pathError(`the database file ${path} cannot be created: ${refusal(e)}`, e)
  }
}

/** An open, migrated database and the schema version it had before. */
export interface Opened {
  readonly db: BetterSqlite3.Database
  readonly migratedFrom: number
}

/**
 * Open the file (creating its directory), set the pragmas and migrate. Throws
 * driver errors or NewerSchemaError; callers wrap it with `attempt`.
 */
export const openSync = (options: Options): Opened => {
  const synchronous = options.synchronous ?? "FULL"
  if (synchronous !== "FULL" && synchronous !== "NORMAL") {
    throw new StorageError.StorageError({ message: `synchronous must be "FULL" or "NORMAL"` })
  }
  const busyTimeoutMs = busyTimeoutOf(options)
  const openTimeoutMs = options.openTimeoutMs ?? defaultOpenTimeoutMs
  if (!Number.isInteger(openTimeoutMs) || openTimeoutMs < 0) {
    throw new StorageError.StorageError({ message: "openTimeoutMs must be a non-negative integer" })
  }
  const deadline = Date.now() + openTimeoutMs
  if (isFile(options.filename)) createDatabaseFile(options.filename)
  const db = new BetterSqlite3(options.filename, { timeout: busyTimeoutMs })
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`)
    // Processes starting together on one new file race here and in the migration
    retryBusy(deadline, () => db.pragma("journal_mode = WAL"))
    // D9 (docs/security.md): with WAL, NORMAL may lose the last commits (a single-use mark) on power loss.
    db.pragma(`synchronous = ${synchronous}`)
    db.pragma("foreign_keys = ON")
    // The savepoint of each write in a group commit keeps its undo pages in a sub-journal: in
    // memory, not a temporary file written page by page (about 12 writes a token otherwise)
    db.pragma("temp_store = MEMORY")
    const migratedFrom = retryBusy(deadline, () => migrate(db, Math.floor(Date.now() / 1000)))
    return { db, migratedFrom }
  } catch (e) {
    db.close()
    throw e
  }
}

/**
 * Bring the schema up to `latestVersion`: idempotent, forward-only, all steps in
 * one BEGIN IMMEDIATE transaction so concurrent openers apply each step once.
 * Returns the version found before migrating.
 */
export const migrate = (db: BetterSqlite3.Database, now: number): number =>
  db
    .transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS latchkey_schema (
        version    INTEGER PRIMARY KEY NOT NULL,
        name       TEXT NOT NULL,
        applied_at INTEGER NOT NULL
      )`)
      const row = db.prepare("SELECT coalesce(max(version), 0) AS version FROM latchkey_schema").get() as {
        version: number
      }
      const steps = Migrations.plan(migrations, row.version)
      if (Either.isLeft(steps)) throw new NewerSchemaError(steps.left)
      const record = db.prepare("INSERT INTO latchkey_schema (version, name, applied_at) VALUES (?, ?, ?)")
      for (const m of steps.right) {
        db.exec(m.sql)
        record.run(m.version, m.name, now)
      }
      return row.version
    })
    .immediate()

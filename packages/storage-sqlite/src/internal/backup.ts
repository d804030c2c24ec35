/**
 * Online backup through SQLite's backup API (better-sqlite3's `db.backup`), on a connection
 * of its own: what other connections have committed, in the WAL or not, is in the copy.
 */
import { existsSync, rmSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { StorageError } from "@latchkey/core"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Exit } from "effect"
import {
  attempt,
  busyTimeoutOf,
  createPrivateFile,
  isFile,
  makePrivateDirectory,
  toStorageError
} from "./database.js"

/** Where a backup reads from. */
export interface Source {
  readonly filename: string
  readonly busyTimeoutMs?: number
}

/** What a backup copied. */
export interface Result {
  /** Pages of the copy (`PRAGMA page_count` of the new file). */
  readonly pages: number
}

// better-sqlite3 copies this many pages per step at most: the whole database in one step.
const allPages = 0x7fffffff

const refuse = (message: string): never => {
  throw new StorageError.StorageError({ message })
}

const openSource = (source: Source): BetterSqlite3.Database => {
  if (!isFile(source.filename)) {
    refuse("backup copies a database file; an in-memory database (:memory:) has none")
  }
  const path = resolve(source.filename)
  // fileMustExist would say only "cannot be opened"; and never create an empty database here.
  if (!existsSync(path)) refuse(`there is no database file at ${path} to back up`)
  const timeout = busyTimeoutOf(source)
  return new BetterSqlite3(path, { fileMustExist: true, timeout })
}

// Created here, exclusively: a file that exists, or appears meanwhile, is never overwritten. Mode
// 0600 (directories 0700) whatever the umask: a backup holds the server key and password hashes.
const createDestination = (destination: string): string => {
  if (!isFile(destination)) refuse("the backup destination must be a file path, not :memory:")
  const path = resolve(destination)
  makePrivateDirectory(dirname(path))
  try {
    createPrivateFile(path)
  } catch (e) {
    if (typeof e === "object" && e !== null && "code" in e && e.code === "EEXIST") {
      refuse(`the backup destination ${path} exists already; back up to a new file`)
    }
    throw e
  }
  return path
}

// In one step, under one read transaction: a consistent snapshot while other connections write
// (in steps, each write of another connection between two would restart the copy).
const copy = (db: BetterSqlite3.Database, path: string): Effect.Effect<Result, StorageError.StorageError> =>
  Effect.async<Result, StorageError.StorageError>((resume) => {
    let interrupted = false
    const settled = db
      .backup(path, {
        progress: () => {
          if (interrupted) throw new Error("backup interrupted")
          return allPages
        }
      })
      .then(
        ({ totalPages }) => resume(Effect.succeed({ pages: totalPages })),
        (e: unknown) => resume(Effect.fail(toStorageError(e)))
      )
    return Effect.promise(() => {
      interrupted = true
      return settled
    })
  })

/**
 * Copy the database at `source.filename` to the new file `destination`; fails with StorageError,
 * leaving no file at `destination`, when the copy fails or is interrupted.
 */
export const run = (source: Source, destination: string): Effect.Effect<Result, StorageError.StorageError> =>
  Effect.acquireUseRelease(
    attempt(() => openSource(source)),
    (db) =>
      Effect.acquireUseRelease(
        attempt(() => createDestination(destination)),
        (path) => copy(db, path),
        (path, exit) =>
          Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => rmSync(path, { force: true }))
      ),
    (db) => Effect.sync(() => db.close())
  )

/**
 * The WAL file of an open database flushed to disk on libuv's thread pool (`fs.fdatasync`), for
 * the writer's group commits (writer.ts): what synchronous=FULL does at each commit on the
 * committing thread, done without holding up the event loop.
 */
import { closeSync, fdatasync, openSync } from "node:fs"
import type BetterSqlite3 from "better-sqlite3"
import { isFile } from "./database.js"
import type { WalSync } from "./writer.js"

/**
 * The WAL flush of `db` opened from `filename`, or null when commits must keep flushing on the
 * spot: a database that is not a file, not in WAL mode, or not opened with synchronous=FULL.
 * The WAL file is opened on the first flush (it exists once a transaction committed) and closed
 * once the writer closed and no flush is pending.
 */
export const open = (db: BetterSqlite3.Database, filename: string): WalSync | null => {
  if (!isFile(filename)) return null
  if (db.pragma("journal_mode", { simple: true }) !== "wal") return null
  // FULL is 2 (NORMAL 1): only FULL flushes at each commit, which this takes over
  if (db.pragma("synchronous", { simple: true }) !== 2) return null
  const path = `${filename}-wal`
  let fd: number | null = null
  let pending = 0
  let closing = false
  const release = () => {
    if (fd !== null) closeSync(fd)
    fd = null
  }
  return {
    flush: (done) => {
      try {
        fd ??= openSync(path, "r")
      } catch (e) {
        done(e instanceof Error ? e : new Error(String(e)))
        return
      }
      pending++
      fdatasync(fd, (error) => {
        pending--
        if (closing && pending === 0) release()
        done(error)
      })
    },
    close: () => {
      closing = true
      if (pending === 0) release()
    }
  }
}

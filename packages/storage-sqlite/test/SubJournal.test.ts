/**
 * A group commit runs each write in a savepoint of its transaction, and SQLite keeps the pages a
 * savepoint may have to undo in a sub-journal. The store's connection keeps it in memory
 * (`temp_store = MEMORY`); otherwise, past 64 KiB, SQLite moves it into a temporary file and
 * writes every page there too (two writes a page). Seen by the files the process holds open
 * (Linux's /proc/self/fd) while the transaction is open: SQLite names its temporary files
 * `etilqs_…` and unlinks them at once, but the descriptor stays until the transaction ends.
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import BetterSqlite3 from "better-sqlite3"
import { afterAll, assert, describe, it } from "vitest"
import { openSync } from "../src/internal/database.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-subjournal-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The temporary files of SQLite this process holds open. */
const temporaryFiles = (): Array<string> =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      return target.includes("etilqs_") ? [target] : []
    } catch {
      return [] // closed since it was listed
    }
  })

/**
 * A group commit's shape: one transaction, each of 40 writes in a savepoint of its own, each
 * inserting 60 rows with random keys (about 90 KB of pages a savepoint); the temporary files
 * SQLite held open before the commit.
 */
const groupCommit = (db: BetterSqlite3.Database): Array<string> => {
  db.exec("CREATE TABLE IF NOT EXISTS sub_journal_probe (k TEXT PRIMARY KEY, v TEXT)")
  const insert = db.prepare("INSERT INTO sub_journal_probe (k, v) VALUES (?, ?)")
  db.exec("BEGIN IMMEDIATE")
  try {
    for (let write = 0; write < 40; write++) {
      db.exec("SAVEPOINT write")
      for (let row = 0; row < 60; row++) insert.run(`${Math.random()}`, "v".repeat(1500))
      db.exec("RELEASE write")
    }
    return temporaryFiles()
  } finally {
    db.exec("COMMIT")
  }
}

describe.runIf(existsSync("/proc/self/fd"))("the savepoints of a group commit", () => {
  it("a connection with SQLite's defaults moves their sub-journal into a temporary file (the probe sees it)", () => {
    const db = new BetterSqlite3(join(dir, "defaults.sqlite"))
    try {
      db.pragma("journal_mode = WAL")
      assert.isNotEmpty(groupCommit(db))
    } finally {
      db.close()
    }
  })

  it("the store's connection keeps it in memory: no temporary file is written", () => {
    const { db } = openSync({ filename: join(dir, "store.sqlite") })
    try {
      assert.deepStrictEqual(groupCommit(db), [])
    } finally {
      db.close()
    }
  })
})

/**
 * The group commit's flush to disk off the event loop (internal/writer.ts with internal/walSync.ts):
 * a write resumes only once the WAL frames of its commit are flushed, and never before; each
 * interleaving is pinned by a flush that completes when the test says so.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { StorageError } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Exit, Fiber } from "effect"
import { afterAll } from "vitest"
import { openSync } from "../src/internal/database.js"
import * as WalSync from "../src/internal/walSync.js"
import * as Writer from "../src/internal/writer.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-walsync-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `db-${files++}.sqlite`)

/** A flush that completes only when `complete` is called; `calls` counts the flushes asked for. */
const heldFlush = () => {
  const waiting: Array<(error: Error | null) => void> = []
  const wal: Writer.WalSync = { flush: (done) => void waiting.push(done), close: () => {} }
  return {
    wal,
    calls: () => waiting.length,
    complete: (error: Error | null = null) => {
      for (const done of waiting.splice(0)) done(error)
    }
  }
}

/** The forked writes have run up to their enqueueing (forked fibers start on the next yield). */
const started = Effect.yieldNow()
/** Then one turn of the event loop: the group commit they scheduled (setImmediate) has run before this. */
const turn = Effect.zipRight(
  started,
  Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
)

const withDb = <A, E>(f: (db: BetterSqlite3.Database) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const { db } = openSync({ filename: freshFile() })
      db.exec("CREATE TABLE t (v TEXT NOT NULL)")
      return db
    }),
    f,
    (db) => Effect.sync(() => db.close())
  )

const insert = (db: BetterSqlite3.Database, v: string) => () =>
  db.prepare("INSERT INTO t VALUES (?)").run(v).changes
const rows = (db: BetterSqlite3.Database) => db.prepare("SELECT count(*) FROM t").pluck().get() as number

describe("group commit with the WAL flushed off the event loop", () => {
  it.effect("a write resumes only once the flush of its commit is done, not when it committed", () =>
    withDb((db) =>
      Effect.gen(function* () {
        const held = heldFlush()
        const writer = Writer.make(db, () => {}, held.wal)
        const fiber = yield* Effect.fork(writer.write(insert(db, "a")))
        yield* turn
        // Committed (visible, synchronous=FULL back on the connection), flush asked, nobody answered
        assert.strictEqual(rows(db), 1)
        assert.strictEqual(db.pragma("synchronous", { simple: true }), 2)
        assert.strictEqual(held.calls(), 1)
        assert.isTrue((yield* Fiber.poll(fiber))._tag === "None")
        held.complete()
        assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.succeed(1))
      })
    )
  )

  it.effect("a failed flush fails every write of its group with StorageError", () =>
    withDb((db) =>
      Effect.gen(function* () {
        const held = heldFlush()
        const writer = Writer.make(db, () => {}, held.wal)
        const fibers = yield* Effect.forEach(["a", "b"], (v) => Effect.fork(writer.write(insert(db, v))))
        yield* turn
        assert.strictEqual(held.calls(), 1)
        held.complete(new Error("EIO: i/o error, fdatasync"))
        for (const fiber of fibers) {
          const failed = yield* Effect.flip(Fiber.join(fiber))
          assert.instanceOf(failed, StorageError.StorageError)
        }
      })
    )
  )

  it.effect("a group whose every write was refused commits nothing and answers without a flush", () =>
    withDb((db) =>
      Effect.gen(function* () {
        const held = heldFlush()
        const writer = Writer.make(db, () => {}, held.wal)
        const refused = yield* Effect.fork(writer.write<never, string>(() => Writer.refuse("taken")))
        yield* turn
        assert.strictEqual(held.calls(), 0)
        assert.strictEqual(yield* Effect.flip(Fiber.join(refused)), "taken")
      })
    )
  )

  it.effect("closing commits what is queued on the spot, flushed by the commit itself", () =>
    withDb((db) =>
      Effect.gen(function* () {
        const held = heldFlush()
        const writer = Writer.make(db, () => {}, held.wal)
        const fiber = yield* Effect.fork(writer.write(insert(db, "last")))
        yield* started
        writer.close()
        assert.strictEqual(held.calls(), 0)
        assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.succeed(1))
        assert.strictEqual(rows(db), 1)
      })
    )
  )

  it.effect("the real flush fdatasyncs the database's WAL file and then answers", () =>
    withDb((db) =>
      Effect.gen(function* () {
        const wal = WalSync.open(db, db.name)
        assert.isNotNull(wal)
        const writer = Writer.make(db, () => {}, wal)
        assert.strictEqual(yield* writer.write(insert(db, "a")), 1)
        writer.close()
        assert.strictEqual(rows(db), 1)
      })
    )
  )

  it("is not used where a commit must flush on the spot: in memory, or with synchronous=NORMAL", () => {
    const memory = openSync({ filename: ":memory:" }).db
    const normal = openSync({ filename: freshFile(), synchronous: "NORMAL" }).db
    try {
      assert.isNull(WalSync.open(memory, ":memory:"))
      assert.isNull(WalSync.open(normal, normal.name))
    } finally {
      memory.close()
      normal.close()
    }
  })
})

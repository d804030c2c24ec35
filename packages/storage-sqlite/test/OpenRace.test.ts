/**
 * Opening a database another process holds the write lock of (its migration, or its switch to
 * WAL, when servers start together on one new file): opening waits for it, past the busy timeout
 * of one statement, instead of failing the start.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { assert, it } from "@effect/vitest"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Either } from "effect"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "latchkey-open-race-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const driver = createRequire(import.meta.url).resolve("better-sqlite3")

/**
 * A thread that opens `filename`, takes the write lock (`BEGIN IMMEDIATE`) and holds it until
 * `release` is called, or for `holdMs` when given; `locked` resolves once it holds it.
 */
const lockHolder = (filename: string, holdMs?: number) => {
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(
    `const { workerData, parentPort } = require("node:worker_threads")
     const Database = require(workerData.driver)
     const db = new Database(workerData.filename)
     db.pragma("journal_mode = WAL")
     db.exec("BEGIN IMMEDIATE")
     parentPort.postMessage("locked")
     // held until released or for holdMs
     Atomics.wait(workerData.signal, 0, 0, workerData.holdMs ?? 60000)
     db.exec("COMMIT")
     db.close()`,
    { eval: true, workerData: { driver, filename, signal, holdMs } }
  )
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
  return {
    locked: new Promise<void>((resolve) => worker.once("message", () => resolve())),
    release: () => {
      Atomics.store(signal, 0, 1)
      Atomics.notify(signal, 0)
      return exited
    },
    exited
  }
}

it.effect(
  "without time to retry, a write lock held past the busy timeout fails the open with StorageError",
  () =>
    Effect.gen(function* () {
      const filename = join(dir, "refused.sqlite")
      const holder = lockHolder(filename)
      yield* Effect.promise(() => holder.locked)
      const opened = yield* Effect.either(
        SqliteStorage.migrate({ filename, busyTimeoutMs: 20, openTimeoutMs: 0 })
      )
      yield* Effect.promise(() => holder.release())
      assert.isTrue(Either.isLeft(opened))
      if (Either.isLeft(opened)) assert.match(opened.left.message, /locked/)
    })
)

it.effect("opening waits for a write lock held past the busy timeout, then migrates", () =>
  Effect.gen(function* () {
    const filename = join(dir, "waited.sqlite")
    // Held for 300 ms, fifteen times the busy timeout of one statement
    const holder = lockHolder(filename, 300)
    yield* Effect.promise(() => holder.locked)
    const opened = yield* SqliteStorage.migrate({ filename, busyTimeoutMs: 20 })
    yield* Effect.promise(() => holder.exited)
    assert.deepStrictEqual(opened, { from: 0, to: SqliteStorage.schemaVersion })
  })
)

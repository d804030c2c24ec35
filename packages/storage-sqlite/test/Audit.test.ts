import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { type Audit, AuditStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Exit, Layer } from "effect"
import { afterAll } from "vitest"
import { openSync } from "../src/internal/database.js"

const dir = mkdtempSync(join(tmpdir(), "latchkey-audit-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const event = (i: number, appKey: string | null): Audit.AuditEvent => ({
  at: 1000 + i,
  type: "token_issued",
  appKey,
  userId: null,
  openId: `o-${i}`,
  address: "127.0.0.1",
  requestId: `r-${i}`,
  detail: "client_credentials",
  actor: null
})

it.effect("audit events are appended and the newest come back oldest first, per application if asked", () =>
  Effect.gen(function* () {
    const audit = yield* AuditStore.AuditStore
    for (let i = 0; i < 5; i++) yield* audit.append(event(i, i % 2 === 0 ? "app-a" : "app-b"))
    const last3 = yield* audit.tail({ limit: 3 })
    assert.deepStrictEqual(
      last3.map((e) => e.requestId),
      ["r-2", "r-3", "r-4"]
    )
    const onlyA = yield* audit.tail({ limit: 10, appKey: "app-a" })
    assert.deepStrictEqual(
      onlyA.map((e) => e.requestId),
      ["r-0", "r-2", "r-4"]
    )
    assert.deepStrictEqual(last3[0], event(2, "app-a"))
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

const day = 86_400
// The database counts the retention on its own clock, the wall clock: events are placed days
// away from its bounds, so the second a test runs in does not matter.
const nowSeconds = () => Math.floor(Date.now() / 1000)
const eventAt = (at: number, requestId: string): Audit.AuditEvent => ({ ...event(0, "app-a"), at, requestId })

const appendAll = (filename: string, events: ReadonlyArray<Audit.AuditEvent>, auditRetentionDays?: number) =>
  Effect.runPromise(
    Effect.flatMap(AuditStore.AuditStore, (a) => Effect.forEach(events, (e) => a.append(e))).pipe(
      Effect.provide(
        SqliteStorage.layer({
          filename,
          ...(auditRetentionDays !== undefined ? { auditRetentionDays } : {})
        })
      )
    )
  )

/** Open the file with a layer (which writes the retention), then close it. */
const openWith = (filename: string, auditRetentionDays: number) =>
  Effect.runPromise(Effect.scoped(Layer.build(SqliteStorage.layer({ filename, auditRetentionDays }))))

const requestIds = (db: BetterSqlite3.Database): Array<string> =>
  db.prepare("SELECT request_id FROM audit_events ORDER BY id").pluck().all() as Array<string>

it("the audit table refuses updates, and deletes of events inside the retention, to any connection", async () => {
  const filename = join(dir, "audit.sqlite")
  const now = nowSeconds()
  await appendAll(filename, [eventAt(now - 89 * day, "inside"), eventAt(now - 91 * day, "outside")])
  const db = new BetterSqlite3(filename)
  try {
    assert.strictEqual(db.prepare("SELECT seconds FROM audit_retention").pluck().get(), 90 * day)
    assert.throws(() => db.prepare("UPDATE audit_events SET detail = 'x'").run(), /append-only/)
    assert.throws(
      () => db.prepare("UPDATE audit_events SET detail = 'x' WHERE request_id = 'outside'").run(),
      /append-only/
    )
    // One event inside the retention aborts the whole statement.
    assert.throws(() => db.prepare("DELETE FROM audit_events").run(), /append-only/)
    assert.throws(
      () => db.prepare("DELETE FROM audit_events WHERE request_id = 'inside'").run(),
      /append-only/
    )
    assert.deepStrictEqual(requestIds(db), ["inside", "outside"])
    assert.strictEqual(db.prepare("DELETE FROM audit_events WHERE request_id = 'outside'").run().changes, 1)
    assert.deepStrictEqual(requestIds(db), ["inside"])
    // The retention row holds 1 to 3650 days; without it nothing can be deleted.
    for (const seconds of [0, day - 1, 3651 * day, null]) {
      assert.throws(() => db.prepare("UPDATE audit_retention SET seconds = ?").run(seconds), /constraint/i)
    }
    assert.throws(() => db.prepare("INSERT INTO audit_retention VALUES (2, 86400)").run(), /constraint/i)
    db.prepare("INSERT INTO audit_events (at, type, request_id) VALUES (0, 'token_issued', 'epoch')").run()
    db.prepare("DELETE FROM audit_retention").run()
    assert.throws(
      () => db.prepare("DELETE FROM audit_events WHERE request_id = 'epoch'").run(),
      /append-only/
    )
    assert.deepStrictEqual(requestIds(db), ["inside", "epoch"])
  } finally {
    db.close()
  }
})

it("the retention is what the last layer opened with: longer keeps more, shorter lets more go", async () => {
  const filename = join(dir, "retention.sqlite")
  const now = nowSeconds()
  await appendAll(
    filename,
    [eventAt(now - 40 * day, "40d"), eventAt(now - 20 * day, "20d"), eventAt(now - 5 * day, "5d")],
    30
  )
  const db = new BetterSqlite3(filename)
  const remove = (requestId: string) =>
    db.prepare("DELETE FROM audit_events WHERE request_id = ?").run(requestId).changes
  try {
    assert.strictEqual(db.prepare("SELECT seconds FROM audit_retention").pluck().get(), 30 * day)
    await openWith(filename, 60)
    assert.strictEqual(db.prepare("SELECT seconds FROM audit_retention").pluck().get(), 60 * day)
    assert.throws(() => remove("40d"), /append-only/)
    await openWith(filename, 30)
    assert.strictEqual(remove("40d"), 1)
    assert.throws(() => remove("20d"), /append-only/)
    await openWith(filename, 10)
    assert.strictEqual(remove("20d"), 1)
    assert.throws(() => remove("5d"), /append-only/)
    await openWith(filename, 1)
    assert.strictEqual(remove("5d"), 1)
    assert.deepStrictEqual(requestIds(db), [])
  } finally {
    db.close()
  }
})

it.effect(
  "purgeBefore deletes the oldest events outside the retention, bounded, and refuses a cutoff inside it",
  () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const now = nowSeconds()
      for (const [id, days] of [
        ["95d", 95],
        ["100d", 100],
        ["91d", 91],
        ["89d", 89],
        ["1d", 1]
      ] as const) {
        yield* audit.append(eventAt(now - days * day, id))
      }
      const left = () => Effect.map(audit.tail({ limit: 100 }), (events) => events.map((e) => e.requestId))
      for (const cutoff of [now - 89 * day, now, now + day, Number.POSITIVE_INFINITY, Number.NaN]) {
        const refused = yield* Effect.flip(audit.purgeBefore(cutoff, 100))
        assert.strictEqual(refused._tag, "StorageError")
        assert.match(refused.message, /inside the retention \(90 days\)/)
      }
      assert.deepStrictEqual(yield* left(), ["95d", "100d", "91d", "89d", "1d"])
      assert.strictEqual(yield* audit.purgeBefore(now - 90 * day, 2), 2)
      assert.deepStrictEqual(yield* left(), ["91d", "89d", "1d"])
      assert.strictEqual(yield* audit.purgeBefore(now - 90 * day, 2), 1)
      assert.strictEqual(yield* audit.purgeBefore(now - 90 * day, 2), 0)
      assert.deepStrictEqual(yield* left(), ["89d", "1d"])
    }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

it.live("a refused purge in a group commit undoes only itself: the appends committed with it stay", () =>
  Effect.gen(function* () {
    const audit = yield* AuditStore.AuditStore
    const now = nowSeconds()
    yield* audit.append(eventAt(now - 200 * day, "old"))
    const exits = yield* Effect.all(
      [
        ...Array.from({ length: 5 }, (_, i) => Effect.exit(audit.append(eventAt(now, `a${i}`)))),
        Effect.exit(audit.purgeBefore(now, 100)),
        Effect.exit(audit.purgeBefore(now - 100 * day, 100))
      ],
      { concurrency: "unbounded" }
    )
    assert.deepStrictEqual(
      exits.map((e) => e._tag),
      ["Success", "Success", "Success", "Success", "Success", "Failure", "Success"]
    )
    assert.deepStrictEqual(exits[6], Exit.succeed(1))
    assert.deepStrictEqual(
      (yield* audit.tail({ limit: 100 })).map((e) => e.requestId),
      ["a0", "a1", "a2", "a3", "a4"]
    )
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

it("the purge reads audit_events_by_at, oldest first", () => {
  const { db } = openSync({ filename: ":memory:" })
  try {
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < ? ORDER BY at, id LIMIT ?)"
      )
      .all(1, 1) as Array<{ detail: string }>
    const details = plan.map((row) => row.detail).join("\n")
    assert.match(details, /USING (COVERING )?INDEX audit_events_by_at/)
    assert.notMatch(details, /TEMP B-TREE/)
  } finally {
    db.close()
  }
})

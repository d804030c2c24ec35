import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { type Audit, AuditStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import { afterAll } from "vitest"

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
  detail: "client_credentials"
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

it("the audit table refuses updates and deletes (append-only)", async () => {
  const filename = join(dir, "audit.sqlite")
  await Effect.runPromise(
    Effect.flatMap(AuditStore.AuditStore, (a) => a.append(event(1, "app-a"))).pipe(
      Effect.provide(SqliteStorage.layer({ filename }))
    )
  )
  const db = new BetterSqlite3(filename)
  try {
    assert.throws(() => db.prepare("UPDATE audit_events SET detail = 'x'").run(), /append-only/)
    assert.throws(() => db.prepare("DELETE FROM audit_events").run(), /append-only/)
    assert.strictEqual(db.prepare("SELECT count(*) FROM audit_events").pluck().get(), 1)
  } finally {
    db.close()
  }
})

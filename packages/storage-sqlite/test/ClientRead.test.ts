/**
 * `ApplicationStore.findForClient` on SQLite: the application and the throttle entries of the
 * keys in one statement, counted on better-sqlite3's statements (never timed).
 */
import { assert, it } from "@effect/vitest"
import { ApplicationStore, Throttle } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Option } from "effect"
import { afterAll } from "vitest"

// Every statement that reads one row runs through this prototype's `get`
const probe = new BetterSqlite3(":memory:")
const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as {
  get: (this: BetterSqlite3.Statement, ...params: Array<unknown>) => unknown
}
const get = statement.get
afterAll(() => {
  statement.get = get
  probe.close()
})

/** How many statements `effect` read a row with. */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const count = { reads: 0 }
      statement.get = function (this: BetterSqlite3.Statement, ...params: Array<unknown>) {
        count.reads++
        return get.apply(this, params)
      }
      return count
    }),
    (count) => Effect.map(effect, (value) => ({ value, reads: count.reads })),
    () =>
      Effect.sync(() => {
        statement.get = get
      })
  )

const policy = Throttle.defaultPolicy
const keys: ReadonlyArray<Throttle.Key> = [
  { key: "client:app:127.0.0.1", kind: "identifier" },
  { key: "address:127.0.0.1", kind: "shared" }
]

it.effect("findForClient reads the application and every key's throttle entry in one statement", () =>
  Effect.gen(function* () {
    const apps = yield* ApplicationStore.ApplicationStore
    const throttle = yield* Throttle.ThrottleStore
    const counters = throttle.counters as object
    const app = Fixtures.application()
    yield* apps.insert(app)
    const none = yield* counted(apps.findForClient!(app.appKey, keys, counters))
    assert.strictEqual(none.reads, 1)
    assert.deepStrictEqual(none.value, { app: Option.some(app), entries: [undefined, undefined] })
    yield* throttle.fail(keys, 1000, policy)
    const failed = yield* counted(apps.findForClient!(app.appKey, keys, counters))
    assert.strictEqual(failed.reads, 1)
    assert.deepStrictEqual(failed.value.entries, [
      { failures: 1, lastFailure: 1000, lockedUntil: 0 },
      { failures: 1, lastFailure: 1000, lockedUntil: 0 }
    ])
    assert.deepStrictEqual(failed.value.app, Option.some(app))
    const unknown = yield* counted(apps.findForClient!(Fixtures.id("no-such-app"), keys.slice(1), counters))
    assert.strictEqual(unknown.reads, 1)
    assert.deepStrictEqual(unknown.value, {
      app: Option.none(),
      entries: [{ failures: 1, lastFailure: 1000, lockedUntil: 0 }]
    })
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

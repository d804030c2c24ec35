/**
 * Audit events attached to a write (`appendWith`) are stored by that write alone: events attached
 * to a whole unit are stored once, with it; events of an effect that ended without writing, or
 * that failed before writing inside a unit, are dropped, not stored by the fiber's next write.
 */
import { assert, it } from "@effect/vitest"
import { AuditStore, SessionStore, Transaction } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import { Data, Effect, Option } from "effect"

class Abandoned extends Data.TaggedError("Abandoned")<object> {}

const auditEvent = (appKey: string, detail: string) => Fixtures.auditEvent(appKey, detail)
const detailsOf = Fixtures.auditDetails

const storage = SqliteStorage.layer({ filename: ":memory:" })

it.effect(
  "events attached to an effect that ended without writing are not stored by the fiber's next write",
  () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const sessions = yield* SessionStore.SessionStore
      const appKey = Fixtures.id("app")
      yield* audit.appendWith([auditEvent(appKey, "nothing written")], Effect.void)
      yield* sessions.save(Fixtures.session())
      assert.deepStrictEqual(yield* detailsOf(appKey), [])
    }).pipe(Effect.provide(storage))
)

it.effect("events attached to a whole unit are stored once, however many writes the unit makes", () =>
  Effect.gen(function* () {
    const audit = yield* AuditStore.AuditStore
    const sessions = yield* SessionStore.SessionStore
    const appKey = Fixtures.id("app")
    yield* audit.appendWith(
      [auditEvent(appKey, "unit")],
      Transaction.atomically(
        Effect.zipRight(sessions.save(Fixtures.session()), sessions.save(Fixtures.session()))
      )
    )
    assert.deepStrictEqual(yield* detailsOf(appKey), ["unit"])
  }).pipe(Effect.provide(storage))
)

it.effect(
  "in a unit, events attached to a write that failed before writing are not stored by its next write",
  () =>
    Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const sessions = yield* SessionStore.SessionStore
      const appKey = Fixtures.id("app")
      const session = Fixtures.session()
      yield* Transaction.atomically(
        Effect.zipRight(
          Effect.flip(audit.appendWith([auditEvent(appKey, "not written")], Effect.fail(new Abandoned()))),
          sessions.save(session)
        )
      )
      assert.isTrue(Option.isSome(yield* sessions.find(session.idHash, Fixtures.baseTime)))
      assert.deepStrictEqual(yield* detailsOf(appKey), [])
    }).pipe(Effect.provide(storage))
)

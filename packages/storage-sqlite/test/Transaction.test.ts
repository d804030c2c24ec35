/**
 * The SQLite `Transaction`: a unit runs synchronously inside one job of the group commit, so a
 * unit that would wait (for a timer, a promise) cannot run there; it fails and stores nothing.
 * The audit log line of an event recorded in a unit is written once the unit committed.
 */
import { assert, it } from "@effect/vitest"
import { Audit, AuditStore, SessionStore, StorageError, Transaction } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import { Data, Effect, Either, HashMap, Layer, Logger, Option } from "effect"

class Abandoned extends Data.TaggedError("Abandoned")<object> {}

it.effect("a unit that waits fails with StorageError, and none of its writes is stored", () =>
  Effect.gen(function* () {
    const sessions = yield* SessionStore.SessionStore
    const session = Fixtures.session()
    const failed = yield* Effect.either(
      Transaction.atomically(
        Effect.zipRight(
          sessions.save(session),
          Effect.promise(() => Promise.resolve())
        )
      )
    )
    assert.isTrue(Either.isLeft(failed) && failed.left instanceof StorageError.StorageError)
    assert.isTrue(Option.isNone(yield* sessions.find(session.idHash, Fixtures.baseTime)))
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: ":memory:" })))
)

it.effect(
  "an audit event recorded in a unit is logged once the unit committed, never when it rolled back",
  () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message, annotations }) => {
          const event = Option.getOrUndefined(HashMap.get(annotations, "audit")) as
            | Audit.AuditEvent
            | undefined
          lines.push(`${String(message)}:${event?.detail ?? ""}`)
        })
      )
      const record = (detail: string) => Audit.record("signin_failed", { detail })
      yield* Effect.either(
        Transaction.atomically(Effect.zipRight(record("rolled back"), Effect.fail(new Abandoned())))
      ).pipe(Effect.provide(logger))
      const logged = yield* Transaction.atomically(
        Effect.zipRight(
          record("committed"),
          Effect.sync(() => lines.length)
        )
      ).pipe(Effect.provide(logger))
      assert.strictEqual(logged, 0, "nothing logged inside the unit")
      assert.deepStrictEqual(lines, ["audit:committed"])
      const stored = yield* Effect.flatMap(AuditStore.AuditStore, (a) => a.tail({ limit: 10 }))
      assert.deepStrictEqual(
        stored.map((e) => e.detail),
        ["committed"]
      )
    }).pipe(Effect.provide(Layer.provideMerge(Audit.layer, SqliteStorage.layer({ filename: ":memory:" }))))
)

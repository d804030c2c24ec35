/**
 * The SQLite `Transaction`: a unit runs synchronously inside one job of the group commit, so a
 * unit that would wait (for a timer, a promise) cannot run there; it fails and stores nothing.
 */
import { assert, it } from "@effect/vitest"
import { SessionStore, StorageError, Transaction } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import { Effect, Either, Option } from "effect"

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

/**
 * The transaction part of the storage contract, for an adapter that provides the core's
 * `Transaction`: a unit of store calls commits all of its writes or none, a write it refuses and
 * catches undoes only itself, and a pending request taken inside units is still taken once.
 */
import { assert, layer as sharedLayer, type Vitest } from "@effect/vitest"
import { CodeStore, PasskeyStore, type Stores, Transaction } from "@latchkey/core"
import { Data, Effect, Either, type Layer } from "effect"
import * as F from "./Fixtures.js"
import { isPending, Sessions, stored } from "./internal/sessions.js"

class Abandoned extends Data.TaggedError("Abandoned")<object> {}

/** A passkey's recorded use belongs to the unit it is written in, as a session does. */
const passkeyUseCase = (it: Vitest.MethodsNonLive<Stores.Stores | Transaction.Transaction>): void => {
  it.effect(
    "transaction: a passkey's recorded use and a session written in a unit that fails are both undone",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const passkeys = yield* PasskeyStore.PasskeyStore
        const passkey = F.passkey(F.id("user"), { counter: 2 })
        yield* passkeys.insert(passkey)
        const session = F.signedInSession({ userId: passkey.userId, method: "passkey" })
        const use = { expected: 2, counter: 3, backedUp: true, at: F.baseTime + 1 }
        const failed = yield* Effect.either(
          Transaction.atomically(
            Effect.zipRight(
              Effect.zipRight(passkeys.recordUse(passkey.credentialId, use), sessions.save(session)),
              Effect.fail(new Abandoned())
            )
          )
        )
        assert.isTrue(Either.isLeft(failed), "the unit's own failure")
        assert.deepStrictEqual(yield* stored([session]), [false])
        const kept = yield* passkeys.find(passkey.credentialId)
        assert.deepStrictEqual(kept._tag === "Some" ? kept.value : null, passkey)
        // The same unit, succeeding: both stored
        yield* Transaction.atomically(
          Effect.zipRight(passkeys.recordUse(passkey.credentialId, use), sessions.save(session))
        )
        assert.deepStrictEqual(yield* stored([session]), [true])
        const moved = yield* passkeys.find(passkey.credentialId)
        assert.strictEqual(moved._tag === "Some" ? moved.value.counter : null, 3)
      })
  )
}

/**
 * Register a `describe` block named `name` that runs the transaction contract against `layer`,
 * which provides the stores of one adapter and its `Transaction`.
 */
export const transactionContract = (
  name: string,
  layer: Layer.Layer<Stores.Stores | Transaction.Transaction, unknown>
): void =>
  sharedLayer(layer, { timeout: "60 seconds" })(`transaction contract: ${name}`, (it) => {
    it.effect("transaction: a unit's writes are all stored once it succeeds", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const session = F.session()
        const pending = F.pending({ sessionHash: session.idHash })
        yield* Transaction.atomically(Effect.zipRight(sessions.addPending(pending), sessions.save(session)))
        assert.deepStrictEqual(yield* stored([session]), [true])
        assert.isTrue(yield* isPending(pending))
      })
    )

    it.effect("transaction: a unit that fails after its writes stores none of them", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const session = F.session()
        const pending = F.pending({ sessionHash: session.idHash })
        const failed = yield* Effect.either(
          Transaction.atomically(
            Effect.zipRight(
              Effect.zipRight(sessions.addPending(pending), sessions.save(session)),
              Effect.fail(new Abandoned())
            )
          )
        )
        assert.isTrue(Either.isLeft(failed) && failed.left._tag === "Abandoned", "the unit's own failure")
        assert.deepStrictEqual(yield* stored([session]), [false])
        assert.isFalse(yield* isPending(pending))
      })
    )

    passkeyUseCase(it)

    it.effect("transaction: a write the unit refuses and catches undoes only itself", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const codes = yield* CodeStore.CodeStore
        const session = F.session()
        const used = F.code({ usedAt: F.baseTime })
        yield* codes.insert(used)
        const refused = yield* Transaction.atomically(
          Effect.gen(function* () {
            yield* sessions.save(session)
            return yield* Effect.either(codes.redeem(used.codeHash, F.baseTime, []))
          })
        )
        assert.isTrue(Either.isLeft(refused) && refused.left._tag === "CodeAlreadyUsed", "the redeem refused")
        assert.deepStrictEqual(yield* stored([session]), [true], "the unit's other write stored")
      })
    )

    it.effect("transaction: of two units taking one pending request at once, exactly one takes it", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const session = F.session()
        const pending = F.pending({ sessionHash: session.idHash })
        yield* sessions.save(session)
        yield* sessions.addPending(pending)
        const take = Transaction.atomically(
          Effect.zipLeft(sessions.takePending(pending.sessionHash, pending.txn), sessions.save(session))
        )
        const taken = yield* Effect.all([take, take], { concurrency: "unbounded" })
        assert.deepStrictEqual(taken.filter((t) => t).length, 1)
        assert.isFalse(yield* isPending(pending))
      })
    )
  })

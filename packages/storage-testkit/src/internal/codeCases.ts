/**
 * The authorization-code part of the storage contract: a code is redeemed at most once,
 * before its expiry, saving the tokens issued for it in the same write.
 */
import { assert, type Vitest } from "@effect/vitest"
import { CodeStore, type Stores } from "@latchkey/core"
import { Array as Arr, Effect, Exit, FastCheck, Option } from "effect"
import * as F from "../Fixtures.js"
import { findToken, isStored, some } from "./support.js"

const T = F.baseTime

/** Insert and find, and one redemption: once, not twice, not after expiry. */
const redemption = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("codes: insert then find returns the same record; unknown hashes are absent", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const c = F.code({
        codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        codeChallengeMethod: "S256"
      })
      yield* F.insertCode(c)
      assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c)
      const plain = F.code({ scope: F.scope("a", "b", "c") })
      yield* F.insertCode(plain)
      assert.deepStrictEqual(some(yield* codes.find(plain.codeHash), "code"), plain)
      assert.isTrue(Option.isNone(yield* codes.find(F.hash())))
    })
  )

  it.effect("codes: redeem succeeds once, marks the code used and saves the given tokens", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const c = F.code()
      yield* F.insertCode(c)
      const issued = F.pair({ familyId: c.familyId, appKey: c.appKey })
      yield* codes.redeem(c.codeHash, T + 10, issued)
      assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), { ...c, usedAt: T + 10 })
      for (const t of issued) assert.deepStrictEqual(yield* findToken(t), t)
    })
  )

  it.effect("codes: a second redeem fails with CodeAlreadyUsed { familyId } and writes nothing", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const c = F.code()
      yield* F.insertCode(c)
      yield* codes.redeem(c.codeHash, T + 10, F.pair({ familyId: c.familyId }))
      const again = F.pair({ familyId: c.familyId })
      const err = yield* Effect.flip(codes.redeem(c.codeHash, T + 11, again))
      assert.strictEqual(err._tag, "CodeAlreadyUsed")
      if (err._tag === "CodeAlreadyUsed") assert.strictEqual(err.familyId, c.familyId)
      for (const t of again) assert.isFalse(yield* isStored(t))
      assert.strictEqual(some(yield* codes.find(c.codeHash), "code").usedAt, T + 10)
      // The tombstone decides, not the clock: a used code stays "used" after its expiry.
      const late = yield* Effect.flip(codes.redeem(c.codeHash, c.expiresAt + 5, []))
      assert.strictEqual(late._tag, "CodeAlreadyUsed")
    })
  )

  it.effect("codes: an expired code fails with CodeNotFound, stays unused and writes nothing", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const c = F.code()
      yield* F.insertCode(c)
      const issued = F.pair({ familyId: c.familyId })
      for (const now of [c.expiresAt, c.expiresAt + 1]) {
        const err = yield* Effect.flip(codes.redeem(c.codeHash, now, issued))
        assert.strictEqual(err._tag, "CodeNotFound")
      }
      for (const t of issued) assert.isFalse(yield* isStored(t))
      assert.deepStrictEqual(some(yield* codes.find(c.codeHash), "code"), c)
      // One second earlier it is still redeemable.
      yield* codes.redeem(c.codeHash, c.expiresAt - 1, issued)
    })
  )
}

/** Unknown codes, and concurrent or arbitrary sequences of redemptions. */
const refusalsAndRaces = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("codes: an unknown code fails with CodeNotFound and writes nothing", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const issued = F.pair()
      const err = yield* Effect.flip(codes.redeem(F.hash(), T, issued))
      assert.strictEqual(err._tag, "CodeNotFound")
      for (const t of issued) assert.isFalse(yield* isStored(t))
    })
  )

  it.effect("codes: of 25 concurrent redeems exactly one succeeds and only its tokens are saved", () =>
    Effect.gen(function* () {
      const codes = yield* CodeStore.CodeStore
      const c = F.code()
      yield* F.insertCode(c)
      const attempts = Arr.makeBy(25, () => F.pair({ familyId: c.familyId }))
      const exits = yield* Effect.all(
        attempts.map((issued) => Effect.exit(codes.redeem(c.codeHash, T + 1, issued))),
        { concurrency: "unbounded" }
      )
      const winners = exits.flatMap((e, i) => (Exit.isSuccess(e) ? [i] : []))
      assert.strictEqual(winners.length, 1)
      for (const e of exits) {
        if (Exit.isFailure(e)) {
          const err = yield* Effect.flip(e)
          assert.strictEqual(err._tag, "CodeAlreadyUsed")
        }
      }
      for (const [i, issued] of attempts.entries()) {
        for (const t of issued) assert.strictEqual(yield* isStored(t), i === winners[0])
      }
    })
  )

  it.effect.prop(
    "codes: any sequence of redeem attempts gives at most one success, and only before expiry",
    { offsets: FastCheck.array(FastCheck.integer({ min: -5, max: 120 }), { minLength: 1, maxLength: 8 }) },
    ({ offsets }) =>
      Effect.gen(function* () {
        const codes = yield* CodeStore.CodeStore
        const c = F.code()
        yield* F.insertCode(c)
        let wins = 0
        let used = false
        for (const offset of offsets) {
          const now = T + offset
          const exit = yield* Effect.exit(codes.redeem(c.codeHash, now, [F.token({ familyId: c.familyId })]))
          if (Exit.isSuccess(exit)) {
            wins++
            used = true
            assert.isTrue(now < c.expiresAt)
          } else {
            const err = yield* Effect.flip(exit)
            assert.strictEqual(err._tag, used ? "CodeAlreadyUsed" : "CodeNotFound")
          }
        }
        assert.isAtMost(wins, 1)
      }),
    { fastCheck: { numRuns: 30 } }
  )
}

/** Register the authorization-code cases with the contract's `it`. */
export const codeCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  redemption(it)
  refusalsAndRaces(it)
}

/**
 * The second-factor part of the storage contract: enrolment pending until confirmed (a pending one
 * replaced, a confirmed one kept), each time step accepted once (also when two uses read the factor
 * before either writes, and when they run at once), recovery codes used once, and a reset or a
 * user's removal taking the factor and every recovery code with it.
 */
import { assert, type Vitest } from "@effect/vitest"
import { FactorStore, type Stores, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { some } from "./support.js"

const T = F.baseTime

const store = FactorStore.FactorStore

/** A confirmed factor of a fresh user at step 100, with recovery code digests `digests`. */
const confirmed = (digests: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const factors = yield* store
    const f = F.totpFactor()
    yield* factors.enrol(f)
    yield* factors.confirm(f.userId, f.sealedSecret, 100, digests, T + 1)
    return f
  })

/** Enrolment and confirmation. */
const enrolment = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "factors: enrol stores a pending factor; a second enrol replaces it; confirm needs the current secret",
    () =>
      Effect.gen(function* () {
        const factors = yield* store
        const first = F.totpFactor()
        const { userId } = first
        assert.isTrue(Option.isNone(yield* factors.find(userId)))
        yield* factors.enrol(first)
        assert.deepStrictEqual(some(yield* factors.find(userId), "factor"), first)
        const second = F.totpFactor({ userId, createdAt: T + 5 })
        yield* factors.enrol(second)
        assert.deepStrictEqual(some(yield* factors.find(userId), "factor"), second)
        const stale = yield* Effect.flip(factors.confirm(userId, first.sealedSecret, 7, [F.hash()], T + 6))
        assert.strictEqual(stale._tag, "NotPending")
        assert.strictEqual(yield* factors.recoveryCodesLeft(userId), 0, "a refused confirm stores no code")
        const digests = Array.from({ length: 10 }, F.hash)
        yield* factors.confirm(userId, second.sealedSecret, 7, digests, T + 6)
        assert.deepStrictEqual(some(yield* factors.find(userId), "factor"), {
          ...second,
          confirmedAt: T + 6,
          lastStep: 7
        })
        assert.strictEqual(yield* factors.recoveryCodesLeft(userId), 10)
        const again = yield* Effect.flip(factors.confirm(userId, second.sealedSecret, 8, [], T + 7))
        assert.strictEqual(again._tag, "NotPending", "a confirmed factor is not confirmed again")
      })
  )

  it.effect("factors: enrol over a confirmed factor fails with FactorActive and changes nothing", () =>
    Effect.gen(function* () {
      const factors = yield* store
      const f = yield* confirmed([F.hash()])
      const before = yield* factors.find(f.userId)
      const err = yield* Effect.flip(factors.enrol(F.totpFactor({ userId: f.userId })))
      assert.strictEqual(err._tag, "FactorActive")
      assert.deepStrictEqual(yield* factors.find(f.userId), before)
      assert.strictEqual(yield* factors.recoveryCodesLeft(f.userId), 1)
    })
  )
}

/** Each time step once. */
const steps = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "factors: useStep accepts a step after the last one once, and refuses it again, an earlier one, and a pending factor's",
    () =>
      Effect.gen(function* () {
        const factors = yield* store
        const pending = F.totpFactor()
        yield* factors.enrol(pending)
        assert.isFalse(yield* factors.useStep(pending.userId, 5), "a pending factor accepts no code")
        const f = yield* confirmed()
        assert.isFalse(yield* factors.useStep(f.userId, 100), "the confirming code's step is used")
        assert.isTrue(yield* factors.useStep(f.userId, 101))
        assert.isFalse(yield* factors.useStep(f.userId, 101), "a replayed step")
        assert.isFalse(yield* factors.useStep(f.userId, 100), "an earlier step")
        assert.isTrue(yield* factors.useStep(f.userId, 103))
        assert.strictEqual(some(yield* factors.find(f.userId), "factor").lastStep, 103)
        assert.isFalse(yield* factors.useStep(F.id("user"), 1), "no factor")
      })
  )

  it.effect(
    "factors: two uses of one step that both read the factor before either writes: exactly the first is accepted",
    () =>
      Effect.gen(function* () {
        const factors = yield* store
        const f = yield* confirmed()
        // Pinned: both checks read last_step 100 (the step looks unused to each), then both write
        const readA = some(yield* factors.find(f.userId), "factor")
        const readB = some(yield* factors.find(f.userId), "factor")
        assert.strictEqual(readA.lastStep, 100)
        assert.strictEqual(readB.lastStep, 100)
        assert.isTrue(yield* factors.useStep(f.userId, 101))
        assert.isFalse(yield* factors.useStep(f.userId, 101), "the stale read does not let the replay in")
      })
  )

  it.effect(
    "factors: uses of one step started together (each begun before any answered): exactly one is accepted",
    () =>
      Effect.gen(function* () {
        const factors = yield* store
        const f = yield* confirmed()
        const uses = yield* Effect.all(
          Array.from({ length: 4 }, () => factors.useStep(f.userId, 102)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(uses.filter((u) => u).length, 1)
        assert.strictEqual(some(yield* factors.find(f.userId), "factor").lastStep, 102)
      })
  )
}

/** Recovery codes, reset and removal. */
const recovery = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("factors: a recovery code is used once, and only by its user", () =>
    Effect.gen(function* () {
      const factors = yield* store
      const [a, b] = [F.hash(), F.hash()]
      const f = yield* confirmed([a, b])
      const other = yield* confirmed([F.hash()])
      const foreign = yield* Effect.flip(factors.useRecoveryCode(other.userId, a))
      assert.strictEqual(foreign._tag, "UnknownRecoveryCode")
      yield* factors.useRecoveryCode(f.userId, a)
      assert.strictEqual(yield* factors.recoveryCodesLeft(f.userId), 1)
      const again = yield* Effect.flip(factors.useRecoveryCode(f.userId, a))
      assert.strictEqual(again._tag, "UnknownRecoveryCode")
      const together = yield* Effect.all(
        [factors.useRecoveryCode(f.userId, b), factors.useRecoveryCode(f.userId, b)].map(Effect.either),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(together.filter((e) => e._tag === "Right").length, 1, "one of two at once")
      assert.strictEqual(yield* factors.recoveryCodesLeft(f.userId), 0)
      assert.strictEqual(yield* factors.recoveryCodesLeft(other.userId), 1)
    })
  )

  it.effect("factors: reset removes the factor and every recovery code; a fresh enrolment starts over", () =>
    Effect.gen(function* () {
      const factors = yield* store
      const f = yield* confirmed([F.hash(), F.hash()])
      const other = yield* confirmed([F.hash()])
      assert.isTrue(yield* factors.reset(f.userId))
      assert.isTrue(Option.isNone(yield* factors.find(f.userId)))
      assert.strictEqual(yield* factors.recoveryCodesLeft(f.userId), 0)
      assert.isFalse(yield* factors.reset(f.userId), "nothing left to reset")
      assert.isTrue(Option.isSome(yield* factors.find(other.userId)), "another user's factor stays")
      assert.strictEqual(yield* factors.recoveryCodesLeft(other.userId), 1)
      const fresh = F.totpFactor({ userId: f.userId })
      yield* factors.enrol(fresh)
      assert.deepStrictEqual(some(yield* factors.find(f.userId), "factor"), fresh)
      const pending = F.totpFactor()
      yield* factors.enrol(pending)
      assert.isTrue(yield* factors.reset(pending.userId), "a pending enrolment is reset too")
    })
  )

  it.effect("factors: removing a user removes their factor and recovery codes", () =>
    Effect.gen(function* () {
      const factors = yield* store
      const users = yield* UserStore.UserStore
      const u = F.user()
      yield* users.insert(u)
      const f = F.totpFactor({ userId: u.userId })
      yield* factors.enrol(f)
      yield* factors.confirm(u.userId, f.sealedSecret, 1, [F.hash()], T)
      assert.isTrue(yield* users.remove(u.userId, T + 1))
      assert.isTrue(Option.isNone(yield* factors.find(u.userId)))
      assert.strictEqual(yield* factors.recoveryCodesLeft(u.userId), 0)
    })
  )
}

/** The second-factor cases. */
/** New recovery codes for a confirmed factor. */
const replacement = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "factors: replaceRecoveryCodes swaps every code of a confirmed factor; without one it fails and writes nothing",
    () =>
      Effect.gen(function* () {
        const factors = yield* store
        const [old, next] = [F.hash(), F.hash()]
        const f = yield* confirmed([old, F.hash()])
        yield* factors.replaceRecoveryCodes(f.userId, [next])
        assert.strictEqual(yield* factors.recoveryCodesLeft(f.userId), 1)
        const gone = yield* Effect.flip(factors.useRecoveryCode(f.userId, old))
        assert.strictEqual(gone._tag, "UnknownRecoveryCode", "an old code is gone")
        yield* factors.useRecoveryCode(f.userId, next)
        const pending = F.totpFactor()
        yield* factors.enrol(pending)
        const refused = yield* Effect.flip(factors.replaceRecoveryCodes(pending.userId, [F.hash()]))
        assert.strictEqual(refused._tag, "NoFactor")
        assert.strictEqual(
          yield* factors.recoveryCodesLeft(pending.userId),
          0,
          "a pending factor gets no code"
        )
        const none = yield* Effect.flip(factors.replaceRecoveryCodes(F.totpFactor().userId, [F.hash()]))
        assert.strictEqual(none._tag, "NoFactor")
      })
  )
}

export const factorCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  enrolment(it)
  steps(it)
  recovery(it)
  replacement(it)
}

import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Layer, Option, Ref, TestClock } from "effect"
import { Config } from "../src/model/Config.js"
import * as Audit from "../src/security/Audit.js"
import * as SecondFactor from "../src/security/SecondFactor.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Totp from "../src/security/Totp.js"
import { unseal } from "../src/signing/Keys.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { FactorStore } from "../src/storage/FactorStore.js"
import * as Memory from "../src/storage/Memory.js"
import { newUser, TestLayer } from "./fixtures.js"

const Audited = () => Layer.mergeAll(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))

const T0 = 1_800_000_010_000

/** The code the app shows now for `secret` (base32), `steps` steps away. */
const appCode = (secret: string, steps = 0) =>
  Effect.gen(function* () {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    return yield* Totp.codeAt(Totp.fromBase32(secret) ?? new Uint8Array(), Totp.stepAt(now) + steps)
  })

/** A user with a confirmed authenticator app: the secret and the recovery codes. */
const enrolled = Effect.gen(function* () {
  yield* TestClock.setTime(T0)
  const { user } = yield* newUser()
  const { secret } = yield* SecondFactor.enrol(user.userId, user.username)
  const codes = yield* SecondFactor.confirm(user.userId, yield* appCode(secret))
  // the next step: the confirming code's step is used
  yield* TestClock.adjust("30 seconds")
  return { user, secret, codes }
})

const typesOf = (userId: string) =>
  Effect.map(
    Effect.flatMap(AuditStore, (a) => a.query({ limit: 100 })),
    // newest first
    (events) =>
      events
        .filter((e) => e.userId === userId)
        .map((e) => e.type)
        .reverse()
  )

describe("the authenticator app (TOTP) second factor", () => {
  it.effect(
    "enrol: a 160-bit base32 secret, its otpauth URI, stored sealed and pending until confirmed",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const { user } = yield* newUser("alice@example")
        const { secret, uri } = yield* SecondFactor.enrol(user.userId, user.username)
        assert.match(secret, /^[A-Z2-7]{32}$/)
        assert.strictEqual(Totp.fromBase32(secret)?.length, 20)
        assert.strictEqual(
          uri,
          `otpauth://totp/auth.example:alice%40example?secret=${secret}&issuer=auth.example&algorithm=SHA1&digits=6&period=30`
        )
        const stored = Option.getOrThrow(yield* Effect.flatMap(FactorStore, (s) => s.find(user.userId)))
        assert.notInclude(stored.sealedSecret, secret)
        const { serverKey } = yield* Config
        assert.strictEqual(
          yield* Effect.promise(() => unseal(serverKey, stored.sealedSecret, "totp secret")),
          secret
        )
        const other = yield* Effect.promise(() =>
          unseal(serverKey, stored.sealedSecret).then(
            () => "opened",
            () => "refused"
          )
        )
        assert.strictEqual(other, "refused", "sealed for its purpose: it does not open as a signing key")
        assert.strictEqual(stored.confirmedAt, null)
        assert.isFalse(yield* SecondFactor.required(user.userId), "a pending enrolment asks for nothing")
        assert.deepStrictEqual(yield* SecondFactor.status(user.userId), {
          state: "pending",
          recoveryCodesLeft: 0
        })
        assert.deepStrictEqual(yield* typesOf(user.userId), ["mfa_enrolled"])
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "confirm: a wrong code leaves it pending; a valid one confirms it and gives ten recovery codes once",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const { user } = yield* newUser()
        const { secret } = yield* SecondFactor.enrol(user.userId, user.username)
        const good = yield* appCode(secret)
        const bad = String((Number(good) + 1) % 1_000_000).padStart(6, "0")
        const wrong = yield* Effect.flip(SecondFactor.confirm(user.userId, bad))
        assert.strictEqual(wrong._tag, "WrongCode")
        assert.isFalse(yield* SecondFactor.required(user.userId))
        const codes = yield* SecondFactor.confirm(user.userId, good)
        assert.strictEqual(codes.length, 10)
        assert.strictEqual(new Set(codes).size, 10)
        for (const c of codes) assert.match(c, /^[A-Z2-7]{5}-[A-Z2-7]{5}$/)
        assert.isTrue(yield* SecondFactor.required(user.userId))
        assert.deepStrictEqual(yield* SecondFactor.status(user.userId), {
          state: "confirmed",
          recoveryCodesLeft: 10
        })
        const again = yield* Effect.flip(SecondFactor.confirm(user.userId, good))
        assert.strictEqual(again._tag, "NoPendingFactor")
        const over = yield* Effect.flip(SecondFactor.enrol(user.userId, user.username))
        assert.strictEqual(over._tag, "FactorActive", "a confirmed factor is reset by an operator first")
        assert.deepStrictEqual(yield* typesOf(user.userId), ["mfa_enrolled", "mfa_confirmed"])
        const trail = JSON.stringify(yield* Effect.flatMap(AuditStore, (a) => a.query({ limit: 100 })))
        for (const secretValue of [secret, ...codes])
          assert.notInclude(trail, secretValue, "no secret, code or recovery code in the audit trail")
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "verify: codes of steps -1, 0, +1 are accepted, each step once; an earlier step and ±2 steps are refused",
    () =>
      Effect.gen(function* () {
        const { user, secret } = yield* enrolled
        const confirming = yield* Effect.flip(SecondFactor.verify(user.userId, yield* appCode(secret, -1)))
        assert.strictEqual(confirming._tag, "WrongCode", "the confirming code's step is used")
        const current = yield* appCode(secret, 0)
        const s0 = yield* SecondFactor.verify(user.userId, current)
        const replay = yield* Effect.flip(SecondFactor.verify(user.userId, current))
        assert.strictEqual(replay._tag, "WrongCode", "the same code again in its window")
        assert.strictEqual(yield* SecondFactor.verify(user.userId, yield* appCode(secret, 1)), s0 + 1)
        yield* TestClock.adjust("30 seconds")
        const earlier = yield* Effect.flip(SecondFactor.verify(user.userId, yield* appCode(secret, -1)))
        assert.strictEqual(earlier._tag, "WrongCode", "a step the last accepted one reached already")
        yield* TestClock.adjust("90 seconds")
        for (const d of [-2, 2]) {
          const far = yield* Effect.flip(SecondFactor.verify(user.userId, yield* appCode(secret, d)))
          assert.strictEqual(far._tag, "WrongCode", `${d} steps`)
        }
        assert.strictEqual(yield* SecondFactor.verify(user.userId, yield* appCode(secret, -1)), s0 + 3)
        assert.strictEqual(yield* SecondFactor.verify(user.userId, yield* appCode(secret, 0)), s0 + 4)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "verify: two sign-ins with one code, both past the code check before either writes: exactly one is accepted",
    () =>
      Effect.gen(function* () {
        const { user, secret } = yield* enrolled
        const store = yield* FactorStore
        const arrived = yield* Ref.make(0)
        const both = yield* Deferred.make<void>()
        // Pinned: each use of the step waits until both checks have reached it
        const gated = FactorStore.of({
          ...store,
          useStep: (userId, step) =>
            Ref.updateAndGet(arrived, (n) => n + 1).pipe(
              Effect.tap((n) => (n === 2 ? Deferred.succeed(both, undefined) : Effect.void)),
              Effect.zipRight(Deferred.await(both)),
              Effect.zipRight(store.useStep(userId, step))
            )
        })
        const code = yield* appCode(secret)
        const results = yield* Effect.all(
          [0, 1].map(() =>
            Effect.either(SecondFactor.verify(user.userId, code)).pipe(
              Effect.provideService(FactorStore, gated)
            )
          ),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(yield* Ref.get(arrived), 2, "both checks reached the write")
        assert.deepStrictEqual(results.map((r) => r._tag).sort(), ["Left", "Right"])
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("verify: a user without a confirmed app gets the one wrong-code answer", () =>
    Effect.gen(function* () {
      const { user } = yield* newUser()
      assert.strictEqual((yield* Effect.flip(SecondFactor.verify(user.userId, "123456")))._tag, "WrongCode")
      yield* SecondFactor.enrol(user.userId, user.username)
      assert.strictEqual((yield* Effect.flip(SecondFactor.verify(user.userId, "123456")))._tag, "WrongCode")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "recovery codes: each works once (any case, spaces, dashes), is audited, and the count goes down",
    () =>
      Effect.gen(function* () {
        const { user, codes } = yield* enrolled
        const [first, second] = codes as [string, string]
        assert.strictEqual(yield* SecondFactor.useRecoveryCode(user.userId, first), 9)
        const reused = yield* Effect.flip(SecondFactor.useRecoveryCode(user.userId, first))
        assert.strictEqual(reused._tag, "WrongCode")
        const typed = ` ${second.replace("-", "").toLowerCase().slice(0, 3)} ${second.replace("-", "").toLowerCase().slice(3)}`
        assert.strictEqual(yield* SecondFactor.useRecoveryCode(user.userId, typed), 8)
        const { user: other } = yield* newUser()
        const foreign = yield* Effect.flip(SecondFactor.useRecoveryCode(other.userId, codes[2] as string))
        assert.strictEqual(foreign._tag, "WrongCode", "another user's code")
        const types = yield* typesOf(user.userId)
        assert.deepStrictEqual(
          types.filter((t) => t === "mfa_recovery_code_used"),
          ["mfa_recovery_code_used", "mfa_recovery_code_used"]
        )
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "throttling: wrong codes lock the user's codes (even the right one), in a key space apart from passwords",
    () =>
      Effect.gen(function* () {
        const { user, secret, codes } = yield* enrolled
        for (let i = 0; i < 5; i++) {
          const e = yield* Effect.flip(SecondFactor.verify(user.userId, "000000"))
          assert.strictEqual(e._tag, "WrongCode", `attempt ${i + 1}`)
        }
        const sixth = yield* Effect.flip(SecondFactor.verify(user.userId, "000000"))
        assert.strictEqual(sixth._tag, "WrongCode", "the sixth is counted and starts the lock")
        const locked = yield* Effect.flip(SecondFactor.verify(user.userId, yield* appCode(secret)))
        assert.strictEqual(locked._tag, "RateLimited")
        const recovery = yield* Effect.flip(SecondFactor.useRecoveryCode(user.userId, codes[0] as string))
        assert.strictEqual(recovery._tag, "RateLimited", "recovery codes share the budget")
        // the owner's trusted browser has a budget of its own
        yield* SecondFactor.verify(user.userId, yield* appCode(secret), { device: "owner-device" })
        // passwords are counted apart: the user's sign-in keys are untouched
        const throttle = yield* Throttle.ThrottleStore
        assert.strictEqual(yield* throttle.lockedFor(Throttle.signInKeys(user.username, undefined), 0), 0)
        assert.isAbove(yield* throttle.lockedFor(Throttle.factorKeys(user.userId), Math.floor(T0 / 1000)), 0)
        yield* TestClock.adjust("31 seconds")
        yield* SecondFactor.verify(user.userId, yield* appCode(secret))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "reset: removes the app and its recovery codes, audited as mfa_reset; the user can enrol again",
    () =>
      Effect.gen(function* () {
        const { user, codes } = yield* enrolled
        assert.isTrue(yield* SecondFactor.reset(user.userId))
        assert.isFalse(yield* SecondFactor.required(user.userId))
        assert.deepStrictEqual(yield* SecondFactor.status(user.userId), {
          state: "none",
          recoveryCodesLeft: 0
        })
        assert.strictEqual(
          (yield* Effect.flip(SecondFactor.useRecoveryCode(user.userId, codes[0] as string)))._tag,
          "WrongCode"
        )
        assert.isFalse(yield* SecondFactor.reset(user.userId))
        yield* SecondFactor.enrol(user.userId, user.username)
        const events = yield* Effect.flatMap(AuditStore, (a) => a.query({ limit: 100, type: "mfa_reset" }))
        assert.deepStrictEqual(
          events.filter((e) => e.userId === user.userId).map((e) => e.detail),
          ["nothing to remove", "authenticator and recovery codes removed"]
        )
      }).pipe(Effect.provide(Audited()))
  )
})

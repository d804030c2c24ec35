import { assert, describe, it } from "@effect/vitest"
import { Array as Arr, Deferred, Effect, Either, Fiber, Layer } from "effect"
import * as Accounts from "../src/security/Accounts.js"
import * as PasswordChecks from "../src/security/PasswordChecks.js"
import * as Session from "../src/security/Session.js"
import * as Throttle from "../src/security/Throttle.js"
import { PasswordHasher } from "../src/services/PasswordHasher.js"
import { newApp, newUser, post, SyncDigest, TestLayer } from "./fixtures.js"

interface Started {
  readonly password: string
  readonly done: Deferred.Deferred<void>
}

/** A hasher whose every verify waits until the test completes it, in the order they started. */
const gatedHasher = () => {
  const started: Array<Started> = []
  const layer = Layer.succeed(PasswordHasher, {
    hash: (p) => Effect.succeed(`test$${p}`),
    verify: (p, h) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<void>()
        started.push({ password: p, done })
        yield* Deferred.await(done)
        return h === `test$${p}`
      })
  })
  return { started, layer }
}

/** Let the forked attempts run until `done` holds (a bounded number of yields, then it must hold). */
const until = (done: Effect.Effect<boolean, never, PasswordChecks.PasswordChecks>, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 10_000 && !(yield* done); i++) yield* Effect.yieldNow()
    assert.isTrue(yield* done, what)
  })

const waiting = Effect.flatMap(PasswordChecks.PasswordChecks, (c) => c.waiting)

const limits = PasswordChecks.defaultLimits

describe("admission of password checks (docs/security.md, throttling)", () => {
  for (const n of [10, 100]) {
    it.effect(
      `with ${n} attacking addresses each sending as many attempts as allowed, the owner's trusted device is checked after at most \`concurrency\` checks that started before it`,
      () => {
        const { started, layer } = gatedHasher()
        return Effect.gen(function* () {
          const { user, password } = yield* newUser()
          const attempts = Arr.range(1, n).flatMap((a) =>
            Array.from({ length: limits.perSource }, (_, i) => ({ address: `10.0.${a >> 8}.${a & 255}`, i }))
          )
          const attack = yield* Effect.fork(
            Effect.forEach(
              attempts,
              ({ address, i }) =>
                Effect.either(Accounts.authenticate(`nobody-${address}-${i}`, "guess", address)),
              { concurrency: "unbounded" }
            )
          )
          const queued = Math.min(attempts.length, limits.maxPending) - limits.concurrency
          yield* until(
            Effect.map(waiting, (w) => started.length === limits.concurrency && w === queued),
            "the attack's checks run or wait"
          )
          // the owner's own browser: a trusted-device cookie of her account
          const trusting = yield* Session.trusting(user, { path: "/", secure: false }, undefined)
          yield* trusting.write
          const cookies = trusting.value.split(";")[0]
          const owner = yield* Effect.fork(
            Accounts.authenticate(user.username, password, "192.0.2.44", { _tag: "Page", cookies })
          )
          yield* until(
            Effect.map(waiting, (w) => w === queued + 1),
            "the owner's check waits"
          )
          // finish the running checks one at a time, oldest first, until the owner's starts
          let next = 0
          while (!started.some((s) => s.password === password) && next < started.length) {
            yield* Deferred.succeed((started[next] as Started).done, undefined)
            next++
            const before = started.length
            yield* until(
              Effect.sync(() => started.length > before),
              "a check started in its place"
            )
          }
          const ahead = started.findIndex((s) => s.password === password)
          assert.isAtLeast(ahead, 0, "the owner's check started")
          assert.isAtMost(ahead, limits.concurrency)
          yield* Deferred.succeed((started[ahead] as Started).done, undefined)
          assert.strictEqual((yield* Fiber.join(owner)).userId, user.userId)
          yield* Fiber.interrupt(attack)
        }).pipe(Effect.provide(Layer.mergeAll(TestLayer(), SyncDigest, layer)))
      }
    )
  }

  it.effect(
    "at most perSource attempts at once from one address: the others are refused 429 at once and not counted",
    () => {
      const { started, layer } = gatedHasher()
      // two free failures per address: a third one counted would lock it
      const policy = { ...Throttle.defaultPolicy, addressFreeFailures: 2 }
      return Effect.gen(function* () {
        const guess = (i: number) =>
          Effect.either(Accounts.authenticate(`nobody-${i}`, "guess", "198.51.100.1"))
        const burst = yield* Effect.fork(Effect.forEach(Arr.range(1, 5), guess, { concurrency: "unbounded" }))
        yield* until(
          Effect.sync(() => started.length === 2),
          "two checks started"
        )
        for (const s of started) yield* Deferred.succeed(s.done, undefined)
        const results = yield* Fiber.join(burst)
        const refused = results.filter((r) => Either.isLeft(r) && r.left._tag === "RateLimited")
        assert.strictEqual(refused.length, 3)
        assert.isTrue(
          refused.every((r) => Either.isLeft(r) && r.left._tag === "RateLimited" && r.left.retryAfter === 1)
        )
        // the address has used its two free failures only: one more attempt is still checked
        const later = yield* Effect.fork(guess(6))
        yield* until(
          Effect.sync(() => started.length === 3),
          "the later attempt is checked"
        )
        yield* Deferred.succeed((started[2] as Started).done, undefined)
        const last = yield* Fiber.join(later)
        assert.isTrue(Either.isLeft(last) && last.left._tag === "InvalidGrant")
      }).pipe(Effect.provide(Layer.mergeAll(TestLayer({}, policy), SyncDigest, layer)))
    }
  )

  it.effect(
    "past maxPending attempts in progress the token endpoint answers 503 temporarily_unavailable with Retry-After, and counts nothing",
    () => {
      const { started, layer } = gatedHasher()
      // three free failures per username and application: a fourth one counted would lock
      const policy = { ...Throttle.defaultPolicy, freeFailures: 3 }
      const checks = { concurrency: 1, perSource: 2, maxPending: 3 }
      return Effect.gen(function* () {
        const { basic } = yield* newApp()
        const { user, password } = yield* newUser()
        const grant = (p: string) =>
          post(
            "/oauth2/oauth2/token",
            { grant_type: "password", username: user.username, password: p },
            basic,
            {
              remoteAddress: "192.0.2.80"
            }
          )
        const wrong = yield* Effect.fork(
          Effect.forEach(Arr.range(1, 3), (i) => grant(`wrong-${i}-password`), { concurrency: "unbounded" })
        )
        yield* until(
          Effect.map(waiting, (w) => started.length === 1 && w === 2),
          "one check runs, two wait"
        )
        const busy = yield* grant("wrong-4-password")
        assert.strictEqual(busy.status, 503)
        assert.strictEqual(busy.headers["retry-after"], "1")
        assert.strictEqual(JSON.parse(busy.body).error, "temporarily_unavailable")
        // the three admitted guesses are checked one at a time
        for (let i = 0; i < 3; i++) {
          yield* until(
            Effect.sync(() => started.length === i + 1),
            `check ${i + 1} started`
          )
          yield* Deferred.succeed((started[i] as Started).done, undefined)
        }
        assert.deepStrictEqual(
          (yield* Fiber.join(wrong)).map((r) => r.status),
          [400, 400, 400]
        )
        // the refused one was not counted: the right password is still checked, and accepted
        const right = yield* Effect.fork(grant(password))
        yield* until(
          Effect.sync(() => started.length === 4),
          "the right password is checked"
        )
        yield* Deferred.succeed((started[3] as Started).done, undefined)
        assert.strictEqual((yield* Fiber.join(right)).status, 200)
      }).pipe(Effect.provide(Layer.mergeAll(TestLayer({}, policy, checks), SyncDigest, layer)))
    }
  )
})

import { assert, describe, it } from "@effect/vitest"
import {
  Array as Arr,
  Cause,
  Clock,
  Deferred,
  Effect,
  Either,
  Exit,
  Fiber,
  Layer,
  Option,
  TestClock
} from "effect"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Accounts from "../src/security/Accounts.js"
import * as Audit from "../src/security/Audit.js"
import * as Throttle from "../src/security/Throttle.js"
import { PasswordHasher } from "../src/services/PasswordHasher.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { newApp, newUser, post, TestLayer } from "./fixtures.js"

const cc = { grant_type: "client_credentials" }

describe("throttles that outsiders cannot turn against users", () => {
  it.effect("wrong secrets for an App Key from one address do not lock the application out elsewhere", () =>
    Effect.gen(function* () {
      const { app, appSecret, basic } = yield* newApp()
      const wrong = BasicAuth.encode({ appKey: app.appKey, appSecret: `${appSecret}x` })
      for (let i = 0; i < 12; i++) {
        const res = yield* post("/oauth2/oauth2/token", cc, wrong, { remoteAddress: "198.51.100.7" })
        assert.oneOf(res.status, [401, 429])
      }
      const own = yield* post("/oauth2/oauth2/token", cc, basic, { remoteAddress: "192.0.2.10" })
      assert.strictEqual(own.status, 200)
      // the attacker's own address is the one slowed down
      const attacker = yield* post("/oauth2/oauth2/token", cc, basic, { remoteAddress: "198.51.100.7" })
      assert.strictEqual(attacker.status, 429)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "parallel sign-in guesses are all counted: no more passwords are checked than the policy allows",
    () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        let verified = 0
        const hasher = Layer.succeed(PasswordHasher, {
          hash: (p) => Effect.succeed(`test$${p}`),
          verify: (p, h) =>
            Effect.sync(() => {
              verified++
            }).pipe(Effect.zipRight(Deferred.await(gate)), Effect.as(h === `test$${p}`))
        })
        const run = Effect.gen(function* () {
          const { user, password } = yield* newUser()
          const attempts = Array.from({ length: 30 }, (_, i) => (i === 29 ? password : `wrong-${i}-password`))
          const fiber = yield* Effect.fork(
            Effect.forEach(
              attempts,
              (p) => Effect.either(Accounts.authenticate(user.username, p, "203.0.113.5")),
              { concurrency: "unbounded" }
            )
          )
          // let every attempt reach the hasher or be refused, then let the hashes finish
          for (let i = 0; i < 50; i++) yield* Effect.yieldNow()
          yield* Deferred.succeed(gate, undefined)
          const results = yield* Fiber.join(fiber)
          const limited = results.filter((r) => Either.isLeft(r) && r.left._tag === "RateLimited").length
          const signedIn = results.filter(Either.isRight).length
          assert.strictEqual(verified, Throttle.defaultPolicy.freeFailures + 1)
          assert.strictEqual(limited, 30 - verified)
          assert.strictEqual(signedIn, 0)
        })
        // one address may have every attempt in progress at once: this test is about counting
        const checks = { concurrency: 30, perSource: 30, maxPending: 30 }
        yield* run.pipe(Effect.provide(Layer.merge(TestLayer({}, Throttle.defaultPolicy, checks), hasher)))
      })
  )

  it.effect("successful sign-ins from one shared address never add up to a lockout", () =>
    Effect.gen(function* () {
      const { user, password } = yield* newUser()
      for (let i = 0; i < Throttle.defaultPolicy.addressFreeFailures * 2; i++) {
        const r = yield* Effect.either(Accounts.authenticate(user.username, password, "192.0.2.99"))
        assert.isTrue(Either.isRight(r), `sign-in ${i}`)
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refused requests during a lockout record one throttle event per lockout, not one each", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newApp()
      const wrong = BasicAuth.encode({ appKey: app.appKey, appSecret: `${appSecret}x` })
      for (let i = 0; i < 300; i++)
        yield* post("/oauth2/oauth2/token", cc, wrong, { remoteAddress: "198.51.100.8" })
      const { user } = yield* newUser()
      for (let i = 0; i < 50; i++)
        yield* Effect.either(Accounts.authenticate(user.username, "wrong password", "198.51.100.9"))
      const events = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 10_000 }))
      const count = (type: string) => events.filter((e) => e.type === type).length
      assert.strictEqual(count("client_auth_throttled"), 1)
      assert.strictEqual(count("signin_throttled"), 1)
      // the test's own application_created aside
      const protocol = events.filter((e) => e.type !== "application_created")
      assert.isAtMost(protocol.length, 2 * (Throttle.defaultPolicy.freeFailures + 2))
    }).pipe(Effect.provide(Layer.merge(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))))
  )

  it.effect(
    "guesses per username: at most 13 per address in the first hour and 4 per address in each hour after, from any number of addresses",
    () =>
      Effect.gen(function* () {
        let checked = 0
        const hasher = Layer.succeed(PasswordHasher, {
          hash: (p) => Effect.succeed(`test$${p}`),
          verify: (p, h) => Effect.sync(() => checked++).pipe(Effect.as(h === `test$${p}`))
        })
        const addresses = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
        const run = Effect.gen(function* () {
          const { user } = yield* newUser()
          // The best an attacker can do: guess from every address once a second, except while
          // refused, when it waits exactly the Retry-After it was told; slowed guesses run on in
          // parallel while it goes on.
          let now = 0
          const nextAt = new Map(addresses.map((a) => [a, 0]))
          const hour = Effect.gen(function* () {
            const before = checked
            const end = now + 3600
            while (now < end) {
              for (const address of addresses) {
                if ((nextAt.get(address) ?? 0) > now) continue
                const guess = yield* Effect.fork(
                  Accounts.authenticate(user.username, "wrong password", address)
                )
                for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
                const done = yield* Fiber.poll(guess)
                const refused = Option.isSome(done) ? Exit.isFailure(done.value) : false
                const cause = Option.isSome(done) && Exit.isFailure(done.value) ? done.value.cause : null
                const failure = cause === null ? Option.none() : Cause.failureOption(cause)
                const wait =
                  refused && Option.isSome(failure) && failure.value._tag === "RateLimited"
                    ? Math.ceil(failure.value.retryAfter)
                    : 1
                nextAt.set(address, now + wait)
              }
              const step = Math.max(1, Math.min(end, ...nextAt.values()) - now)
              yield* TestClock.adjust(`${step} seconds`)
              now += step
            }
            return checked - before
          })
          assert.strictEqual(yield* hour, 13 * addresses.length)
          assert.strictEqual(yield* hour, 4 * addresses.length)
        })
        yield* run.pipe(Effect.provide(Layer.merge(TestLayer(), hasher)))
      }),
    { timeout: 60_000 }
  )

  it.effect(
    "80 parallel guesses at one username from 80 addresses: checked one slot after another, those whose slot is more than 5 s away refused at once and not counted; the owner's right password from a new browser then waits at most 5 s",
    () =>
      Effect.gen(function* () {
        const checkedAt: Array<number> = []
        const hasher = Layer.succeed(PasswordHasher, {
          hash: (p) => Effect.succeed(`test$${p}`),
          verify: (p, h) =>
            Effect.flatMap(Clock.currentTimeMillis, (ms) => Effect.sync(() => checkedAt.push(ms))).pipe(
              Effect.as(h === `test$${p}`)
            )
        })
        const run = Effect.gen(function* () {
          const { user, password } = yield* newUser()
          const attack = yield* Effect.fork(
            Effect.forEach(
              Arr.range(1, 80),
              (i) =>
                Effect.either(Accounts.authenticate(user.username, `guess-${i}`, `203.0.113.${i}`)).pipe(
                  Effect.zip(Clock.currentTimeMillis)
                ),
              { concurrency: "unbounded" }
            )
          )
          for (let s = 0; s < 4; s++) yield* TestClock.adjust("1 second")
          const results = yield* Fiber.join(attack)
          // 10 free, then the slots 0 s, 1 s and 3 s; the next slot, 7 s, is more than 5 s away
          assert.deepStrictEqual(checkedAt, [...Array.from({ length: 11 }, () => 0), 1000, 3000])
          const refused = results.filter(([r]) => Either.isLeft(r) && r.left._tag === "RateLimited")
          assert.strictEqual(refused.length, 80 - 13)
          assert.isTrue(
            refused.every(
              ([r, at]) =>
                at === 0 && Either.isLeft(r) && r.left._tag === "RateLimited" && r.left.retryAfter === 2
            )
          )
          // not locked, and nothing of the refused counted: the next slot is still 7 s, 3 s away
          const owner = yield* Effect.fork(Accounts.authenticate(user.username, password, "192.0.2.44"))
          yield* TestClock.adjust("2999 millis")
          assert.isTrue(Option.isNone(yield* Fiber.poll(owner)))
          yield* TestClock.adjust("1 millis")
          assert.strictEqual((yield* Fiber.join(owner)).userId, user.userId)
          assert.deepStrictEqual(checkedAt.slice(13), [7000])
        })
        yield* run.pipe(Effect.provide(Layer.merge(TestLayer(), hasher)))
      })
  )

  it.effect("guesses per App Key from one address: at most 13 in the first hour, 4 in each hour after", () =>
    Effect.gen(function* () {
      const { app, appSecret } = yield* newApp()
      const wrong = BasicAuth.encode({ appKey: app.appKey, appSecret: `${appSecret}x` })
      const hour = Effect.gen(function* () {
        let checked = 0
        let elapsed = 0
        while (elapsed < 3600) {
          const res = yield* post("/oauth2/oauth2/token", cc, wrong, { remoteAddress: "198.51.100.77" })
          if (res.status === 401) checked++
          const wait = res.status === 429 ? Number(res.headers["retry-after"]) : 1
          const step = Math.min(wait, 3600 - elapsed)
          yield* TestClock.adjust(`${step} seconds`)
          elapsed += step
        }
        return checked
      })
      assert.strictEqual(yield* hour, 13)
      assert.strictEqual(yield* hour, 4)
    }).pipe(Effect.provide(TestLayer()))
  )
})

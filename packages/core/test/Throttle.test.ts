import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, TestClock } from "effect"
import * as Accounts from "../src/Accounts.js"
import * as Audit from "../src/Audit.js"
import { PasswordHasher } from "../src/PasswordHasher.js"
import * as BasicAuth from "../src/requests/BasicAuth.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import * as Throttle from "../src/Throttle.js"
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
        yield* run.pipe(Effect.provide(Layer.merge(TestLayer(), hasher)))
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
      assert.isAtMost(events.length, 2 * (Throttle.defaultPolicy.freeFailures + 2))
    }).pipe(Effect.provide(Layer.merge(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))))
  )

  it.effect(
    "guesses per username from many addresses: at most 13 in the first hour, 4 in each hour after",
    () =>
      Effect.gen(function* () {
        let checked = 0
        const hasher = Layer.succeed(PasswordHasher, {
          hash: (p) => Effect.succeed(`test$${p}`),
          verify: (p, h) => Effect.sync(() => checked++).pipe(Effect.as(h === `test$${p}`))
        })
        const run = Effect.gen(function* () {
          const { user } = yield* newUser()
          // The best an attacker can do: guess once a second from a new address each time, and
          // when refused, wait exactly the Retry-After it was told.
          let address = 0
          const hour = Effect.gen(function* () {
            const before = checked
            let elapsed = 0
            while (elapsed < 3600) {
              const r = yield* Effect.either(
                Accounts.authenticate(
                  user.username,
                  "wrong password",
                  `10.0.${address >> 8}.${address++ & 255}`
                )
              )
              const wait =
                Either.isLeft(r) && r.left._tag === "RateLimited" ? Math.ceil(r.left.retryAfter) : 1
              const step = Math.min(wait, 3600 - elapsed)
              yield* TestClock.adjust(`${step} seconds`)
              elapsed += step
            }
            return checked - before
          })
          assert.strictEqual(yield* hour, 13)
          assert.strictEqual(yield* hour, 4)
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

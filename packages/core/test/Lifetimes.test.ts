/**
 * Lifetimes are exact to the second they report (docs/decisions.md, "Token and code
 * lifetimes"): issued at a fractional second, an access token, a refresh token and an
 * authorization code are still good `ttl` seconds later less a millisecond, and are not
 * one second after that. Time is the test clock's only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import * as Scope from "../src/model/Scope.js"
import * as Bearer from "../src/oauth/Bearer.js"
import { authorize, cb, issueCode, newApp, newUser, post, TestLayer, token } from "./fixtures.js"

/** The issue instant: 10.7 s after the epoch, in milliseconds. */
const issuedAtMs = 10_700
/** Milliseconds `ttl` seconds after issue, plus `extra`. */
const sinceIssue = (ttl: number, extraMs: number) => issuedAtMs + ttl * 1000 + extraMs

const introspect = (value: string, basic: string) =>
  Effect.map(post("/oauth2/oauth2/introspect", { token: value }, basic), (r) => r.json ?? {})

const verify = (value: string) => Effect.either(Bearer.verify(`Bearer ${value}`, Scope.empty))

const refresh = (rt: string, basic: string) =>
  token({ grant_type: "refresh_token", refresh_token: rt }, basic)

const redeem = (code: string, basic: string) =>
  token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)

describe("lifetimes issued at a fractional second", () => {
  it.effect("an access token is active for its full expires_in, and inactive a second later", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({ accessTokenTtl: 120 })
      yield* TestClock.setTime(issuedAtMs)
      const issued = yield* token({ grant_type: "client_credentials" }, basic)
      const ttl = issued.json?.expires_in as number
      assert.strictEqual(ttl, 120)
      const access = issued.json?.access_token as string
      // exp - iat is exactly what expires_in said
      const info = yield* introspect(access, basic)
      assert.strictEqual((info.exp as number) - (info.iat as number), ttl)

      yield* TestClock.setTime(sinceIssue(ttl, -1))
      assert.strictEqual((yield* introspect(access, basic)).active, true)
      assert.isTrue(Either.isRight(yield* verify(access)))

      yield* TestClock.setTime(sinceIssue(ttl, 1000))
      assert.deepStrictEqual(yield* introspect(access, basic), { active: false })
      assert.isTrue(Either.isLeft(yield* verify(access)))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a refresh token is usable for its full lifetime, and refused a second later", () =>
    Effect.gen(function* () {
      const ttl = 600
      const { app, basic } = yield* newApp({ refreshTokenTtl: ttl })
      const { user } = yield* newUser()
      const first = yield* issueCode(app.appKey, user.userId)
      const second = yield* issueCode(app.appKey, user.userId)
      yield* TestClock.setTime(issuedAtMs)
      const a = (yield* redeem(first, basic)).json?.refresh_token as string
      const b = (yield* redeem(second, basic)).json?.refresh_token as string

      yield* TestClock.setTime(sinceIssue(ttl, -1))
      assert.strictEqual((yield* introspect(a, basic)).active, true)
      assert.strictEqual((yield* refresh(a, basic)).status, 200)

      yield* TestClock.setTime(sinceIssue(ttl, 1000))
      assert.deepStrictEqual(yield* introspect(b, basic), { active: false })
      const late = yield* refresh(b, basic)
      assert.strictEqual(late.status, 400)
      assert.strictEqual(late.json?.error, "invalid_grant")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an authorization code is redeemable for its full lifetime, and refused a second later", () =>
    Effect.gen(function* () {
      const ttl = 30
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      yield* TestClock.setTime(issuedAtMs)
      const first = yield* issueCode(app.appKey, user.userId)
      const second = yield* issueCode(app.appKey, user.userId)

      yield* TestClock.setTime(sinceIssue(ttl, -1))
      assert.strictEqual((yield* redeem(first, basic)).status, 200)

      yield* TestClock.setTime(sinceIssue(ttl, 1000))
      const late = yield* redeem(second, basic)
      assert.strictEqual(late.status, 400)
      assert.strictEqual(late.json?.error, "invalid_grant")
    }).pipe(Effect.provide(TestLayer({ codeTtl: 30 })))
  )

  it.effect("an implicit access token is active for its full expires_in, and inactive a second later", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp({ accessTokenTtl: 90 })
      const { user } = yield* newUser()
      yield* TestClock.setTime(issuedAtMs)
      const location = yield* authorize(
        { response_type: "token", client_id: app.appKey, redirect_uri: cb, state: "s1" },
        user.userId
      )
      const fragment = new URLSearchParams(new URL(location).hash.slice(1))
      const ttl = Number(fragment.get("expires_in"))
      assert.strictEqual(ttl, 90)
      const access = fragment.get("access_token") as string

      yield* TestClock.setTime(sinceIssue(ttl, -1))
      assert.strictEqual((yield* introspect(access, basic)).active, true)

      yield* TestClock.setTime(sinceIssue(ttl, 1000))
      assert.deepStrictEqual(yield* introspect(access, basic), { active: false })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("issued on a whole second, a token still lives exactly its expires_in", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp({ accessTokenTtl: 60 })
      yield* TestClock.setTime(10_000)
      const access = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      yield* TestClock.setTime(10_000 + 60_000 - 1)
      assert.strictEqual((yield* introspect(access, basic)).active, true)
      yield* TestClock.setTime(10_000 + 60_000)
      assert.deepStrictEqual(yield* introspect(access, basic), { active: false })
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("the refresh reuse grace window (unchanged: it starts at the rotation's second, rounded down)", () => {
  it.effect(
    "a retry is accepted for the full grace after a rotation at a fractional second, and not a second later",
    () =>
      Effect.gen(function* () {
        const grace = 10
        const { app, basic } = yield* newApp()
        const { user } = yield* newUser()
        const rt = (yield* redeem(yield* issueCode(app.appKey, user.userId), basic)).json
          ?.refresh_token as string
        yield* TestClock.setTime(issuedAtMs)
        assert.strictEqual((yield* refresh(rt, basic)).status, 200)
        yield* TestClock.setTime(sinceIssue(grace, -1))
        assert.strictEqual((yield* refresh(rt, basic)).status, 200)
        yield* TestClock.setTime(sinceIssue(grace, 1000))
        assert.strictEqual((yield* refresh(rt, basic)).json?.error, "invalid_grant")
      }).pipe(Effect.provide(TestLayer({ refreshReuseGrace: 10 })))
  )
})

/**
 * Lifetimes are exact to the second they report (docs/decisions.md, "Token and code
 * lifetimes"): issued at a fractional second, an access token, a refresh token and an
 * authorization code are still good `ttl` seconds later less a millisecond, and are not
 * one second after that. Time is the test clock's only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import * as jose from "jose"
import * as Scope from "../src/model/Scope.js"
import * as Bearer from "../src/oauth/Bearer.js"
import * as Keys from "../src/signing/Keys.js"
import { authorize, cb, issueCode, issuer, newApp, newUser, post, TestLayer, token } from "./fixtures.js"
import { jwtApp } from "./jwt/helpers.js"
import { openIdCode } from "./openid/helpers.js"

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
      // RFC 7519 §4.1.6: iat is not after the issue instant, and exp at least expires_in after it
      const info = yield* introspect(access, basic)
      assert.strictEqual(info.iat, Math.floor(issuedAtMs / 1000))
      assert.isAtLeast((info.exp as number) * 1000 - issuedAtMs, ttl * 1000)

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

/** An issue instant inside a second: 1_700_000_123.400 s after the epoch, in milliseconds. */
const fractionalMs = 1_700_000_123_400

/**
 * Verify a JWT as a library that checks `iat` with no leeway does (PyJWT's ImmatureSignatureError):
 * jose checks that `iat` is not in the future when `maxTokenAge` is given.
 */
const verifyStrictly = (jwt: string, audience: string, typ: string, atMs: number) =>
  Effect.gen(function* () {
    const jwks = jose.createLocalJWKSet((yield* Keys.jwks) as jose.JSONWebKeySet)
    return yield* Effect.either(
      Effect.tryPromise(() =>
        jose.jwtVerify(jwt, jwks, {
          issuer,
          audience,
          typ,
          currentDate: new Date(atMs),
          clockTolerance: 0,
          maxTokenAge: "1 day"
        })
      )
    )
  })

/** The promise of RFC 7519 §4.1.6 and of expires_in, for a token issued at `atMs`. */
const assertIssuedAt = (claims: jose.JWTPayload, atMs: number, expiresIn: number) => {
  assert.isAtMost((claims.iat as number) * 1000, atMs)
  assert.strictEqual(claims.iat, Math.floor(atMs / 1000))
  assert.isAtLeast((claims.exp as number) * 1000 - atMs, expiresIn * 1000)
  assert.isBelow((claims.exp as number) * 1000 - atMs, (expiresIn + 1) * 1000)
}

describe("iat is never after the issue instant (RFC 7519 §4.1.6)", () => {
  it.effect("a JWT access token verifies at its exact issue instant with no leeway", () =>
    Effect.gen(function* () {
      const { basic } = yield* jwtApp({}, "https://api.example")
      yield* TestClock.setTime(fractionalMs)
      const res = yield* token({ grant_type: "client_credentials" }, basic)
      const access = res.json?.access_token as string
      const verified = yield* verifyStrictly(access, "https://api.example", "at+jwt", fractionalMs)
      assert.isTrue(Either.isRight(verified))
      assertIssuedAt(jose.decodeJwt(access), fractionalMs, res.json?.expires_in as number)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an ID token verifies at its exact issue instant with no leeway", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp({ scope: "openid,profile" })
      const { user } = yield* newUser()
      yield* TestClock.setTime(fractionalMs - 400)
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid" })
      yield* TestClock.setTime(fractionalMs)
      const res = yield* redeem(code, basic)
      const idToken = res.json?.id_token as string
      const verified = yield* verifyStrictly(idToken, app.appKey, "JWT", fractionalMs)
      assert.isTrue(Either.isRight(verified))
      assertIssuedAt(jose.decodeJwt(idToken), fractionalMs, 3600)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("introspection's iat is not after the issue instant, its exp at least expires_in away", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp({ accessTokenTtl: 120, refreshTokenTtl: 600 })
      const { user } = yield* newUser()
      yield* TestClock.setTime(fractionalMs - 400)
      const code = yield* issueCode(app.appKey, user.userId)
      yield* TestClock.setTime(fractionalMs)
      const res = yield* redeem(code, basic)
      assertIssuedAt(yield* introspect(res.json?.access_token as string, basic), fractionalMs, 120)
      assertIssuedAt(yield* introspect(res.json?.refresh_token as string, basic), fractionalMs, 600)
    }).pipe(Effect.provide(TestLayer()))
  )
})

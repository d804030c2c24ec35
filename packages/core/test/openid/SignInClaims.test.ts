/**
 * What applications learn of a sign-in: the `acr`, `amr` and `auth_time` of the sign-in a code
 * recorded, in the ID token (OpenID requests only), introspection and JWT access tokens, kept on
 * refresh (OpenID Connect Core §12.2); and nothing new for tokens of no recorded sign-in.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { SignedInWith } from "../../src/model/SignIn.js"
import * as Strength from "../../src/security/Strength.js"
import { newApp, newUser, post, TestLayer, token } from "../fixtures.js"
import { jwtApp, parts } from "../jwt/helpers.js"
import { idClaims, openIdCode, redeem } from "./helpers.js"

const start = 1_700_000_000
const signedInAt = start - 90

const introspect = (value: string, basic: string) =>
  post("/oauth2/oauth2/introspect", { token: value }, basic).pipe(
    Effect.map((r) => r.json as Record<string, unknown>)
  )

/** An OpenID application (opaque or JWT access tokens), a user, and a code of a sign-in by `method`. */
const signedInCode = (method: SignedInWith | undefined, jwt = false) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(start * 1000)
    const input = { scope: "openid,profile,read" }
    const { app, basic } = jwt ? yield* jwtApp(input) : yield* newApp(input)
    const { user } = yield* newUser()
    const code = yield* openIdCode(app.appKey, user.userId, {
      scope: "openid,read",
      nonce: "n-1",
      authTime: signedInAt,
      ...(method === undefined ? {} : { signInMethod: method })
    })
    const res = yield* redeem(code, basic)
    assert.strictEqual(res.status, 200)
    return { app, basic, body: res.json as Record<string, string> }
  })

// The table, written out apart from Strength's: what each recorded method tells
const expected: ReadonlyArray<readonly [SignedInWith, string, ReadonlyArray<string>]> = [
  ["password", "urn:latchkey:acr:password", ["pwd"]],
  ["totp", "urn:latchkey:acr:mfa", ["pwd", "otp", "mfa"]],
  ["passkey", "phr", ["swk", "user", "mfa"]],
  ["passkey-device", "phr", ["hwk", "user", "mfa"]]
]

describe("acr, amr and auth_time of the sign-in a code recorded", () => {
  for (const [method, acr, amr] of expected) {
    it.effect(
      `${method}: the ID token says acr ${acr}, amr ${amr.join(" ")}; introspection its acr and auth_time`,
      () =>
        Effect.gen(function* () {
          const { app, basic, body } = yield* signedInCode(method)
          const { payload } = yield* idClaims(body.id_token as string, app.appKey)
          assert.deepStrictEqual([payload.acr, payload.amr, payload.auth_time], [acr, amr, signedInAt])
          assert.include(Strength.acrValuesSupported, payload.acr as Strength.Acr)
          for (const value of [body.access_token, body.refresh_token] as Array<string>) {
            const answer = yield* introspect(value, basic)
            assert.deepStrictEqual([answer.active, answer.acr, answer.auth_time], [true, acr, signedInAt])
          }
        }).pipe(Effect.provide(TestLayer()))
    )
  }

  it.effect("a code that recorded no sign-in method: no acr or amr anywhere, introspection as before", () =>
    Effect.gen(function* () {
      const { app, basic, body } = yield* signedInCode(undefined)
      const { payload } = yield* idClaims(body.id_token as string, app.appKey)
      assert.strictEqual(payload.auth_time, signedInAt)
      assert.notProperty(payload, "acr")
      assert.notProperty(payload, "amr")
      const answer = yield* introspect(body.access_token as string, basic)
      assert.deepStrictEqual(Object.keys(answer).sort(), [
        "active",
        "client_id",
        "exp",
        "iat",
        "scope",
        "sub",
        "subject_type",
        "token_type"
      ])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a refresh keeps the original sign-in: the new ID token's auth_time, acr and amr, no nonce; the new tokens' acr and auth_time",
    () =>
      Effect.gen(function* () {
        const { app, basic, body } = yield* signedInCode("passkey-device")
        yield* TestClock.adjust("2 hours")
        const res = yield* token(
          { grant_type: "refresh_token", refresh_token: body.refresh_token as string },
          basic
        )
        assert.strictEqual(res.status, 200)
        const next = res.json as Record<string, string>
        const { payload } = yield* idClaims(next.id_token as string, app.appKey)
        assert.deepStrictEqual(
          [payload.auth_time, payload.acr, payload.amr],
          [signedInAt, "phr", ["hwk", "user", "mfa"]]
        )
        assert.isAtLeast(payload.iat as number, start + 7200)
        assert.notProperty(payload, "nonce")
        assert.notProperty(payload, "sid")
        for (const value of [next.access_token, next.refresh_token] as Array<string>) {
          const answer = yield* introspect(value, basic)
          assert.deepStrictEqual([answer.active, answer.acr, answer.auth_time], [true, "phr", signedInAt])
        }
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a JWT access token carries the sign-in's acr and auth_time, and keeps them on refresh", () =>
    Effect.gen(function* () {
      const { basic, body } = yield* signedInCode("totp", true)
      const { claims } = parts(body.access_token as string)
      assert.deepStrictEqual([claims.acr, claims.auth_time], ["urn:latchkey:acr:mfa", signedInAt])
      assert.notProperty(claims, "amr")
      const res = yield* token(
        { grant_type: "refresh_token", refresh_token: body.refresh_token as string },
        basic
      )
      const refreshed = parts(res.json?.access_token as string).claims
      assert.deepStrictEqual([refreshed.acr, refreshed.auth_time], ["urn:latchkey:acr:mfa", signedInAt])
      const answer = yield* introspect(res.json?.access_token as string, basic)
      assert.deepStrictEqual([answer.acr, answer.auth_time], ["urn:latchkey:acr:mfa", signedInAt])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("client_credentials and password grant tokens (JWT or introspected) tell no sign-in", () =>
    Effect.gen(function* () {
      const { basic } = yield* jwtApp({ scope: "openid,read" })
      const { user, password } = yield* newUser()
      const grants = [
        { grant_type: "client_credentials", scope: "read" },
        { grant_type: "client_credentials", scope: "read", open_id: "device-1" },
        { grant_type: "password", username: user.username, password, scope: "openid,read" }
      ]
      for (const grant of grants) {
        const res = yield* token(grant, basic)
        assert.strictEqual(res.status, 200, grant.grant_type)
        for (const claims of [
          parts(res.json?.access_token as string).claims,
          yield* introspect(res.json?.access_token as string, basic)
        ]) {
          assert.notProperty(claims, "acr", grant.grant_type)
          assert.notProperty(claims, "auth_time", grant.grant_type)
        }
      }
    }).pipe(Effect.provide(TestLayer()))
  )
})

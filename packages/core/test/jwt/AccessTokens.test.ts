/**
 * JWT access tokens (RFC 9068) for an application that chose them: the claims each grant
 * mints, the lifetime, and introspection and revocation working on them as on opaque tokens.
 * An opaque application's answers stay as they were. Time is the test clock's (0 at start).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as OpenId from "../../src/model/OpenId.js"
import { caps } from "../../src/oauth/requests/Params.js"
import * as Keys from "../../src/signing/Keys.js"
import { authorize, cb, issueCode, issuer, newApp, newUser, post, TestLayer, token } from "../fixtures.js"
import { jwtApp, parts } from "./helpers.js"

const introspect = (value: string, basic: string) =>
  post("/oauth2/oauth2/introspect", { token: value }, basic).pipe(Effect.map((r) => r.json))

const revoke = (value: string, basic: string) => post("/oauth2/oauth2/revoke", { token: value }, basic)

const signingKid = Effect.map(Keys.ensured, (set) => set.keys[0]?.record.kid as string)

describe("JWT access tokens: minting", () => {
  it.effect(
    "client_credentials: at+jwt signed by the signing key, the App Key as subject, the issuer as audience",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* jwtApp({ scope: "write read" })
        const res = yield* token({ grant_type: "client_credentials" }, basic)
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(Object.keys(res.json ?? {}).sort(), [
          "access_token",
          "expires_in",
          "scope",
          "token_type"
        ])
        assert.strictEqual(res.json?.scope, "read,write")
        assert.strictEqual(res.json?.expires_in, 300)
        const { header, claims } = parts(res.json?.access_token as string)
        assert.deepStrictEqual(header, { alg: "ES256", kid: yield* signingKid, typ: "at+jwt" })
        assert.deepStrictEqual(claims, {
          iss: issuer,
          sub: app.appKey,
          aud: issuer,
          client_id: app.appKey,
          scope: "read write",
          jti: claims.jti as string,
          iat: 0,
          exp: 300
        })
        assert.match(claims.jti as string, /^[A-Za-z0-9_-]{22}$/)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "client_credentials with open_id: the open_id as subject, the configured audience, an opaque refresh token",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* jwtApp({}, "https://api.example/v1")
        const res = yield* token({ grant_type: "client_credentials", open_id: "device-42" }, basic)
        const { claims } = parts(res.json?.access_token as string)
        assert.deepStrictEqual(claims, {
          iss: issuer,
          sub: "device-42",
          aud: "https://api.example/v1",
          client_id: app.appKey,
          scope: "read write",
          jti: claims.jti as string,
          iat: 0,
          exp: 300,
          subject_type: "application"
        })
        assert.strictEqual(res.json?.open_id, "device-42")
        assert.match(res.json?.refresh_token as string, /^[A-Za-z0-9_-]{43}$/)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "password: the user's open_id as subject with subject_type user, the application's lifetime override",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* jwtApp({ accessTokenTtl: 120 })
        const { user, password } = yield* newUser()
        const res = yield* token({ grant_type: "password", username: user.username, password }, basic)
        assert.strictEqual(res.json?.expires_in, 120)
        assert.strictEqual(res.json?.scope, "read,write")
        const { claims } = parts(res.json?.access_token as string)
        assert.deepStrictEqual(claims, {
          iss: issuer,
          sub: res.json?.open_id as string,
          aud: issuer,
          client_id: app.appKey,
          scope: "read write",
          jti: claims.jti as string,
          iat: 0,
          exp: 120,
          subject_type: "user"
        })
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "authorization_code and refresh_token: JWTs for the user, each with its own jti; the refresh token stays opaque",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* jwtApp()
        const { user } = yield* newUser()
        const code = yield* issueCode(app.appKey, user.userId, { scope: "read write" })
        const first = yield* token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic)
        const refresh = first.json?.refresh_token as string
        assert.match(refresh, /^[A-Za-z0-9_-]{43}$/)
        const second = yield* token(
          { grant_type: "refresh_token", refresh_token: refresh, scope: "read" },
          basic
        )
        const a = parts(first.json?.access_token as string).claims
        const b = parts(second.json?.access_token as string).claims
        for (const [claims, scope] of [
          [a, "read write"],
          [b, "read"]
        ] as const) {
          assert.deepStrictEqual(claims, {
            iss: issuer,
            sub: first.json?.open_id as string,
            aud: issuer,
            client_id: app.appKey,
            scope,
            jti: claims.jti as string,
            iat: 0,
            exp: 300,
            subject_type: "user"
          })
        }
        assert.notStrictEqual(a.jti, b.jti)
        assert.strictEqual(second.json?.expires_in, 300)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("implicit: the fragment carries a JWT for the user with the lifetime expires_in says", () =>
    Effect.gen(function* () {
      const { app } = yield* jwtApp()
      const { user } = yield* newUser()
      const location = yield* authorize(
        { response_type: "token", client_id: app.appKey, redirect_uri: cb, state: "s", scope: "read" },
        user.userId
      )
      const fragment = new URLSearchParams(new URL(location).hash.slice(1))
      assert.strictEqual(fragment.get("expires_in"), "300")
      const { header, claims } = parts(fragment.get("access_token") as string)
      assert.strictEqual(header.typ, "at+jwt")
      assert.deepStrictEqual(claims, {
        iss: issuer,
        sub: yield* OpenId.forUser(app.appKey, user.userId),
        aud: issuer,
        client_id: app.appKey,
        scope: "read",
        jti: claims.jti as string,
        iat: 0,
        exp: 300,
        subject_type: "user"
      })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("every token gets a fresh jti", () =>
    Effect.gen(function* () {
      const { basic } = yield* jwtApp()
      const jtis = new Set<unknown>()
      for (let i = 0; i < 20; i++) {
        const res = yield* token({ grant_type: "client_credentials" }, basic)
        jtis.add(parts(res.json?.access_token as string).claims.jti)
      }
      assert.strictEqual(jtis.size, 20)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("Config.jwtAccessTokenTtl sets the default lifetime of JWT access tokens only", () =>
    Effect.gen(function* () {
      const jwt = yield* jwtApp()
      const opaque = yield* newApp()
      const j = yield* token({ grant_type: "client_credentials" }, jwt.basic)
      const o = yield* token({ grant_type: "client_credentials" }, opaque.basic)
      assert.strictEqual(j.json?.expires_in, 60)
      const { claims } = parts(j.json?.access_token as string)
      assert.strictEqual((claims.exp as number) - (claims.iat as number), 60)
      assert.strictEqual(o.json?.expires_in, 3600)
    }).pipe(Effect.provide(TestLayer({ jwtAccessTokenTtl: 60 })))
  )

  it.effect(
    "an opaque application's token response is unchanged: a 43-character token living accessTokenTtl",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        const res = yield* token({ grant_type: "client_credentials", open_id: "device-1" }, basic)
        assert.deepStrictEqual(Object.keys(res.json ?? {}).sort(), [
          "access_token",
          "expires_in",
          "open_id",
          "refresh_token",
          "scope",
          "token_type"
        ])
        assert.match(res.json?.access_token as string, /^[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(res.json?.expires_in, 3600)
        assert.strictEqual(res.json?.scope, "read,write")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "the longest JWT access token (64 scopes, 128-character App Key and open_id, RS256) fits caps.token",
    () =>
      Effect.gen(function* () {
        const scopes = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(2, "0")}${"s".repeat(29)}`)
        const { basic } = yield* jwtApp(
          { scope: scopes.join(" "), appKey: "k".repeat(128), appSecret: "x".repeat(40) },
          "https://api.example/v1"
        )
        const res = yield* token({ grant_type: "client_credentials", open_id: "o".repeat(128) }, basic)
        const access = res.json?.access_token as string
        assert.strictEqual(parts(access).header.alg, "RS256")
        assert.isBelow(access.length, caps.token - 256)
        assert.strictEqual((yield* introspect(access, basic))?.active, true)
      }).pipe(Effect.provide(TestLayer({ signingAlgorithm: "RS256" })))
  )
})

describe("JWT access tokens: introspection and revocation", () => {
  it.effect("introspection answers a JWT access token with the fields an opaque one gets", () =>
    Effect.gen(function* () {
      const jwt = yield* jwtApp({ accessTokenTtl: 600 })
      const opaque = yield* newApp({ accessTokenTtl: 600 })
      const form = { grant_type: "client_credentials", open_id: "device-7" }
      const j = yield* token(form, jwt.basic)
      const o = yield* token(form, opaque.basic)
      const expected = (clientId: string) => ({
        active: true,
        scope: "read,write",
        client_id: clientId,
        token_type: "Bearer",
        exp: 600,
        iat: 0,
        sub: "device-7",
        subject_type: "application"
      })
      assert.deepStrictEqual(
        yield* introspect(j.json?.access_token as string, jwt.basic),
        expected(jwt.app.appKey)
      )
      assert.deepStrictEqual(
        yield* introspect(o.json?.access_token as string, opaque.basic),
        expected(opaque.app.appKey)
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("revoking a JWT access token, or its refresh token's family, makes introspection inactive", () =>
    Effect.gen(function* () {
      const { basic } = yield* jwtApp()
      const one = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      assert.strictEqual((yield* revoke(one, basic)).status, 200)
      assert.deepStrictEqual(yield* introspect(one, basic), { active: false })
      const two = yield* token({ grant_type: "client_credentials", open_id: "device-9" }, basic)
      const access = two.json?.access_token as string
      assert.strictEqual((yield* introspect(access, basic))?.active, true)
      yield* revoke(two.json?.refresh_token as string, basic)
      assert.deepStrictEqual(yield* introspect(access, basic), { active: false })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("another application introspecting a JWT access token learns nothing", () =>
    Effect.gen(function* () {
      const { basic } = yield* jwtApp()
      const other = yield* newApp()
      const access = (yield* token({ grant_type: "client_credentials" }, basic)).json?.access_token as string
      assert.deepStrictEqual(yield* introspect(access, other.basic), { active: false })
    }).pipe(Effect.provide(TestLayer()))
  )
})

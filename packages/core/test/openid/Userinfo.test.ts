import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import * as Admin from "../../src/admin/Admin.js"
import * as Http from "../../src/http/Http.js"
import * as Paths from "../../src/http/Paths.js"
import { form, newApp, newUser, post, TestLayer, token } from "../fixtures.js"
import { jwtApp } from "../jwt/helpers.js"
import { openIdCode, redeem } from "./helpers.js"

const userinfo = (method: string, headers: Record<string, string> = {}, body = "") =>
  Option.getOrThrow(
    Http.route({ method, path: Paths.oauth.userinfo, query: "", headers, body, remoteAddress: "127.0.0.1" })
  ).pipe(Effect.map((res) => ({ ...res, json: JSON.parse(res.body) as Record<string, unknown> })))

const formHeaders = { "content-type": "application/x-www-form-urlencoded" }

/** A user's token set from an openid code of an application registered for openid and profile. */
const userTokens = (scope = "openid,profile") =>
  Effect.gen(function* () {
    const { app, basic } = yield* newApp({ scope: "openid,profile,email,read" })
    const { user } = yield* newUser()
    const code = yield* openIdCode(app.appKey, user.userId, { scope })
    const body = (yield* redeem(code, basic)).json as Record<string, string>
    return { app, basic, user, access: body.access_token as string, openId: body.open_id as string }
  })

describe("userinfo endpoint", () => {
  it.effect(
    "GET with a Bearer token answers sub (the token response's open_id) and preferred_username, no-store",
    () =>
      Effect.gen(function* () {
        const { user, access, openId } = yield* userTokens()
        const res = yield* userinfo("GET", { authorization: `Bearer ${access}` })
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(res.json, { sub: openId, preferred_username: user.username })
        assert.strictEqual(res.headers["cache-control"], "no-store")
        assert.match(res.headers["content-type"] ?? "", /^application\/json/)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("POST answers the same with the token in the header or in the body (RFC 6750 §2.2)", () =>
    Effect.gen(function* () {
      const { user, access, openId } = yield* userTokens()
      const expected = { sub: openId, preferred_username: user.username }
      const header = yield* userinfo("POST", { authorization: `Bearer ${access}` })
      assert.deepStrictEqual([header.status, header.json], [200, expected])
      const body = yield* userinfo("POST", formHeaders, form({ access_token: access }))
      assert.deepStrictEqual([body.status, body.json], [200, expected])
      const both = yield* userinfo(
        "POST",
        { ...formHeaders, authorization: `Bearer ${access}` },
        form({ access_token: access })
      )
      assert.deepStrictEqual([both.status, both.json.error], [400, "invalid_request"])
      assert.match(both.headers["www-authenticate"] ?? "", /^Bearer /)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("without profile in the scope, only sub", () =>
    Effect.gen(function* () {
      const { access, openId } = yield* userTokens("openid,email")
      const res = yield* userinfo("GET", { authorization: `Bearer ${access}` })
      assert.deepStrictEqual(res.json, { sub: openId })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a missing, malformed, invalid or openid-less token with RFC 6750 answers", () =>
    Effect.gen(function* () {
      const missing = yield* userinfo("GET")
      assert.strictEqual(missing.status, 401)
      assert.strictEqual(missing.headers["www-authenticate"], 'Bearer realm="latchkey"')
      const invalid = yield* userinfo("GET", { authorization: "Bearer not-a-token" })
      assert.deepStrictEqual([invalid.status, invalid.json.error], [401, "invalid_token"])
      assert.match(invalid.headers["www-authenticate"] ?? "", /error="invalid_token"/)
      const malformed = yield* userinfo("GET", { authorization: "Bearer a b" })
      assert.deepStrictEqual([malformed.status, malformed.json.error], [400, "invalid_request"])
      const { access } = yield* userTokens("profile,read")
      const narrow = yield* userinfo("GET", { authorization: `Bearer ${access}` })
      assert.deepStrictEqual([narrow.status, narrow.json.error], [403, "insufficient_scope"])
      assert.match(narrow.headers["www-authenticate"] ?? "", /scope="openid"/)
      const put = yield* userinfo("PUT", { authorization: `Bearer ${access}` })
      assert.deepStrictEqual([put.status, put.headers.allow], [405, "GET, POST"])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "refuses an application's own token (client_credentials) as invalid_token: no user stands behind it",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp({ scope: "openid,profile" })
        const cc = yield* token({ grant_type: "client_credentials", scope: "openid" }, basic)
        const res = yield* userinfo("GET", { authorization: `Bearer ${cc.json?.access_token as string}` })
        assert.deepStrictEqual([res.status, res.json.error], [401, "invalid_token"])
        assert.strictEqual(res.json.error_description, "the access token was not granted by a user")
        assert.match(res.headers["www-authenticate"] ?? "", /error="invalid_token"/)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("refuses a token of a user deleted since", () =>
    Effect.gen(function* () {
      const { user, access } = yield* userTokens()
      yield* Admin.deleteUser(user)
      const res = yield* userinfo("GET", { authorization: `Bearer ${access}` })
      assert.deepStrictEqual([res.status, res.json.error], [401, "invalid_token"])
    }).pipe(Effect.provide(TestLayer()))
  )
})

const ownAudience = "https://api.example"

/** A user's token set from an openid code of an application whose access tokens are JWTs, for `audience` when given. */
const jwtUserTokens = (audience?: string) =>
  Effect.gen(function* () {
    const { app, basic } = yield* jwtApp({ scope: "openid,profile,email,read" }, audience)
    const { user } = yield* newUser()
    const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid,profile" })
    const body = (yield* redeem(code, basic)).json as Record<string, string>
    return {
      app,
      basic,
      user,
      access: body.access_token as string,
      refresh: body.refresh_token as string,
      openId: body.open_id as string
    }
  })

type JwtTokens = Effect.Effect.Success<ReturnType<typeof jwtUserTokens>>

const introspect = (value: string, basic: string) =>
  Effect.map(post("/oauth2/oauth2/introspect", { token: value }, basic), (r) => r.json)

/** What the test layer provides. */
type Services = Layer.Layer.Success<ReturnType<typeof TestLayer>>

/** Every way a token is ended before its `exp`, and whether its application can still introspect it. */
const endings: ReadonlyArray<
  readonly [string, (t: JwtTokens) => Effect.Effect<unknown, unknown, Services>, boolean]
> = [
  ["the token revoked", (t) => post("/oauth2/oauth2/revoke", { token: t.access }, t.basic), true],
  ["its refresh token revoked", (t) => post("/oauth2/oauth2/revoke", { token: t.refresh }, t.basic), true],
  ["the consent withdrawn", (t) => Admin.withdrawConsent(t.user, t.app.appKey), true],
  ["the user disabled", (t) => Admin.disableUser(t.user), true],
  ["the user deleted", (t) => Admin.deleteUser(t.user), true],
  ["the admin revoking the user's tokens", (t) => Admin.revokeSubjectTokens(t.app.appKey, t.openId), true],
  ["the application deleted", (t) => Admin.deleteApplication(t.app.appKey), false]
]

describe("userinfo with JWT access tokens: any token this server issued, checked against its record", () => {
  for (const audience of [undefined, ownAudience]) {
    const which = audience === undefined ? "the issuer as audience" : "an audience of its own"
    it.effect(`accepts a JWT access token of an application with ${which}`, () =>
      Effect.gen(function* () {
        const { user, access, openId } = yield* jwtUserTokens(audience)
        const res = yield* userinfo("GET", { authorization: `Bearer ${access}` })
        assert.deepStrictEqual(
          [res.status, res.json],
          [200, { sub: openId, preferred_username: user.username }]
        )
      }).pipe(Effect.provide(TestLayer()))
    )

    for (const [ending, end, introspectable] of endings) {
      it.effect(`refuses a JWT access token (${which}) after ${ending}, as introspection does`, () =>
        Effect.gen(function* () {
          const tokens = yield* jwtUserTokens(audience)
          const before = yield* userinfo("GET", { authorization: `Bearer ${tokens.access}` })
          assert.strictEqual(before.status, 200)
          yield* end(tokens)
          const res = yield* userinfo("GET", { authorization: `Bearer ${tokens.access}` })
          assert.deepStrictEqual([res.status, res.json.error], [401, "invalid_token"])
          assert.match(
            res.headers["www-authenticate"] ?? "",
            /^Bearer realm="latchkey", error="invalid_token"/
          )
          if (introspectable)
            assert.deepStrictEqual(yield* introspect(tokens.access, tokens.basic), { active: false })
        }).pipe(Effect.provide(TestLayer()))
      )
    }
  }

  it.effect("refuses an ID token, a JWT of another issuer's key and a tampered JWT access token", () =>
    Effect.gen(function* () {
      const { app, basic, user } = yield* jwtApp({ scope: "openid,profile" }, ownAudience).pipe(
        Effect.flatMap((a) => Effect.map(newUser(), ({ user }) => ({ ...a, user })))
      )
      const code = yield* openIdCode(app.appKey, user.userId, { scope: "openid,profile" })
      const body = (yield* redeem(code, basic)).json as Record<string, string>
      const idToken = yield* userinfo("GET", { authorization: `Bearer ${body.id_token as string}` })
      assert.deepStrictEqual([idToken.status, idToken.json.error], [401, "invalid_token"])
      const [header, payload, signature] = (body.access_token as string).split(".") as [
        string,
        string,
        string
      ]
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>
      const forged = Buffer.from(JSON.stringify({ ...claims, scope: "openid profile email" })).toString(
        "base64url"
      )
      const tampered = yield* userinfo("GET", { authorization: `Bearer ${header}.${forged}.${signature}` })
      assert.deepStrictEqual([tampered.status, tampered.json.error], [401, "invalid_token"])
    }).pipe(Effect.provide(TestLayer()))
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Admin from "../../src/admin/Admin.js"
import * as Http from "../../src/http/Http.js"
import * as Paths from "../../src/http/Paths.js"
import { form, newApp, newUser, TestLayer, token } from "../fixtures.js"
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

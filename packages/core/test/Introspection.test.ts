import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { newApp, post, TestLayer, token } from "./fixtures.js"

const introspect = (t: string, basic?: string, extra: Record<string, string> = {}) =>
  post("/oauth2/oauth2/introspect", { token: t, ...extra }, basic)
const revoke = (t: string, basic?: string) => post("/oauth2/oauth2/revoke", { token: t }, basic)

const userTokens = (basic: string) =>
  Effect.map(token({ grant_type: "client_credentials", open_id: "u-1" }, basic), (r) => ({
    access: r.json?.access_token as string,
    refresh: r.json?.refresh_token as string
  }))

describe("introspection (RFC 7662)", () => {
  it.effect(
    "an active access token introspects with scope, client_id, token_type, exp, iat, sub and subject_type",
    () =>
      Effect.gen(function* () {
        const { app, basic } = yield* newApp()
        const { access } = yield* userTokens(basic)
        const res = yield* introspect(access, basic)
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(res.json, {
          active: true,
          scope: "read,write",
          client_id: app.appKey,
          token_type: "Bearer",
          exp: 3600,
          iat: 0,
          sub: "u-1",
          subject_type: "application"
        })
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("unknown, expired and revoked tokens are exactly {active:false}", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      assert.deepStrictEqual((yield* introspect("junk", basic)).json, { active: false })
      const { access, refresh } = yield* userTokens(basic)
      yield* revoke(access, basic)
      assert.deepStrictEqual((yield* introspect(access, basic)).json, { active: false })
      yield* TestClock.adjust("31 days")
      assert.deepStrictEqual((yield* introspect(refresh, basic)).json, { active: false })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("another application's token introspects as {active:false}", () =>
    Effect.gen(function* () {
      const a = yield* newApp()
      const b = yield* newApp()
      const { access } = yield* userTokens(a.basic)
      assert.deepStrictEqual((yield* introspect(access, b.basic)).json, { active: false })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("requires client authentication (401)", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { access } = yield* userTokens(basic)
      const res = yield* introspect(access)
      assert.strictEqual(res.status, 401)
      assert.strictEqual(res.json?.error, "invalid_client")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a token in the query string is refused (400), never read from the URL", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { access } = yield* userTokens(basic)
      const res = yield* post("/oauth2/oauth2/introspect", {}, basic, { query: `token=${access}` })
      assert.strictEqual(res.status, 400)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a token in the query string is refused however its name is percent-encoded (docs/security.md, catalogue I-6)",
    () =>
      Effect.gen(function* () {
        const { basic } = yield* newApp()
        const { access } = yield* userTokens(basic)
        for (const path of ["/oauth2/oauth2/introspect", "/oauth2/oauth2/revoke"]) {
          for (const query of [
            `%74oken=${access}`,
            `tok%65n=${access}`,
            `a=1&%74%6F%6B%65%6E=${access}`,
            "token"
          ]) {
            const res = yield* post(path, { token: access }, basic, { query })
            assert.strictEqual(res.status, 400, `${path}?${query}`)
            assert.strictEqual(res.json?.error, "invalid_request")
          }
        }
        // other parameters in the query are not a token, and the body's token still works
        const ok = yield* post("/oauth2/oauth2/introspect", { token: access }, basic, {
          query: "token%3D=x&tokens=y&%ZZ=1"
        })
        assert.strictEqual(ok.json?.active, true)
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("revocation (RFC 7009)", () => {
  it.effect("revoking a refresh token revokes the access tokens of its family", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      const { access, refresh } = yield* userTokens(basic)
      const res = yield* revoke(refresh, basic)
      assert.strictEqual(res.status, 200)
      assert.strictEqual(res.body, "")
      assert.deepStrictEqual((yield* introspect(access, basic)).json, { active: false })
      assert.strictEqual(
        (yield* token({ grant_type: "refresh_token", refresh_token: refresh }, basic)).json?.error,
        "invalid_grant"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("revoking a junk token answers 200", () =>
    Effect.gen(function* () {
      const { basic } = yield* newApp()
      assert.strictEqual((yield* revoke("junk", basic)).status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("another application's revocation changes nothing and answers the same", () =>
    Effect.gen(function* () {
      const a = yield* newApp()
      const b = yield* newApp()
      const { access } = yield* userTokens(a.basic)
      const res = yield* revoke(access, b.basic)
      assert.strictEqual(res.status, 200)
      assert.isTrue((yield* introspect(access, a.basic)).json?.active)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("requires client authentication (401)", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* revoke("junk")).status, 401)
    }).pipe(Effect.provide(TestLayer()))
  )
})

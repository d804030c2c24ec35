import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Http from "../../src/http/Http.js"
import * as Paths from "../../src/http/Paths.js"
import * as Keys from "../../src/signing/Keys.js"
import { issuer, TestLayer } from "../fixtures.js"

const get = (path: string, method = "GET") =>
  Option.getOrThrow(Http.route({ method, path, query: "", headers: {}, body: "" }))

const documentAt = (path: string) =>
  Effect.map(get(path), (res) => ({ ...res, json: JSON.parse(res.body) as Record<string, unknown> }))

describe("discovery and JWKS", () => {
  it.effect("the OpenID configuration is the RFC 8414 document, with the OpenID Connect fields", () =>
    Effect.gen(function* () {
      const oidc = yield* documentAt(Paths.oauth.openidConfiguration)
      const rfc8414 = yield* documentAt(Paths.oauth.metadata)
      assert.strictEqual(oidc.status, 200)
      assert.strictEqual(oidc.body, rfc8414.body)
      const doc = oidc.json
      assert.strictEqual(doc.issuer, issuer)
      assert.strictEqual(doc.jwks_uri, `${issuer}/oauth2/oauth2/jwks`)
      assert.strictEqual(doc.userinfo_endpoint, `${issuer}/oauth2/oauth2/userinfo`)
      assert.deepStrictEqual(doc.token_endpoint_auth_methods_supported, [
        "client_secret_basic",
        "client_secret_post",
        "none"
      ])
      assert.deepStrictEqual(doc.subject_types_supported, ["pairwise"])
      assert.deepStrictEqual(doc.id_token_signing_alg_values_supported, ["ES256", "RS256"])
      assert.deepStrictEqual(doc.scopes_supported, ["openid", "profile", "email"])
      assert.deepStrictEqual(doc.claims_supported, [
        "sub",
        "iss",
        "aud",
        "exp",
        "iat",
        "auth_time",
        "acr",
        "amr",
        "nonce",
        "at_hash",
        "preferred_username"
      ])
      assert.deepStrictEqual(doc.acr_values_supported, [
        "urn:latchkey:acr:password",
        "urn:latchkey:acr:mfa",
        "phr"
      ])
      assert.deepStrictEqual(doc.prompt_values_supported, ["none", "login", "consent", "select_account"])
      assert.deepStrictEqual(doc.response_types_supported, ["code", "token"])
      assert.deepStrictEqual(doc.code_challenge_methods_supported, ["S256"])
      assert.includeMembers(doc.grant_types_supported as Array<string>, [
        "authorization_code",
        "refresh_token"
      ])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("every endpoint URL of the document resolves to a route of Http.route", () =>
    Effect.gen(function* () {
      const doc = (yield* documentAt(Paths.oauth.openidConfiguration)).json
      const urls = Object.entries(doc).filter(
        ([k, v]) => typeof v === "string" && /(_endpoint|_uri)$/.test(k)
      )
      assert.isAtLeast(urls.length, 6)
      const pages = new Set(Paths.pages)
      for (const [field, url] of urls) {
        assert.isTrue((url as string).startsWith(issuer), field)
        const path = (url as string).slice(issuer.length)
        assert.isTrue(
          Option.isSome(Http.route({ method: "GET", path, query: "", headers: {}, body: "" })) ||
            pages.has(path),
          field
        )
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "the JWKS is Keys.jwks as JSON, public keys only, cacheable a minute; a rotation shows at once",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_700_000_000_000)
        // The first signing key is made by the server's start (or the first token signed)
        yield* Keys.ensured
        const res = yield* documentAt(Paths.oauth.jwks)
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.headers["cache-control"], "public, max-age=60")
        assert.match(res.headers["content-type"] ?? "", /^application\/json/)
        assert.deepStrictEqual(res.json, JSON.parse(JSON.stringify(yield* Keys.jwks)))
        const keys = res.json.keys as Array<Record<string, unknown>>
        assert.lengthOf(keys, 1)
        for (const k of keys)
          for (const secret of ["d", "p", "q", "dp", "dq", "qi"]) assert.notProperty(k, secret)
        const rotated = yield* Keys.rotate()
        const after = (yield* documentAt(Paths.oauth.jwks)).json.keys as Array<Record<string, unknown>>
        assert.sameMembers(
          after.map((k) => k.kid),
          [keys[0]?.kid, rotated.kid]
        )
        const post = yield* get(Paths.oauth.jwks, "POST")
        assert.deepStrictEqual([post.status, post.headers.allow], [405, "GET, HEAD"])
      }).pipe(Effect.provide(TestLayer()))
  )
})

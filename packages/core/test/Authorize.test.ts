import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Pkce from "../src/model/Pkce.js"
import * as Authorize from "../src/oauth/Authorize.js"
import { TokenStore } from "../src/storage/TokenStore.js"
import { cb, form, issuer, newApp, newUser, TestLayer, token } from "./fixtures.js"

const validate = (q: Record<string, string> | string) =>
  Effect.either(Authorize.validate(typeof q === "string" ? q : form(q)))

const pageError = (r: Either.Either<unknown, unknown>) => {
  assert.isTrue(Either.isLeft(r))
  const e = (r as Either.Left<{ _tag: string; error: string }, unknown>).left
  assert.strictEqual(e._tag, "ErrorPage")
  return e.error
}
const redirectError = (r: Either.Either<unknown, unknown>) => {
  assert.isTrue(Either.isLeft(r))
  const e = (r as Either.Left<{ _tag: string; location: string }, unknown>).left
  assert.strictEqual(e._tag, "ErrorRedirect")
  return e.location
}

describe("authorize", () => {
  it.effect("an unknown or missing client_id is an error page, never a redirect", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        pageError(yield* validate({ response_type: "code", client_id: "nope", redirect_uri: cb })),
        "invalid_request"
      )
      assert.strictEqual(
        pageError(yield* validate({ response_type: "code", redirect_uri: cb })),
        "invalid_request"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a redirect_uri that is missing or not exactly registered is an error page (docs/security.md, catalogue A10-A23)",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const variants = [
          undefined,
          `${cb}/`,
          `${cb}?x=1`,
          `${cb}#frag`,
          "https://APP.example/cb",
          "HTTPS://app.example/cb",
          "https://app.example:443/cb",
          "https://app.example/cb/../cb",
          "https://app.example.evil.com/cb",
          "https://app.example@evil.com/cb",
          "https://аpp.example/cb",
          "//evil.com/cb",
          "javascript:alert(1)//",
          "http://app.example/cb",
          "https://app.example/cb%00",
          "https://app.example/c%62"
        ]
        for (const redirect_uri of variants) {
          const q: Record<string, string> = { response_type: "code", client_id: app.appKey }
          if (redirect_uri !== undefined) q.redirect_uri = redirect_uri
          assert.strictEqual(pageError(yield* validate(q)), "invalid_request", redirect_uri)
        }
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a repeated client_id or redirect_uri is an error page", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const q = `response_type=code&client_id=${app.appKey}&redirect_uri=${encodeURIComponent(cb)}`
      assert.strictEqual(pageError(yield* validate(`${q}&client_id=${app.appKey}`)), "invalid_request")
      assert.strictEqual(
        pageError(yield* validate(`${q}&redirect_uri=${encodeURIComponent(cb)}`)),
        "invalid_request"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("other errors go to the redirect URI with error, state and iss", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const base = { client_id: app.appKey, redirect_uri: cb, state: "x&code=evil" }
      const cases: ReadonlyArray<[Record<string, string>, string]> = [
        [{}, "invalid_request"],
        [{ response_type: "foo" }, "unsupported_response_type"],
        [{ response_type: "code token" }, "unsupported_response_type"],
        [{ response_type: "CODE" }, "unsupported_response_type"],
        [{ response_type: "code", scope: "bogus" }, "invalid_scope"],
        [{ response_type: "code", client_type: "Desktop" }, "invalid_request"],
        [{ response_type: "code", client_type: "pc" }, "invalid_request"],
        [
          { response_type: "code", code_challenge: "a".repeat(43), code_challenge_method: "plain" },
          "invalid_request"
        ],
        [
          { response_type: "code", code_challenge: "a".repeat(43), code_challenge_method: "S512" },
          "invalid_request"
        ],
        [{ response_type: "code", code_challenge: "short", code_challenge_method: "S256" }, "invalid_request"]
      ]
      for (const [extra, error] of cases) {
        const url = new URL(redirectError(yield* validate({ ...base, ...extra })))
        assert.strictEqual(url.origin + url.pathname, cb)
        assert.strictEqual(url.searchParams.get("error"), error, JSON.stringify(extra))
        assert.strictEqual(url.searchParams.get("state"), "x&code=evil")
        assert.strictEqual(url.searchParams.get("iss"), issuer)
        assert.isNull(url.searchParams.get("code"))
      }
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an empty client_type counts as absent (PC), like every empty parameter", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const req = yield* Authorize.validate(
        `response_type=code&client_id=${app.appKey}&redirect_uri=${encodeURIComponent(cb)}&client_type=`
      )
      assert.strictEqual(req.clientType, "PC")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("implicit for an application without it is unauthorized_client, in the fragment", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp({ grantTypes: ["authorization_code"] })
      const loc = redirectError(
        yield* validate({ response_type: "token", client_id: app.appKey, redirect_uri: cb, state: "s" })
      )
      const frag = new URLSearchParams(new URL(loc).hash.slice(1))
      assert.strictEqual(frag.get("error"), "unauthorized_client")
      assert.strictEqual(frag.get("state"), "s")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an application registered as requiring PKCE refuses a code request without a challenge", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp({ requirePkce: true })
      const loc = redirectError(
        yield* validate({ response_type: "code", client_id: app.appKey, redirect_uri: cb })
      )
      assert.strictEqual(new URL(loc).searchParams.get("error"), "invalid_request")
      const ok = yield* validate({
        response_type: "code",
        client_id: app.appKey,
        redirect_uri: cb,
        code_challenge: yield* Pkce.s256("v".repeat(50)),
        code_challenge_method: "S256"
      })
      assert.isTrue(Either.isRight(ok))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("no scope means all the application's registered scopes; client_type defaults to PC", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp({ scope: "a,b,c" })
      const req = yield* Authorize.validate(
        form({ response_type: "code", client_id: app.appKey, redirect_uri: cb })
      )
      assert.deepStrictEqual([...req.scope], ["a", "b", "c"])
      assert.strictEqual(req.clientType, "PC")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("code: approve delivers code, state and iss in the query; the state is returned exactly", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const { user } = yield* newUser()
      const state = "x&code=evil#y\r\n<script>😀"
      const req = yield* Authorize.validate(
        form({ response_type: "code", client_id: app.appKey, redirect_uri: cb, state })
      )
      const url = new URL(yield* Authorize.approve(req, user.userId))
      assert.strictEqual(url.origin + url.pathname, cb)
      assert.strictEqual(url.searchParams.getAll("code").length, 1)
      assert.strictEqual(url.searchParams.get("state"), state)
      assert.strictEqual(url.searchParams.get("iss"), issuer)
      assert.strictEqual(url.hash, "")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("implicit: approve delivers the token in the fragment, never a refresh token", () =>
    Effect.gen(function* () {
      const { app, basic } = yield* newApp()
      const { user } = yield* newUser()
      const req = yield* Authorize.validate(
        form({ response_type: "token", client_id: app.appKey, redirect_uri: cb, state: "s", scope: "read" })
      )
      const url = new URL(yield* Authorize.approve(req, user.userId))
      assert.strictEqual(url.search, "")
      const frag = new URLSearchParams(url.hash.slice(1))
      assert.strictEqual(frag.get("token_type"), "Bearer")
      assert.strictEqual(frag.get("expires_in"), "3600")
      assert.strictEqual(frag.get("scope"), "read")
      assert.strictEqual(frag.get("state"), "s")
      assert.strictEqual(frag.get("iss"), issuer)
      assert.isNull(frag.get("refresh_token"))
      const introspected = yield* token({ grant_type: "client_credentials" }, basic)
      assert.strictEqual(introspected.status, 200)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "implicit: a user disabled since signing in gets access_denied in the fragment, and no token (D13)",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const { user } = yield* newUser()
        const req = yield* Authorize.validate(
          form({ response_type: "token", client_id: app.appKey, redirect_uri: cb, state: "s", scope: "read" })
        )
        yield* Admin.disableUser(user.userId)
        const frag = new URLSearchParams(new URL(yield* Authorize.approve(req, user.userId)).hash.slice(1))
        assert.deepStrictEqual(
          [frag.get("error"), frag.get("state"), frag.get("access_token")],
          ["access_denied", "s", null]
        )
        const unrevoked = yield* Effect.flatMap(TokenStore, (t) =>
          t.revokeSubject({ appKey: app.appKey, userId: user.userId }, 0)
        )
        assert.strictEqual(unrevoked, 0)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a consent is remembered for (user, application, scopes)", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const { user } = yield* newUser()
      const read = yield* Authorize.validate(
        form({ response_type: "code", client_id: app.appKey, redirect_uri: cb, scope: "read" })
      )
      const both = yield* Authorize.validate(
        form({ response_type: "code", client_id: app.appKey, redirect_uri: cb, scope: "read,write" })
      )
      assert.isFalse(yield* Authorize.hasConsent(read, user.userId))
      yield* Authorize.approve(read, user.userId)
      assert.isTrue(yield* Authorize.hasConsent(read, user.userId))
      assert.isFalse(yield* Authorize.hasConsent(both, user.userId))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("reject sends access_denied with state to the validated redirect URI", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const req = yield* Authorize.validate(
        form({ response_type: "code", client_id: app.appKey, redirect_uri: cb, state: "s" })
      )
      const url = new URL(Authorize.reject(req, issuer, "access_denied", "the user refused"))
      assert.strictEqual(url.searchParams.get("error"), "access_denied")
      assert.strictEqual(url.searchParams.get("state"), "s")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a redirect URI with a query keeps it and gets the code appended", () =>
    Effect.gen(function* () {
      const withQuery = "https://app.example/cb?tenant=1"
      const { app } = yield* newApp({ redirectUris: [withQuery] })
      const { user } = yield* newUser()
      const req = yield* Authorize.validate(
        form({ response_type: "code", client_id: app.appKey, redirect_uri: withQuery })
      )
      const url = new URL(yield* Authorize.approve(req, user.userId))
      assert.strictEqual(url.searchParams.get("tenant"), "1")
      assert.isString(url.searchParams.get("code"))
    }).pipe(Effect.provide(TestLayer()))
  )
})

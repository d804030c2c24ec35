/**
 * The error page of an authorize request whose `redirect_uri` is not registered names the value
 * it received, as text the page escapes (never a link, control and bidirectional characters
 * replaced, a long one cut); the browser is never redirected. And the pages of a native
 * application's private-use scheme name that scheme and let their forms send the browser there.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Pkce from "../src/model/Pkce.js"
import * as Authorize from "../src/oauth/Authorize.js"
import { Browser, errorOf, setup, signIn, view } from "./browser.js"
import { cb, form, newNativeApp, TestLayer } from "./fixtures.js"

describe("the error page of a redirect_uri that is not registered", () => {
  it.effect(
    "names the value received; none when redirect_uri is missing; the unknown client page names none",
    () =>
      Effect.gen(function* () {
        const { app } = yield* setup()
        const b = new Browser()
        const sent = 'https://evil.example/cb?"><script>alert(1)</script>'
        const page = errorOf(
          yield* b.get({ response_type: "code", client_id: app.appKey, redirect_uri: sent })
        )
        assert.deepStrictEqual(page.problem, { reason: "bad_redirect_uri" })
        assert.deepStrictEqual(page.received, Option.some(sent))
        const missing = errorOf(yield* b.get({ response_type: "code", client_id: app.appKey }))
        assert.deepStrictEqual(
          [missing.problem, missing.received],
          [{ reason: "bad_redirect_uri" }, Option.none()]
        )
        const unknown = errorOf(
          yield* b.get({ response_type: "code", client_id: "nope", redirect_uri: sent })
        )
        assert.deepStrictEqual(
          [unknown.problem, unknown.received],
          [{ reason: "unknown_client" }, Option.none()]
        )
        const good = yield* b.get({ response_type: "code", client_id: app.appKey, redirect_uri: cb })
        assert.strictEqual(good.view._tag, "SignIn")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "shows a value refused by the query's Schema too, with control and bidi characters replaced",
    () =>
      Effect.gen(function* () {
        const { app } = yield* setup()
        const page = errorOf(
          yield* new Browser().get({
            response_type: "code",
            client_id: app.appKey,
            redirect_uri: "https://app.example/cb\u0000\u202egpj.exe\n"
          })
        )
        assert.deepStrictEqual(page.received, Option.some("https://app.example/cb\uFFFD\uFFFDgpj.exe\uFFFD"))
      }).pipe(Effect.provide(TestLayer()))
  )

  it("cuts a long value to maxShownValue characters ending with an ellipsis, counting code points", () => {
    const long = `https://evil.example/${"\u{1F600}".repeat(500)}`
    const shown = Authorize.shownValue(long)
    assert.strictEqual(Array.from(shown).length, Authorize.maxShownValue)
    assert.isTrue(shown.endsWith("…"))
    assert.isTrue(long.startsWith(shown.slice(0, -1)))
    const exact = "x".repeat(Authorize.maxShownValue)
    assert.strictEqual(Authorize.shownValue(exact), exact)
  })
})

describe("the pages of a private-use scheme redirect URI", () => {
  it.effect("name the scheme as where the browser returns, and let the forms send it there", () =>
    Effect.gen(function* () {
      const { app } = yield* newNativeApp()
      const { user, password } = yield* setup()
      const query = form({
        response_type: "code",
        client_id: app.appKey,
        redirect_uri: "com.example.app:/cb",
        code_challenge: yield* Pkce.s256("v".repeat(50)),
        code_challenge_method: "S256"
      })
      const b = new Browser()
      const login = view(yield* b.get(query), "SignIn")
      assert.strictEqual(login.redirectHost, "com.example.app")
      assert.deepStrictEqual(login.formTargets, ["'self'", "com.example.app:"])
      yield* signIn(b, query, user.username, password)
      const consent = view(yield* b.get(query), "Consent")
      assert.strictEqual(consent.redirectHost, "com.example.app")
      assert.deepStrictEqual(consent.formTargets, ["'self'", "com.example.app:"])
    }).pipe(Effect.provide(TestLayer()))
  )
})

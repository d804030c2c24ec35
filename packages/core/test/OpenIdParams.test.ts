import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as Authorize from "../src/oauth/Authorize.js"
import { isPlainText } from "../src/oauth/requests/Params.js"
import { Browser, signIn, ticketOf, view } from "./browser.js"
import { cb, form, TestLayer } from "./fixtures.js"
import { allow, assertErrorRedirect, codeOf, openIdSetup, queryOf, signedInWithConsent } from "./openid.js"

describe("OpenID parameters refused", () => {
  const refused: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    [
      "an unknown prompt value",
      { prompt: "login bogus" },
      "prompt values are none, login, consent, select_account"
    ],
    [
      "prompt=none with another value",
      { prompt: "none consent" },
      "prompt=none cannot be combined with another value"
    ],
    ["a negative max_age", { max_age: "-1" }, "max_age must be a non-negative integer"],
    ["a fractional max_age", { max_age: "1.5" }, "max_age must be a non-negative integer"],
    ["a max_age that is no number", { max_age: "soon" }, "max_age must be a non-negative integer"],
    ["a nonce longer than 512 characters", { nonce: "n".repeat(513) }, "nonce is too long or not plain text"],
    ["a nonce with a control character", { nonce: "a\u0000b" }, "nonce is too long or not plain text"]
  ]
  for (const [what, extra, description] of refused) {
    it.effect(`${what}: invalid_request to the client with state and iss, and no session`, () =>
      Effect.gen(function* () {
        const { query } = yield* openIdSetup(extra)
        const a = yield* new Browser().get(query)
        assertErrorRedirect(a, "invalid_request")
        assert.strictEqual(
          new URL(view(a, "Redirect").location).searchParams.get("error_description"),
          description
        )
        assert.isNull(a.setCookie)
      }).pipe(Effect.provide(TestLayer()))
    )
  }

  it.effect("a refused prompt carries back the state as sent, and none when none was sent", () =>
    Effect.gen(function* () {
      const { app } = yield* openIdSetup()
      const base = { response_type: "code", client_id: app.appKey, redirect_uri: cb, scope: "openid" }
      assertErrorRedirect(
        yield* new Browser().get(form({ ...base, state: "x y", prompt: "no" })),
        "invalid_request",
        "x y"
      )
      const bare = view(yield* new Browser().get(form({ ...base, prompt: "no" })), "Redirect")
      assert.isFalse(new URL(bare.location).searchParams.has("state"))
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("requests that are not OpenID ignore prompt, max_age and nonce", () => {
  const ignored = { prompt: "none bogus", max_age: "soon", nonce: "n".repeat(600) }

  it.effect(
    "an application not registered for openid: the sign-in page, and openid is invalid_scope as ever",
    () =>
      Effect.gen(function* () {
        const { query } = yield* openIdSetup({ scope: "read", ...ignored }, "read,write")
        view(yield* new Browser().get(query), "SignIn")
        const { query: openId } = yield* openIdSetup(ignored, "read,write")
        assertErrorRedirect(yield* new Browser().get(openId), "invalid_scope")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "prompt=none without openid in the scope: the sign-in page; the code has no nonce or authTime",
    () =>
      Effect.gen(function* () {
        const { query, user, password } = yield* openIdSetup({ scope: "read", prompt: "none", nonce: "abc" })
        const b = new Browser()
        const back = yield* signIn(b, query, user.username, password)
        // The pending request kept only OAuth 2.0's parameters
        assert.deepStrictEqual([...new URLSearchParams(queryOf(back)).keys()].sort(), [
          "client_id",
          "redirect_uri",
          "response_type",
          "scope",
          "state"
        ])
        const code = yield* codeOf(yield* allow(b, yield* b.get(query)))
        // The stores read an absent field back as null
        assert.isNull(code.nonce ?? null)
        assert.isNull(code.authTime ?? null)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the implicit flow with openid stays OAuth 2.0: prompt=none still shows the sign-in page", () =>
    Effect.gen(function* () {
      const { query } = yield* openIdSetup({ response_type: "token", prompt: "none" })
      view(yield* new Browser().get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("response_type id_token and id_token token stay unsupported_response_type", () =>
    Effect.gen(function* () {
      for (const responseType of ["id_token", "id_token token"]) {
        const { query } = yield* openIdSetup({ response_type: responseType })
        assertErrorRedirect(yield* new Browser().get(query), "unsupported_response_type")
      }
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("OpenID nonce on the code", () => {
  it.effect("without a nonce the code's nonce is null and its authTime the sign-in", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      const at = yield* signedInWithConsent(b, query, user.username, password, 1234)
      const code = yield* codeOf(yield* b.get(query))
      assert.deepStrictEqual([code.nonce, code.authTime], [null, at])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the consent page's Allow stores the nonce of the pending request", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup({ nonce: "ñ 🙂 +&=%" })
      const b = new Browser()
      const back = yield* signIn(b, query, user.username, password)
      const consent = yield* b.get(queryOf(back))
      assert.isString(ticketOf(consent).txn)
      const code = yield* codeOf(yield* allow(b, consent))
      assert.strictEqual(code.nonce, "ñ 🙂 +&=%")
    }).pipe(Effect.provide(TestLayer()))
  )

  // Well-formed strings: a lone surrogate cannot be written in a query at all
  const nonces = FastCheck.oneof(
    FastCheck.string({ unit: "binary", maxLength: 520 }),
    FastCheck.string({ unit: "grapheme-ascii", minLength: 500, maxLength: 520 })
  ).filter((s) => !/\p{Cs}/u.test(s))

  it.effect.prop(
    "any nonce is accepted exactly when it is plain text of at most 512 characters, and the code keeps it exactly",
    [nonces],
    ([nonce]) =>
      Effect.gen(function* () {
        const { app, user } = yield* openIdSetup()
        const query = form({
          response_type: "code",
          client_id: app.appKey,
          redirect_uri: cb,
          scope: "openid",
          nonce
        })
        const accepted = yield* Effect.either(Authorize.validate(query))
        // An empty value counts as absent
        const expected = nonce.length <= 512 && isPlainText(nonce)
        assert.strictEqual(accepted._tag === "Right", expected, JSON.stringify(nonce))
        if (accepted._tag === "Left") {
          assert.strictEqual(accepted.left._tag === "ErrorRedirect" && accepted.left.error, "invalid_request")
          return
        }
        const redirect = yield* Authorize.approveRedirect(accepted.right, user.userId, {
          authTime: 42,
          sid: null,
          sessionHash: null
        })
        const code = yield* codeOf({ view: { _tag: "Redirect", status: 302, ...redirect }, setCookie: null })
        assert.deepStrictEqual([code.nonce, code.authTime], [nonce === "" ? null : nonce, 42])
      }).pipe(Effect.provide(TestLayer())),
    { fastCheck: { numRuns: 60 } }
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { Browser, signIn, ticketOf, view } from "./browser.js"
import { form, TestLayer } from "./fixtures.js"
import {
  allow,
  assertErrorRedirect,
  clientRedirect,
  codeOf,
  openIdSetup,
  queryOf,
  signedInWithConsent
} from "./openid.js"

/** The OpenID query `query` with these parameters added. */
const withParams = (query: string, extra: Record<string, string>) => `${query}&${form(extra)}`

describe("OpenID prompt=none", () => {
  it.effect("without a signed-in session: login_required to the client, no page and no session", () =>
    Effect.gen(function* () {
      const { query } = yield* openIdSetup({ prompt: "none" })
      const b = new Browser()
      const a = yield* b.get(query)
      assertErrorRedirect(a, "login_required")
      assert.strictEqual(view(a, "Redirect").status, 302)
      assert.isNull(a.setCookie)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("signed in without consent for the scope: consent_required, no consent page", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      queryOf(yield* signIn(b, query, user.username, password))
      assertErrorRedirect(yield* b.get(withParams(query, { prompt: "none" })), "consent_required")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "signed in with consent: the code at once, its authTime the sign-in and its nonce the one sent",
    () =>
      Effect.gen(function* () {
        const { query, user, password } = yield* openIdSetup()
        const b = new Browser()
        const at = yield* signedInWithConsent(b, query, user.username, password)
        yield* TestClock.adjust("100 seconds")
        const a = yield* b.get(withParams(query, { prompt: "none", nonce: "n-0S6_WzA2Mj" }))
        assert.strictEqual(clientRedirect(a).get("state"), "s-1")
        const code = yield* codeOf(a)
        assert.deepStrictEqual([code.nonce, code.authTime], ["n-0S6_WzA2Mj", at])
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("OpenID prompt=login and select_account", () => {
  for (const prompt of ["login", "select_account", "login consent"]) {
    it.effect(
      `prompt=${prompt}: the sign-in page though signed in; after it, no second sign-in, and authTime is the new sign-in`,
      () =>
        Effect.gen(function* () {
          const { query, user, password } = yield* openIdSetup()
          const b = new Browser()
          yield* signedInWithConsent(b, query, user.username, password, 1000)
          yield* TestClock.setTime(5000 * 1000)
          const forced = withParams(query, { prompt, nonce: "abc" })
          const page = yield* b.get(forced)
          view(page, "SignIn")
          const back = yield* b.post("login", { ...ticketOf(page), username: user.username, password })
          const again = new URLSearchParams(queryOf(back))
          assert.strictEqual(again.get("prompt"), prompt === "login consent" ? "consent" : null)
          assert.strictEqual(again.get("nonce"), "abc")
          let next = yield* b.get(queryOf(back))
          // prompt=consent stays in the pending request: the consent page although consent exists
          if (prompt === "login consent") {
            view(next, "Consent")
            next = yield* allow(b, next)
          }
          const code = yield* codeOf(next)
          assert.deepStrictEqual([code.authTime, code.nonce], [5000, "abc"])
        }).pipe(Effect.provide(TestLayer()))
    )
  }

  it.effect("prompt=login from an anonymous browser: one sign-in, then the consent page, then the code", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup({ prompt: "login" })
      const b = new Browser()
      yield* TestClock.setTime(2000 * 1000)
      const back = yield* signIn(b, query, user.username, password)
      const consent = yield* b.get(queryOf(back))
      view(consent, "Consent")
      const code = yield* codeOf(yield* allow(b, consent))
      assert.strictEqual(code.authTime, 2000)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a refused password keeps prompt=login in the pending request: the retry still signs in", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup({ prompt: "login" })
      const b = new Browser()
      const page = yield* b.get(query)
      const refused = yield* b.post("login", {
        ...ticketOf(page),
        username: user.username,
        password: "wrong"
      })
      assert.strictEqual(view(refused, "SignIn").status, 400)
      const back = yield* b.post("login", { ...ticketOf(refused), username: user.username, password })
      assert.isNull(new URLSearchParams(queryOf(back)).get("prompt"))
      view(yield* b.get(queryOf(back)), "Consent")
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("OpenID prompt=consent", () => {
  it.effect("the consent page although the scope was allowed; Allow issues the code", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      const at = yield* signedInWithConsent(b, query, user.username, password)
      const consent = yield* b.get(withParams(query, { prompt: "consent" }))
      view(consent, "Consent")
      const code = yield* codeOf(yield* allow(b, consent))
      assert.deepStrictEqual([code.authTime, code.nonce], [at, null])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "from an anonymous browser: after the sign-in the pending request still asks for the consent page",
    () =>
      Effect.gen(function* () {
        const { query, user, password } = yield* openIdSetup()
        const b = new Browser()
        yield* signedInWithConsent(b, query, user.username, password)
        const fresh = new Browser()
        const back = yield* signIn(fresh, withParams(query, { prompt: "consent" }), user.username, password)
        assert.strictEqual(new URLSearchParams(queryOf(back)).get("prompt"), "consent")
        view(yield* fresh.get(queryOf(back)), "Consent")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("Deny answers access_denied with state and iss", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password)
      const consent = yield* b.get(withParams(query, { prompt: "consent" }))
      assertErrorRedirect(
        yield* b.post("authorize", { ...ticketOf(consent), decision: "deny" }),
        "access_denied"
      )
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("OpenID max_age", () => {
  it.effect("a sign-in younger than max_age: the code at once, with the old sign-in as authTime", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      const at = yield* signedInWithConsent(b, query, user.username, password)
      yield* TestClock.adjust("60 seconds")
      const code = yield* codeOf(yield* b.get(withParams(query, { max_age: "60" })))
      assert.strictEqual(code.authTime, at)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a sign-in older than max_age: the sign-in page, then the code with the new sign-in", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password, 1000)
      yield* TestClock.adjust("61 seconds")
      const old = withParams(query, { max_age: "60" })
      const page = yield* b.get(old)
      view(page, "SignIn")
      const back = yield* b.post("login", { ...ticketOf(page), username: user.username, password })
      assert.isNull(new URLSearchParams(queryOf(back)).get("max_age"))
      const code = yield* codeOf(yield* b.get(queryOf(back)))
      assert.strictEqual(code.authTime, 1061)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("older than max_age under prompt=none: login_required", () =>
    Effect.gen(function* () {
      const { query, user, password } = yield* openIdSetup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password)
      yield* TestClock.adjust("61 seconds")
      assertErrorRedirect(
        yield* b.get(withParams(query, { max_age: "60", prompt: "none" })),
        "login_required"
      )
      const code = yield* codeOf(yield* b.get(withParams(query, { max_age: "61", prompt: "none" })))
      assert.strictEqual(code.authTime, 1000)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "max_age=0 is prompt=login: a sign-in even in the same second, then the code; with none, login_required",
    () =>
      Effect.gen(function* () {
        const { query, user, password } = yield* openIdSetup()
        const b = new Browser()
        yield* signedInWithConsent(b, query, user.username, password, 1000)
        assertErrorRedirect(
          yield* b.get(withParams(query, { max_age: "0", prompt: "none" })),
          "login_required"
        )
        const page = yield* b.get(withParams(query, { max_age: "0" }))
        view(page, "SignIn")
        yield* TestClock.adjust("5 seconds")
        const back = yield* b.post("login", { ...ticketOf(page), username: user.username, password })
        const code = yield* codeOf(yield* b.get(queryOf(back)))
        assert.strictEqual(code.authTime, 1005)
      }).pipe(Effect.provide(TestLayer()))
  )
})

/**
 * Step-up: an authorization request with `acr_values`, for an application that requires a second
 * factor, or under `mfa: required`, gets a sign-in at least that strong. A password session of a
 * user with an authenticator app is asked for a code, keeping the session until it is right (then
 * a new session id, the method `totp`, and a new `auth_time`); `prompt=none` answers
 * `interaction_required`; a user with no second factor is led to enrol (`Enrolment.test.ts`); `max_age`
 * keeps working; nothing changes for a request that asks for nothing. Codes computed with
 * `Totp.codeAt`; time from the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as SecondFactor from "../src/security/SecondFactor.js"
import * as Session from "../src/security/Session.js"
import { appCode, Browser, factorForm, view } from "./browser.js"
import { form, TestLayer } from "./fixtures.js"
import { allow, assertErrorRedirect, codeOf, openIdSetup, queryOf, signedInWithConsent } from "./openid.js"

const T0 = 1_800_000_010

/** The OpenID query `query` with these parameters added. */
const withParams = (query: string, extra: Record<string, string>) => `${query}&${form(extra)}`

/** A user signed in with the password alone (consent given), who then adds an authenticator app. */
const passwordSessionWithApp = Effect.gen(function* () {
  const s = yield* openIdSetup()
  const b = new Browser()
  const signedInAt = yield* signedInWithConsent(b, s.query, s.user.username, s.password, T0)
  const { secret } = yield* SecondFactor.enrol(s.user.userId, s.user.username)
  yield* SecondFactor.confirm(s.user.userId, yield* appCode(secret))
  yield* TestClock.adjust("60 seconds")
  return { ...s, b, secret, signedInAt }
})

const methodOf = (b: Browser) =>
  Effect.map(Session.load(b.cookies()), (s) => Option.map(s, (x) => x.method ?? "password"))

describe("step-up by acr_values", () => {
  it.effect(
    "acr_values=urn:latchkey:acr:mfa on a password session: the code page; then a new session id, totp, a new auth_time",
    () =>
      Effect.gen(function* () {
        const { b, query, secret, signedInAt } = yield* passwordSessionWithApp
        const asked = withParams(query, { acr_values: "urn:latchkey:acr:mfa" })
        const before = b.cookie
        const page = yield* b.get(asked)
        assert.strictEqual(view(page, "Factor").status, 200)
        assert.deepStrictEqual(yield* methodOf(b), Option.some("password"), "the session is kept meanwhile")
        const done = view(yield* b.post("login", factorForm(page, yield* appCode(secret))), "Redirect")
        assert.notStrictEqual(b.cookie, before, "a new session id: the privilege changed")
        assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
        const code = yield* codeOf(yield* b.get(queryOf({ view: done, setCookie: null })))
        assert.isTrue((code.authTime ?? 0) > signedInAt, "auth_time is the step-up's")
        // Strong enough now: asked again, no page
        yield* codeOf(yield* b.get(asked))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("prompt=none with acr_values on a weaker sign-in: interaction_required, no page", () =>
    Effect.gen(function* () {
      const { b, query } = yield* passwordSessionWithApp
      const a = yield* b.get(withParams(query, { acr_values: "urn:latchkey:acr:mfa", prompt: "none" }))
      assertErrorRedirect(a, "interaction_required")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("without acr_values, or with only unknown or met values, the flow is as before", () =>
    Effect.gen(function* () {
      const { b, query } = yield* passwordSessionWithApp
      yield* codeOf(yield* b.get(query))
      yield* codeOf(yield* b.get(withParams(query, { acr_values: "urn:example:unknown" })))
      yield* codeOf(yield* b.get(withParams(query, { acr_values: "urn:latchkey:acr:password" })))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("max_age still asks for a new sign-in, and the code step follows it", () =>
    Effect.gen(function* () {
      const { b, query, user, password, secret } = yield* passwordSessionWithApp
      const page = yield* b.get(withParams(query, { max_age: "10" }))
      const signIn = view(page, "SignIn")
      const step = yield* b.post("login", {
        txn: signIn.ticket.txn,
        csrf_token: signIn.ticket.csrf,
        username: user.username,
        password
      })
      view(yield* b.post("login", factorForm(step, yield* appCode(secret))), "Redirect")
      assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("a required second factor", () => {
  it.effect(
    "an application that requires it, for a user with none: led to enrol on the flow's page, nothing issued",
    () =>
      Effect.gen(function* () {
        const { app, user, password, query } = yield* openIdSetup()
        const b = new Browser()
        yield* signedInWithConsent(b, query, user.username, password, T0)
        yield* Admin.updateApplication(app.appKey, { requireMfa: true })
        const enrol = view(yield* b.get(query), "Enrol")
        assert.strictEqual(enrol.status, 200)
        assert.deepStrictEqual(yield* methodOf(b), Option.some("password"), "the session is kept meanwhile")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("mfa: required, for a user with an app: the code page before the consent", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000)
      const { user, password, query } = yield* openIdSetup()
      const { secret } = yield* SecondFactor.enrol(user.userId, user.username)
      yield* SecondFactor.confirm(user.userId, yield* appCode(secret))
      yield* TestClock.adjust("30 seconds")
      const b = new Browser()
      const page = yield* b.get(query)
      const signIn = view(page, "SignIn")
      const step = yield* b.post("login", {
        txn: signIn.ticket.txn,
        csrf_token: signIn.ticket.csrf,
        username: user.username,
        password
      })
      const done = view(yield* b.post("login", factorForm(step, yield* appCode(secret))), "Redirect")
      const consent = yield* b.get(queryOf({ view: done, setCookie: null }))
      view(consent, "Consent")
      yield* codeOf(yield* allow(b, consent))
    }).pipe(Effect.provide(TestLayer({ mfa: "required" })))
  )
})

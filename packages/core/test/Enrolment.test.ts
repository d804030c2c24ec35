/**
 * Enrolment in the authorize flow: a signed-in user without a second factor whose request needs
 * two (`mfa: required`, an application's `require_mfa`, `acr_values` asking for two factors) adds
 * an authenticator app on a page of the flow. The pending secret stays the same across reloads; a
 * wrong code shows the page again and confirms nothing; a right one confirms the app (audited with
 * the user as actor), signs the session in anew with the method `totp`, shows the recovery codes
 * once, and Continue leads to the request, which issues a code of two factors without asking for
 * the password again. A forged mark or ticket changes nothing; `prompt=none` and a request needing
 * a passkey keep their answers. Codes computed with `Totp.codeAt`; time from the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import { markOf } from "../src/interaction/Factor.js"
import * as Interaction from "../src/interaction/Interaction.js"
import type { Config } from "../src/model/Config.js"
import * as SignIn from "../src/model/SignIn.js"
import * as Audit from "../src/security/Audit.js"
import * as SecondFactor from "../src/security/SecondFactor.js"
import * as Session from "../src/security/Session.js"
import * as Strength from "../src/security/Strength.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { type Answer, appCode, Browser, errorOf, signIn, view } from "./browser.js"
import { form, TestLayer } from "./fixtures.js"
import { allow, assertErrorRedirect, codeOf, openIdSetup, queryOf, signedInWithConsent } from "./openid.js"
import { FakeWebAuthn } from "./passkeys.js"

const T0 = 1_800_000_010
const issuer = "http://127.0.0.1:8080"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)
const Required = () => Layer.provideMerge(Audited, TestLayer({ mfa: "required" }))

/** The query of a same-origin path (the request again). */
const queryOfHref = (href: string) => new URL(href, issuer).search.slice(1)

/** The enrolment form of an Enrol page, with `code` and these fields changed. */
const enrolForm = (a: Answer, code: string, changed: Record<string, string> = {}) => {
  const v = view(a, "Enrol")
  return { txn: v.ticket.txn, csrf_token: v.ticket.csrf, ...Object.fromEntries(v.fields), code, ...changed }
}

/** A code of `secret` that is not the one it shows now. */
const wrongCode = (secret: string) =>
  Effect.map(appCode(secret), (right) => (right === "000000" ? "000001" : "000000"))

const methodOf = (b: Browser) =>
  Effect.map(Session.load(b.cookies()), (s) => Option.map(s, (x) => x.method ?? "password"))

const actorsOf = (type: Audit.EventType, userId: string) =>
  Effect.flatMap(AuditStore, (s) =>
    Effect.map(s.tail({ limit: 100 }), (all) =>
      all.filter((e) => e.type === type && e.userId === userId).map((e) => e.actor)
    )
  )

/** Under `mfa: required`, a user without a second factor signs in with the password: the enrolment page. */
const signedInToEnrol = (extra: Record<string, string> = {}) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0 * 1000)
    const s = yield* openIdSetup(extra)
    const b = new Browser()
    const next = yield* signIn(b, s.query, s.user.username, s.password)
    const page = yield* b.get(queryOf(next))
    return { ...s, b, page, signedInQuery: queryOf(next) }
  })

describe("enrolment in the flow: the page", () => {
  it.effect(
    "mfa: required, a user without a second factor: the enrolment page, its secret the same on reload",
    () =>
      Effect.gen(function* () {
        const { b, page, user, signedInQuery } = yield* signedInToEnrol()
        const v = view(page, "Enrol")
        assert.deepStrictEqual([v.status, v.appName, v.username], [200, "Test App", user.username])
        assert.match(v.enrolment.secret, /^[A-Z2-7]{32}$/)
        assert.isTrue(v.enrolment.uri.startsWith("otpauth://totp/"))
        assert.isTrue(v.enrolment.uri.includes(`secret=${v.enrolment.secret}`))
        assert.isTrue(Option.isNone(v.passkeysHref), "passkeys off: no link to add one")
        assert.strictEqual((yield* SecondFactor.status(user.userId)).state, "pending")
        const again = view(yield* b.get(signedInQuery), "Enrol")
        assert.strictEqual(again.enrolment.secret, v.enrolment.secret, "a reload keeps the pending secret")
        assert.notStrictEqual(again.ticket.txn, v.ticket.txn, "a new ticket for the form")
        assert.deepStrictEqual(yield* actorsOf("mfa_enrolled", user.userId), ["user"], "enrolled once")
      }).pipe(Effect.provide(Required()))
  )

  it.effect("an application's require_mfa, for a signed-in user without one: the enrolment page", () =>
    Effect.gen(function* () {
      const { app, user, password, query } = yield* openIdSetup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password, T0)
      yield* Admin.updateApplication(app.appKey, { requireMfa: true })
      const v = view(yield* b.get(query), "Enrol")
      assert.strictEqual(v.appName, "Test App")
      assert.deepStrictEqual(
        v.passkeysHref,
        Option.some(Interaction.accountPath),
        "passkeys on: the account page"
      )
    }).pipe(Effect.provide(Layer.mergeAll(TestLayer(), FakeWebAuthn)))
  )

  it.effect("acr_values asking for two factors, for a signed-in user without one: the enrolment page", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* openIdSetup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password, T0)
      const asked = `${query}&${form({ acr_values: Strength.mfaAcr })}`
      assert.strictEqual(view(yield* b.get(asked), "Enrol").status, 200)
      yield* codeOf(yield* b.get(query))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("prompt=none on a password session: interaction_required, nothing enrolled", () =>
    Effect.gen(function* () {
      const { app, user, password, query } = yield* openIdSetup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password, T0)
      yield* Admin.updateApplication(app.appKey, { requireMfa: true })
      assertErrorRedirect(yield* b.get(`${query}&prompt=none`), "interaction_required")
      assert.strictEqual((yield* SecondFactor.status(user.userId)).state, "none")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a passkey needed (acr_values=phr), none registered: the way to the account page (403), nothing enrolled",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* openIdSetup()
        const b = new Browser()
        yield* signedInWithConsent(b, query, user.username, password, T0)
        const e = errorOf(yield* b.get(`${query}&${form({ acr_values: Strength.phishingResistantAcr })}`))
        assert.deepStrictEqual([e.status, e.problem.reason], [403, "second_factor_needed"])
        assert.strictEqual((yield* SecondFactor.status(user.userId)).state, "none")
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("enrolment in the flow: the code", () => {
  it.effect(
    "a wrong code: the page again (400, bad_code), the same secret, nothing confirmed, the session kept",
    () =>
      Effect.gen(function* () {
        const { b, page, user } = yield* signedInToEnrol()
        const { secret } = view(page, "Enrol").enrolment
        const before = b.cookie
        const again = view(yield* b.post("login", enrolForm(page, yield* wrongCode(secret))), "Enrol")
        assert.deepStrictEqual([again.status, again.problem], [400, Option.some("bad_code" as const)])
        assert.strictEqual(again.enrolment.secret, secret)
        assert.strictEqual((yield* SecondFactor.status(user.userId)).state, "pending")
        assert.strictEqual(b.cookie, before)
        assert.deepStrictEqual(yield* methodOf(b), Option.some("password"))
      }).pipe(Effect.provide(Required()))
  )

  it.effect(
    "a right code: confirmed (audited), a new session id signed in with totp, the recovery codes, Continue to a code of two factors",
    () =>
      Effect.gen(function* () {
        // prompt=login: the password was asked once, and Continue does not ask for it again
        const { b, page, user, query } = yield* signedInToEnrol({ prompt: "login" })
        const before = b.cookie
        const { secret } = view(page, "Enrol").enrolment
        const done = view(yield* b.post("login", enrolForm(page, yield* appCode(secret))), "Enrolled")
        assert.strictEqual(done.recoveryCodes.length, SecondFactor.recoveryCodeCount)
        assert.strictEqual(new Set(done.recoveryCodes).size, SecondFactor.recoveryCodeCount)
        assert.strictEqual((yield* SecondFactor.status(user.userId)).state, "confirmed")
        assert.deepStrictEqual(yield* actorsOf("mfa_confirmed", user.userId), ["user"])
        assert.notStrictEqual(b.cookie, before, "a new session id: the privilege changed")
        assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
        assert.isTrue(Option.isNone(yield* Session.load(before)), "the old session is gone")
        const continued = queryOfHref(done.continueHref)
        assert.isFalse(continued.includes("prompt=login"), "Continue does not ask to sign in again")
        assert.isTrue(query.includes("prompt=login"))
        const consent = yield* b.get(continued)
        view(consent, "Consent")
        const code = yield* codeOf(yield* allow(b, consent))
        const method = SignIn.sessionMethod(code.signInMethod ?? "password")
        assert.strictEqual(Strength.acrOf(method), Strength.mfaAcr)
      }).pipe(Effect.provide(Required()))
  )

  it.effect(
    "a forged, foreign or other step's mark, a missing ticket or one used already: 403, nothing confirmed",
    () =>
      Effect.gen(function* () {
        const { b, page, user, signedInQuery } = yield* signedInToEnrol()
        const { secret } = view(page, "Enrol").enrolment
        const before = b.cookie
        const { user: other } = yield* openIdSetup()
        const session = Option.getOrThrow(yield* Session.load(b.cookies()))
        const forgeries: ReadonlyArray<(a: Answer) => Effect.Effect<Record<string, string>, never, Config>> =
          [
            () => Effect.succeed({ enrol_mark: "" }),
            () => Effect.succeed({ enrol_mark: "forged" }),
            () => Effect.succeed({ factor_user: other.userId }),
            () => Effect.succeed({ factor_user: "" }),
            // The second step's mark of the same user, session and ticket
            (a) =>
              Effect.map(markOf(session, view(a, "Enrol").ticket.txn, user, "factor-step"), (m) => ({
                enrol_mark: m
              })),
            () => Effect.succeed({ txn: "", csrf_token: "" })
          ]
        for (const forge of forgeries) {
          const fresh = yield* b.get(signedInQuery)
          const changed = yield* forge(fresh)
          const a = yield* b.post("login", enrolForm(fresh, yield* appCode(secret), changed))
          assert.strictEqual(errorOf(a).status, 403, JSON.stringify(changed))
        }
        // A ticket taken by a wrong code is not good for a right one
        const used = yield* b.get(signedInQuery)
        view(yield* b.post("login", enrolForm(used, yield* wrongCode(secret))), "Enrol")
        assert.strictEqual(
          errorOf(yield* b.post("login", enrolForm(used, yield* appCode(secret)))).status,
          403
        )
        assert.strictEqual((yield* SecondFactor.status(user.userId)).state, "pending")
        assert.strictEqual(b.cookie, before)
        assert.deepStrictEqual(yield* methodOf(b), Option.some("password"))
      }).pipe(Effect.provide(Required()))
  )
})

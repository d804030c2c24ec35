/**
 * The account page's Authenticator section: add an app (the secret as text and as an otpauth URI,
 * pending until a valid code), ten recovery codes shown once at confirmation, new recovery codes
 * and removal only with a code or the password (a wrong one changes nothing), each change audited
 * with the user as actor; afterwards the page's sign-in asks for a code. Codes computed with
 * `Totp.codeAt` from the secret the page showed; time from the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import type * as Interaction from "../src/interaction/Interaction.js"
import * as Audit from "../src/security/Audit.js"
import * as Session from "../src/security/Session.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { type Answer, accountSignIn, appCode, Browser, factorForm, setup, ticketOf, view } from "./browser.js"
import { TestLayer } from "./fixtures.js"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)
const T0 = 1_800_000_010_000

/** The Authenticator section of an account page. */
const authenticator = (a: Answer) => {
  const found = view(a, "Account").sections.find((s) => s._tag === "Authenticator")
  if (found === undefined) return assert.fail("no Authenticator section")
  return found as Extract<Interaction.AccountSection, { _tag: "Authenticator" }>
}

/** Sign in on the account page with the password alone. */
const signedIn = (username: string, password: string) =>
  Effect.gen(function* () {
    const b = new Browser()
    const page = yield* b.account()
    view(yield* b.post("account", { ...ticketOf(page), action: "signin", username, password }), "Redirect")
    return b
  })

/** Post a form of the account page `b` shows now. */
const postNow = (b: Browser, fields: Record<string, string>) =>
  Effect.flatMap(b.account(), (page) => b.post("account", { ...ticketOf(page), ...fields }))

/** Add and confirm an app on the page: the secret it showed and the recovery codes. */
const enrol = (b: Browser) =>
  Effect.gen(function* () {
    view(yield* postNow(b, { action: "totp_enrol" }), "Redirect")
    const pending = authenticator(yield* b.account())
    const { secret } = Option.getOrThrow(pending.enrolment)
    const confirmed = yield* postNow(b, { action: "totp_confirm", code: yield* appCode(secret) })
    const codes = Option.getOrThrow(authenticator(confirmed).recoveryCodes)
    yield* TestClock.adjust("30 seconds")
    return { secret, codes }
  })

const actorsOf = (type: Audit.EventType, userId: string) =>
  Effect.flatMap(AuditStore, (s) =>
    Effect.map(s.tail({ limit: 100 }), (all) =>
      all.filter((e) => e.type === type && e.userId === userId).map((e) => e.actor)
    )
  )

describe("account page: authenticator app", () => {
  it.effect(
    "add: the secret and its otpauth URI until a valid code; then ten recovery codes, shown once",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const before = authenticator(yield* b.account())
        assert.deepStrictEqual([before.state, Option.isNone(before.enrolment)], ["none", true])
        view(yield* postNow(b, { action: "totp_enrol" }), "Redirect")
        const pending = authenticator(yield* b.account())
        const { secret, uri } = Option.getOrThrow(pending.enrolment)
        assert.strictEqual(pending.state, "pending")
        assert.match(secret, /^[A-Z2-7]{32}$/)
        assert.isTrue(uri.startsWith("otpauth://totp/") && uri.includes(`secret=${secret}`))
        const right = yield* appCode(secret)
        const wrongPage = yield* postNow(b, {
          action: "totp_confirm",
          code: right === "000000" ? "000001" : "000000"
        })
        assert.strictEqual(view(wrongPage, "Account").status, 400)
        assert.deepStrictEqual(authenticator(wrongPage).problem, Option.some("bad_code" as const))
        assert.strictEqual(authenticator(wrongPage).state, "pending", "a wrong code confirms nothing")
        const confirmed = yield* postNow(b, { action: "totp_confirm", code: right })
        const codes = Option.getOrThrow(authenticator(confirmed).recoveryCodes)
        assert.strictEqual(codes.length, 10)
        assert.strictEqual(new Set(codes).size, 10)
        const after = authenticator(yield* b.account())
        assert.deepStrictEqual(
          [
            after.state,
            after.recoveryCodesLeft,
            Option.isNone(after.recoveryCodes),
            Option.isNone(after.enrolment)
          ],
          ["confirmed", 10, true, true],
          "the codes and the secret are not shown again"
        )
        assert.deepStrictEqual(yield* actorsOf("mfa_enrolled", user.userId), ["user"])
        assert.deepStrictEqual(yield* actorsOf("mfa_confirmed", user.userId), ["user"])
      }).pipe(Effect.provide(Layer.provideMerge(Audited, TestLayer())))
  )

  it.effect("afterwards the page's sign-in asks for a code; a recovery code works in its place once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const { user, password } = yield* setup()
      const { codes } = yield* enrol(yield* signedIn(user.username, password))
      const b = new Browser()
      const step = yield* accountSignIn(b, user.username, password)
      view(yield* b.post("account", factorForm(step, codes[3] as string)), "Redirect")
      assert.strictEqual(authenticator(yield* b.account()).recoveryCodesLeft, 9)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "new recovery codes need a code or the password: a wrong one changes nothing, the old codes end",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const { codes } = yield* enrol(b)
        const refused = yield* postNow(b, { action: "totp_recovery", proof: "not the password" })
        assert.deepStrictEqual(
          [
            view(refused, "Account").status,
            authenticator(refused).problem,
            Option.isNone(authenticator(refused).recoveryCodes)
          ],
          [400, Option.some("bad_proof" as const), true]
        )
        const fresh = Option.getOrThrow(
          authenticator(yield* postNow(b, { action: "totp_recovery", proof: password })).recoveryCodes
        )
        assert.strictEqual(fresh.length, 10)
        assert.isFalse(fresh.includes(codes[0] as string))
        assert.deepStrictEqual(yield* actorsOf("mfa_recovery_codes_replaced", user.userId), ["user"])
        // An old code no longer signs in; a new one does
        const other = new Browser()
        const step = yield* accountSignIn(other, user.username, password)
        const again = yield* other.post("account", factorForm(step, codes[0] as string))
        assert.deepStrictEqual(view(again, "Factor").problem, Option.some("bad_code" as const))
        view(yield* other.post("account", factorForm(again, fresh[0] as string)), "Redirect")
      }).pipe(Effect.provide(Layer.provideMerge(Audited, TestLayer())))
  )

  it.effect(
    "remove with a code of the app: the app and its codes gone, audited; sign-in is the password alone",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const { secret } = yield* enrol(b)
        const removed = view(
          yield* postNow(b, { action: "totp_remove", proof: yield* appCode(secret) }),
          "Redirect"
        )
        const q = removed.location.slice(removed.location.indexOf("?") + 1)
        const page = yield* b.account(q)
        assert.deepStrictEqual(view(page, "Account").notice, Option.some("authenticator_removed" as const))
        assert.deepStrictEqual(
          [authenticator(page).state, authenticator(page).recoveryCodesLeft],
          ["none", 0]
        )
        assert.deepStrictEqual(yield* actorsOf("mfa_reset", user.userId), ["user"])
        view(yield* signedIn(user.username, password).pipe(Effect.flatMap((o) => o.account())), "Account")
      }).pipe(Effect.provide(Layer.provideMerge(Audited, TestLayer())))
  )
})

/** The session `b` is signed in to: its method (a password when absent). */
const methodOf = (b: Browser) =>
  Effect.map(Session.load(b.cookies()), (s) => Option.map(s, (x) => x.method ?? "password"))

describe("account page: confirming the app raises the session", () => {
  it.effect("a password session: signed in anew (a new id, the old one gone) with the method totp", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const { user, password } = yield* setup()
      const b = yield* signedIn(user.username, password)
      const before = b.cookie
      assert.deepStrictEqual(yield* methodOf(b), Option.some("password"))
      yield* enrol(b)
      assert.notStrictEqual(b.cookie, before, "a new session id: the privilege changed")
      assert.isTrue(Option.isNone(yield* Session.load(before)), "the old session is gone")
      assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
      view(yield* b.account(), "Account")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a passkey session: kept as it is, never lowered to totp", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const { user, password } = yield* setup()
      const b = yield* signedIn(user.username, password)
      // As a passkey sign-in leaves it: the session signed in anew with the method `passkey`
      const session = Option.getOrThrow(yield* Session.load(b.cookies()))
      const passkey = yield* Session.signingIn(session, user, { path: "/", secure: false }, "passkey")
      assert.isTrue(yield* passkey.write)
      b.cookie = passkey.value.split(";")[0]
      const before = b.cookie
      const { codes } = yield* enrol(b)
      assert.strictEqual(codes.length, 10)
      assert.strictEqual(b.cookie, before, "the same session")
      assert.deepStrictEqual(yield* methodOf(b), Option.some("passkey"))
    }).pipe(Effect.provide(TestLayer()))
  )
})

/**
 * The account page: sign-in required (the consents page's form, back to the page), the password
 * change (the current password checked and throttled as a sign-in, the new one by the rules of
 * every password, the other sessions ended and this one kept), the signed-in sessions (listed,
 * one or all others ended), the link to the consents page, the audit events with the user as
 * actor, and the forms' CSRF checks. Time from the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as Interaction from "../src/interaction/Interaction.js"
import * as Accounts from "../src/security/Accounts.js"
import * as Audit from "../src/security/Audit.js"
import * as Throttle from "../src/security/Throttle.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { type Answer, Browser, errorOf, setup, ticketOf, view } from "./browser.js"
import { TestLayer } from "./fixtures.js"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)

/** Sign in on the account page; returns the browser, signed in. */
const signedIn = (username: string, password: string) =>
  Effect.gen(function* () {
    const b = new Browser()
    const page = yield* b.account()
    const form = view(page, "ConsentsSignIn")
    assert.strictEqual(form.purpose, "account")
    const r = view(
      yield* b.post("account", { ...ticketOf(page), action: "signin", username, password }),
      "Redirect"
    )
    assert.deepStrictEqual([r.status, r.location], [303, Interaction.accountPath])
    return b
  })

/** The account page's view. */
const accountOf = (a: Answer) => view(a, "Account")

/** One section of the account page, by tag. */
const section = <T extends Interaction.AccountSection["_tag"]>(a: Answer, tag: T) => {
  const found = accountOf(a).sections.find((s) => s._tag === tag)
  if (found === undefined) return assert.fail(`no ${tag} section`)
  return found as Extract<Interaction.AccountSection, { _tag: T }>
}

/** Post a form of the account page shown in `page`. */
const postOn = (b: Browser, page: Answer, fields: Record<string, string>) =>
  b.post("account", { ...ticketOf(page), ...fields })

/** Change the password on the page `b` shows now. */
const changePassword = (b: Browser, current: string, next: string, confirm = next) =>
  Effect.flatMap(b.account(), (page) =>
    postOn(b, page, {
      action: "password",
      current_password: current,
      new_password: next,
      confirm_password: confirm
    })
  )

/** Follow a 303 back to the account page, with its query. */
const follow = (b: Browser, a: Answer) => {
  const r = view(a, "Redirect")
  assert.strictEqual(r.status, 303)
  const q = r.location.indexOf("?")
  return b.account(q === -1 ? "" : r.location.slice(q + 1))
}

const events = (type: Audit.EventType) =>
  Effect.flatMap(AuditStore, (s) =>
    Effect.map(s.tail({ limit: 100 }), (all) => all.filter((e) => e.type === type))
  )

describe("account page: sign-in required", () => {
  it.effect(
    "signed out, the page is the sign-in form; signed in, its sections in order, this session marked",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const page = yield* b.account("ui_locales=zh-CN")
        const v = accountOf(page)
        assert.deepStrictEqual(
          [v.status, v.username, v.action, v.formTargets, v.uiLocales],
          [200, user.username, `${Interaction.accountPath}?ui_locales=zh-CN`, ["'self'"], ["zh-CN"]]
        )
        assert.deepStrictEqual(
          v.sections.map((s) => s._tag),
          ["Password", "Authenticator", "Sessions", "Applications"]
        )
        assert.strictEqual(section(page, "Applications").href, `${Interaction.consentsPath}?ui_locales=zh-CN`)
        const sessions = section(page, "Sessions").sessions
        assert.strictEqual(sessions.length, 1)
        assert.isTrue(sessions[0]?.current)
        assert.isTrue(Option.isNone(v.notice))
        assert.isTrue(Option.isNone(section(page, "Password").problem))
        // The sign-in form of a consents page ticket is not this page's, and the other way round
        const head = yield* b.request("account", "HEAD", "")
        view(head, "Head")
        assert.strictEqual(errorOf(yield* b.request("account", "PUT", "")).status, 405)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a wrong password on the page's sign-in form is the sign-in form again, 400", () =>
    Effect.gen(function* () {
      const { user } = yield* setup()
      const b = new Browser()
      const page = yield* b.account()
      const again = view(
        yield* postOn(b, page, { action: "signin", username: user.username, password: "wrong password" }),
        "ConsentsSignIn"
      )
      assert.deepStrictEqual(
        [again.status, again.purpose, again.action],
        [400, "account", Interaction.accountPath]
      )
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("account page: password change", () => {
  it.effect(
    "the right current password sets the new one, ends the user's other sessions and keeps this one, audited as the user's",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const here = yield* signedIn(user.username, password)
        const there = yield* signedIn(user.username, password)
        const stranger = yield* setup()
        const theirs = yield* signedIn(stranger.user.username, stranger.password)
        assert.strictEqual(section(yield* here.account(), "Sessions").sessions.length, 2)
        yield* TestClock.adjust("10 seconds")
        const changed = yield* changePassword(here, password, "a brand new passphrase")
        assert.isString(changed.deviceCookie, "this browser stays a trusted device under the new password")
        const after = yield* follow(here, changed)
        assert.deepStrictEqual(accountOf(after).notice, Option.some("password_changed" as const))
        assert.deepStrictEqual(
          section(after, "Sessions").sessions.map((s) => s.current),
          [true],
          "the other session ended"
        )
        view(yield* there.account(), "ConsentsSignIn")
        accountOf(yield* theirs.account())
        // The new password signs in, the old one no longer
        yield* signedIn(user.username, "a brand new passphrase")
        const old = yield* Effect.either(Accounts.authenticate(user.username, password, "192.0.2.9"))
        assert.isTrue(old._tag === "Left")
        const [event] = yield* events("password_changed")
        assert.deepStrictEqual(
          [event?.userId, event?.actor, event?.address, event?.detail],
          [user.userId, "user", "192.0.2.1", "other sessions ended"]
        )
      }).pipe(Effect.provide(Layer.provideMerge(TestLayer(), Audited)))
  )

  it.effect(
    "a wrong current password is a failed sign-in: 400, recorded, nothing changed, and throttled",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const other = yield* signedIn(user.username, password)
        const refused = yield* changePassword(b, "not my password", "a brand new passphrase")
        const v = accountOf(refused)
        assert.strictEqual(v.status, 400)
        assert.deepStrictEqual(section(refused, "Password").problem, Option.some("bad_current" as const))
        assert.strictEqual((yield* events("signin_failed")).length, 1)
        assert.strictEqual((yield* events("password_changed")).length, 0)
        accountOf(yield* other.account())
        // The second failure locks the username out (freeFailures 1): even the right password waits
        yield* changePassword(b, "not my password", "a brand new passphrase")
        const locked = errorOf(yield* changePassword(b, password, "a brand new passphrase"))
        assert.deepStrictEqual([locked.status, locked.problem.reason], [429, "rate_limited"])
        assert.deepStrictEqual(Option.getOrThrow(locked.back), {
          to: "account",
          href: Interaction.accountPath
        })
        assert.strictEqual((yield* events("password_changed")).length, 0)
        yield* TestClock.adjust("121 seconds")
        accountOf(yield* follow(b, yield* changePassword(b, password, "a brand new passphrase")))
        assert.strictEqual((yield* events("password_changed")).length, 1)
      }).pipe(
        Effect.provide(
          Layer.provideMerge(
            TestLayer(
              {},
              {
                ...Throttle.defaultPolicy,
                freeFailures: 1,
                addressFreeFailures: 50,
                baseLockout: 120,
                maxLockout: 120
              }
            ),
            Audited
          )
        )
      )
  )

  it.effect(
    "a new password the rules refuse, a confirmation that differs or an empty field: 400, nothing counted or changed",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const cases: ReadonlyArray<readonly [string, string, string, Interaction.PasswordProblem]> = [
          [password, "short", "short", "invalid_new"],
          [password, "a brand new passphrase", "a brand new passphras", "mismatch"],
          ["", "a brand new passphrase", "a brand new passphrase", "missing_fields"],
          [password, "new\u0000passphrase", "new\u0000passphrase", "invalid_new"]
        ]
        for (const [current, next, confirm, problem] of cases) {
          const a = yield* changePassword(b, current, next, confirm)
          assert.strictEqual(accountOf(a).status, 400)
          assert.deepStrictEqual(section(a, "Password").problem, Option.some(problem), problem)
        }
        assert.strictEqual(
          (yield* events("signin_failed")).length,
          0,
          "the current password was never checked"
        )
        assert.strictEqual((yield* events("password_changed")).length, 0)
        yield* signedIn(user.username, password)
      }).pipe(Effect.provide(Layer.provideMerge(TestLayer(), Audited)))
  )
})

describe("account page: signed-in sessions", () => {
  it.effect(
    "Sign out of one other session ends it alone, audited; a handle of no session of the user ends nothing",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const here = yield* signedIn(user.username, password)
        const there = yield* signedIn(user.username, password)
        const third = yield* signedIn(user.username, password)
        const stranger = yield* setup()
        const theirs = yield* signedIn(stranger.user.username, stranger.password)
        const theirHandle = section(yield* theirs.account(), "Sessions").sessions[0]?.handle as string
        // Another user's handle (or nonsense) ends nothing
        for (const handle of [theirHandle, "nonsense"]) {
          const page = yield* here.account()
          const r = view(yield* postOn(here, page, { action: "end_session", session: handle }), "Redirect")
          assert.strictEqual(r.location, Interaction.accountPath)
        }
        accountOf(yield* theirs.account())
        assert.strictEqual(section(yield* here.account(), "Sessions").sessions.length, 3)
        // The session of `there`, as listed on `there`'s own page (its current one)
        const thereHandle = section(yield* there.account(), "Sessions").sessions.find(
          (s) => s.current
        )?.handle
        const page = yield* here.account()
        const ended = yield* follow(
          here,
          yield* postOn(here, page, { action: "end_session", session: thereHandle as string })
        )
        assert.deepStrictEqual(accountOf(ended).notice, Option.some("session_ended" as const))
        assert.strictEqual(section(ended, "Sessions").sessions.length, 2)
        view(yield* there.account(), "ConsentsSignIn")
        accountOf(yield* third.account())
        const [event] = yield* events("session_ended")
        assert.deepStrictEqual(
          [event?.userId, event?.actor, event?.detail],
          [user.userId, "user", "one other session"]
        )
      }).pipe(Effect.provide(Layer.provideMerge(TestLayer(), Audited)))
  )

  it.effect("Sign out of all others keeps this session only", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const here = yield* signedIn(user.username, password)
      const others = [yield* signedIn(user.username, password), yield* signedIn(user.username, password)]
      const page = yield* here.account()
      const after = yield* follow(here, yield* postOn(here, page, { action: "end_others" }))
      assert.deepStrictEqual(accountOf(after).notice, Option.some("others_ended" as const))
      assert.deepStrictEqual(
        section(after, "Sessions").sessions.map((s) => s.current),
        [true]
      )
      for (const b of others) view(yield* b.account(), "ConsentsSignIn")
      const [event] = yield* events("session_ended")
      assert.deepStrictEqual([event?.actor, event?.detail], ["user", "every other session"])
    }).pipe(Effect.provide(Layer.provideMerge(TestLayer(), Audited)))
  )

  it.effect("a notice mark made by another session, or forged, is not shown", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const here = yield* signedIn(user.username, password)
      const there = yield* signedIn(user.username, password)
      const page = yield* here.account()
      const r = view(yield* postOn(here, page, { action: "end_others" }), "Redirect")
      const query = r.location.slice(r.location.indexOf("?") + 1)
      const again = yield* signedIn(user.username, password)
      assert.isTrue(Option.isNone(accountOf(yield* again.account(query)).notice))
      assert.isTrue(Option.isNone(accountOf(yield* here.account("done=others_ended.forged")).notice))
      view(yield* there.account(), "ConsentsSignIn")
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("account page: CSRF", () => {
  it.effect(
    "a form without its ticket, posted twice, cross-site, or with another page's ticket is refused, 403, nothing changed",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const here = yield* signedIn(user.username, password)
        const other = yield* signedIn(user.username, password)
        const forbidden = (a: Answer) => assert.deepStrictEqual(errorOf(a).status, 403)
        forbidden(yield* here.post("account", { action: "end_others" }))
        const page = yield* here.account()
        forbidden(yield* postOn(here, page, { action: "end_others", csrf_token: "wrong" }))
        const fresh = yield* here.account()
        forbidden(
          yield* here.post(
            "account",
            { ...ticketOf(fresh), action: "end_others" },
            { "sec-fetch-site": "cross-site" }
          )
        )
        forbidden(
          yield* here.post(
            "account",
            { ...ticketOf(fresh), action: "end_others" },
            { origin: "https://evil.example" }
          )
        )
        // The authorize flow's consent ticket continues an authorize request, never this page
        const consent = yield* here.get(query)
        forbidden(yield* postOn(here, consent, { action: "end_others" }))
        accountOf(yield* other.account())
        // The page's own ticket works once
        const last = yield* here.account()
        view(yield* postOn(here, last, { action: "end_others" }), "Redirect")
        forbidden(yield* postOn(here, last, { action: "end_others" }))
      }).pipe(Effect.provide(TestLayer()))
  )
})

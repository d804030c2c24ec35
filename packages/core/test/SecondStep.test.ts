/**
 * The second sign-in step: after the right password of a user with an authenticator app, a page
 * asks for a code (or a recovery code in the same field); the session is signed in only once the
 * code is right, with the method `totp`; a wrong code is the page again (400) without asking for
 * the password again; the form's user and mark cannot be forged or moved; a user without an app
 * signs in as before. Codes computed with `Totp.codeAt` from the secret; time from the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Interaction from "../src/interaction/Interaction.js"
import * as SecondFactor from "../src/security/SecondFactor.js"
import * as Session from "../src/security/Session.js"
import { accountSignIn, appCode, Browser, errorOf, factorForm, setup, signIn, view } from "./browser.js"
import { TestLayer } from "./fixtures.js"

const T0 = 1_800_000_010_000

/** A user with a confirmed authenticator app, and an authorize request of theirs. */
const enrolled = Effect.gen(function* () {
  yield* TestClock.setTime(T0)
  const s = yield* setup()
  const { secret } = yield* SecondFactor.enrol(s.user.userId, s.user.username)
  const codes = yield* SecondFactor.confirm(s.user.userId, yield* appCode(secret))
  // The confirming code's step is used: the next one
  yield* TestClock.adjust("30 seconds")
  return { ...s, secret, codes }
})

/** The method of the browser's session, if signed in. */
const methodOf = (b: Browser) =>
  Effect.map(Session.load(b.cookies()), (s) =>
    Option.map(
      Option.filter(s, (x) => x.userId !== null),
      (x) => x.method ?? "password"
    )
  )

describe("the second sign-in step", () => {
  it.effect("the right password is the code page, not a sign-in; the right code signs in as totp", () =>
    Effect.gen(function* () {
      const { user, password, query, secret } = yield* enrolled
      const b = new Browser()
      const step = yield* signIn(b, query, user.username, password)
      const page = view(step, "Factor")
      assert.deepStrictEqual(
        [page.status, page.username, page.appName, page.action],
        [200, user.username, Option.some("Test App"), "/oauth2/oauth2/login"]
      )
      assert.isTrue(Option.isNone(yield* methodOf(b)))
      // Not signed in yet: the authorize request is still the sign-in page
      view(yield* b.get(query), "SignIn")
      const done = view(yield* b.post("login", factorForm(step, yield* appCode(secret))), "Redirect")
      assert.deepStrictEqual([done.status, done.location], [303, `/oauth2/oauth2/authorize?${query}`])
      assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
      view(yield* b.get(query), "Consent")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a wrong code is the page again (400), the password not asked again; then the right one", () =>
    Effect.gen(function* () {
      const { user, password, query, secret } = yield* enrolled
      const b = new Browser()
      const step = yield* signIn(b, query, user.username, password)
      const right = yield* appCode(secret)
      const wrong = right === "000000" ? "000001" : "000000"
      const again = yield* b.post("login", factorForm(step, wrong))
      const v = view(again, "Factor")
      assert.deepStrictEqual([v.status, v.problem], [400, Option.some("bad_code" as const)])
      assert.isTrue(Option.isNone(yield* methodOf(b)))
      // The form of the refused code is spent; the page's new one takes the right code
      assert.strictEqual(errorOf(yield* b.post("login", factorForm(step, right))).status, 403)
      view(yield* b.post("login", factorForm(again, right)), "Redirect")
      assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a recovery code in the same field signs in once; a code is good once within its window", () =>
    Effect.gen(function* () {
      const { user, password, query, secret, codes } = yield* enrolled
      const recovery = codes[0] as string
      const first = new Browser()
      view(
        yield* first.post(
          "login",
          factorForm(yield* signIn(first, query, user.username, password), recovery)
        ),
        "Redirect"
      )
      assert.deepStrictEqual(yield* methodOf(first), Option.some("totp"))
      const second = new Browser()
      const used = yield* second.post(
        "login",
        factorForm(yield* signIn(second, query, user.username, password), recovery)
      )
      assert.deepStrictEqual(view(used, "Factor").problem, Option.some("bad_code" as const))
      const code = yield* appCode(secret)
      view(yield* second.post("login", factorForm(used, code)), "Redirect")
      const third = new Browser()
      const replay = yield* third.post(
        "login",
        factorForm(yield* signIn(third, query, user.username, password), code)
      )
      assert.deepStrictEqual(view(replay, "Factor").problem, Option.some("bad_code" as const))
      assert.isTrue(Option.isNone(yield* methodOf(third)))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "another user's id in the form, or a mark of another form, is refused (403) and signs nobody in",
    () =>
      Effect.gen(function* () {
        const { user, password, query, secret } = yield* enrolled
        const other = yield* setup()
        const b = new Browser()
        const step = yield* signIn(b, query, user.username, password)
        const forged = { ...factorForm(step, yield* appCode(secret)), factor_user: other.user.userId }
        assert.strictEqual(errorOf(yield* b.post("login", forged)).status, 403)
        const next = yield* signIn(b, query, user.username, password)
        const moved = {
          ...factorForm(next, yield* appCode(secret)),
          factor_mark: factorForm(step, "").factor_mark ?? ""
        }
        assert.strictEqual(errorOf(yield* b.post("login", moved)).status, 403)
        assert.isTrue(Option.isNone(yield* methodOf(b)))
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a user without an authenticator app signs in with the password alone, as before", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      view(yield* signIn(b, query, user.username, password), "Redirect")
      assert.deepStrictEqual(yield* methodOf(b), Option.some("password"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the account page's own sign-in asks for the code too, and comes back to the page", () =>
    Effect.gen(function* () {
      const { user, password, secret } = yield* enrolled
      const b = new Browser()
      const step = yield* accountSignIn(b, user.username, password)
      const v = view(step, "Factor")
      assert.deepStrictEqual([v.action, v.appName], [Interaction.accountPath, Option.none()])
      const done = view(yield* b.post("account", factorForm(step, yield* appCode(secret))), "Redirect")
      assert.strictEqual(done.location, Interaction.accountPath)
      view(yield* b.account(), "Account")
      assert.deepStrictEqual(yield* methodOf(b), Option.some("totp"))
    }).pipe(Effect.provide(TestLayer()))
  )
})

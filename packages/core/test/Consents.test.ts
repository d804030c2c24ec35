import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as Interaction from "../src/interaction/Interaction.js"
import * as Metadata from "../src/oauth/Metadata.js"
import * as Audit from "../src/security/Audit.js"
import * as Throttle from "../src/security/Throttle.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { ConsentStore } from "../src/storage/ConsentStore.js"
import * as Memory from "../src/storage/Memory.js"
import { UserStore } from "../src/storage/UserStore.js"
import { type Answer, Browser, errorOf, setup, signIn, ticketOf, view } from "./browser.js"
import { cb, form, newApp, TestLayer, token } from "./fixtures.js"

const Audited = Layer.provideMerge(Audit.layer, Memory.auditLayer)

/** Sign in on the consents page (`query` kept in its links); returns the 303. */
const signInHere = (b: Browser, username: string, password: string, query = "") =>
  Effect.gen(function* () {
    const page = yield* b.consents(query)
    view(page, "ConsentsSignIn")
    return yield* b.post("consents", { ...ticketOf(page), action: "signin", username, password }, {}, query)
  })

/** Allow `query`'s request in the flow (signed in already); returns the code. */
const allow = (b: Browser, query: string) =>
  Effect.gen(function* () {
    const a = yield* b.get(query)
    const r =
      a.view._tag === "Redirect"
        ? a.view
        : view(yield* b.post("authorize", { ...ticketOf(a), decision: "allow" }), "Redirect")
    return new URL(r.location).searchParams.get("code") as string
  })

/** The query (without `?`) of a same-origin location. */
const queryOf = (location: string) => location.slice(location.indexOf("?") + 1)

/** The location a 303 answer sends the browser to. */
const see = (a: Answer) => {
  const r = view(a, "Redirect")
  assert.strictEqual(r.status, 303)
  return r.location
}

describe("consents page: signing in", () => {
  it.effect("signed out, the page is a sign-in form that comes back to it under a new session id", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const b = new Browser()
      const page = yield* b.consents()
      const signInView = view(page, "ConsentsSignIn")
      assert.deepStrictEqual(
        [signInView.status, signInView.action, signInView.formTargets],
        [200, Interaction.consentsPath, ["'self'"]]
      )
      assert.include(page.setCookie as string, "Path=/oauth2/oauth2;")
      const before = b.cookie
      const signedIn = yield* b.post("consents", {
        ...ticketOf(page),
        action: "signin",
        username: user.username,
        password
      })
      assert.strictEqual(see(signedIn), Interaction.consentsPath)
      assert.notStrictEqual(b.cookie, before)
      assert.isString(b.device)
      const list = view(yield* b.consents(), "Consents")
      assert.deepStrictEqual([list.username, list.consents], [user.username, []])
      // the old id signs nobody in
      view(yield* new Browser({ cookie: before as string }).consents(), "ConsentsSignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a missing field or a wrong password shows the form again with 400; a lockout links back here",
    () =>
      Effect.gen(function* () {
        const { user } = yield* setup()
        const missing = view(yield* signInHere(new Browser(), user.username, ""), "ConsentsSignIn")
        assert.deepStrictEqual(
          [missing.status, Option.getOrThrow(missing.error)],
          [400, { problem: "missing_fields", username: user.username }]
        )
        const wrong = view(yield* signInHere(new Browser(), user.username, "wrong-1"), "ConsentsSignIn")
        assert.deepStrictEqual(Option.getOrThrow(wrong.error), {
          problem: "bad_credentials",
          username: user.username
        })
        yield* signInHere(new Browser(), user.username, "wrong-2")
        yield* signInHere(new Browser(), user.username, "wrong-3")
        const locked = errorOf(yield* signInHere(new Browser(), user.username, "wrong-4", "ui_locales=zh"))
        assert.deepStrictEqual(
          [locked.status, locked.problem, locked.uiLocales],
          [429, { reason: "rate_limited", seconds: 120 }, ["zh"]]
        )
        assert.deepStrictEqual(Option.getOrThrow(locked.back), {
          to: "consents",
          href: `${Interaction.consentsPath}?ui_locales=zh`
        })
      }).pipe(
        Effect.provide(
          TestLayer(
            {},
            {
              ...Throttle.defaultPolicy,
              freeFailures: 2,
              addressFreeFailures: 50,
              baseLockout: 120,
              maxLockout: 120
            }
          )
        )
      )
  )

  it.effect("Sign out ends the session: the page asks to sign in again, also with the old cookie", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const b = new Browser()
      yield* signInHere(b, user.username, password)
      const signedIn = b.cookie as string
      const list = yield* b.consents()
      assert.strictEqual(
        see(yield* b.post("consents", { ...ticketOf(list), action: "signout" })),
        Interaction.consentsPath
      )
      assert.notStrictEqual(b.cookie, signedIn)
      view(yield* b.consents(), "ConsentsSignIn")
      view(yield* new Browser({ cookie: signedIn }).consents(), "ConsentsSignIn")
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("consents page: the list and Withdraw", () => {
  it.effect("lists each authorised application with its name, scopes and when it was allowed", () =>
    Effect.gen(function* () {
      const { app, user, password, query } = yield* setup()
      const other = yield* newApp({ name: "Other App", scope: "read" })
      const b = new Browser()
      yield* TestClock.adjust("1000 seconds")
      yield* signIn(b, query, user.username, password)
      yield* allow(b, query)
      yield* TestClock.adjust("500 seconds")
      yield* allow(b, form({ response_type: "code", client_id: other.app.appKey, redirect_uri: cb }))
      const list = view(yield* b.consents(), "Consents")
      const byKey = [...list.consents].sort((x, y) => x.appName.localeCompare(y.appName))
      assert.deepStrictEqual(
        byKey.map((c) => [c.appKey, c.appName, [...c.scope], c.grantedAt]),
        [
          [other.app.appKey, "Other App", ["read"], 1500],
          [app.appKey, "Test App", ["read", "write"], 1000]
        ]
      )
      assert.isTrue(Option.isNone(list.withdrawn))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "Withdraw forgets the consent, revokes that application's tokens for the user, is audited as the user's, and confirms",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const notes = yield* newApp({ name: "Notes" })
        const other = yield* newApp({ name: "Other App" })
        const queryOf = (appKey: string) =>
          form({ response_type: "code", client_id: appKey, redirect_uri: cb, state: "s" })
        const b = new Browser()
        yield* signIn(b, queryOf(notes.app.appKey), user.username, password)
        const exchange = (code: string, basic: string) =>
          Effect.map(
            token({ grant_type: "authorization_code", code, redirect_uri: cb }, basic),
            (r) => r.json?.refresh_token as string
          )
        const notesRefresh = yield* exchange(yield* allow(b, queryOf(notes.app.appKey)), notes.basic)
        const otherRefresh = yield* exchange(yield* allow(b, queryOf(other.app.appKey)), other.basic)
        const list = yield* b.consents("ui_locales=zh-CN")
        assert.strictEqual(view(list, "Consents").consents.length, 2)
        const withdrawn = see(
          yield* b.post(
            "consents",
            { ...ticketOf(list), action: "withdraw", app_key: notes.app.appKey },
            {},
            "ui_locales=zh-CN"
          )
        )
        assert.match(withdrawn, /^\/oauth2\/oauth2\/consents\?ui_locales=zh-CN&withdrawn=[^&]+$/)
        const after = view(yield* b.consents(withdrawn.slice(withdrawn.indexOf("?") + 1)), "Consents")
        assert.deepStrictEqual(Option.getOrThrow(after.withdrawn), "Notes")
        assert.deepStrictEqual(
          after.consents.map((c) => c.appKey),
          [other.app.appKey]
        )
        // the application's refresh token is refused; the other application's still works
        const refused = yield* token(
          { grant_type: "refresh_token", refresh_token: notesRefresh },
          notes.basic
        )
        assert.deepStrictEqual([refused.status, refused.json?.error], [400, "invalid_grant"])
        const kept = yield* token({ grant_type: "refresh_token", refresh_token: otherRefresh }, other.basic)
        assert.strictEqual(kept.status, 200)
        // the next authorization asks for consent again
        view(yield* b.get(queryOf(notes.app.appKey)), "Consent")
        const events = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 100 }))
        const audited = events.filter((e) => e.type === "consent_withdrawn")
        assert.deepStrictEqual(
          audited.map((e) => [e.appKey, e.userId, e.actor, e.detail, e.address]),
          [[notes.app.appKey, user.userId, "user", "read,write", "192.0.2.1"]]
        )
      }).pipe(Effect.provide(Layer.merge(TestLayer(), Audited)))
  )

  it.effect("withdrawing what is not consented changes nothing, records nothing and confirms nothing", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const b = new Browser()
      yield* signInHere(b, user.username, password)
      const list = yield* b.consents()
      const location = see(
        yield* b.post("consents", { ...ticketOf(list), action: "withdraw", app_key: "nope" })
      )
      assert.strictEqual(location, Interaction.consentsPath)
      const events = yield* Effect.flatMap(AuditStore, (s) => s.tail({ limit: 100 }))
      assert.isFalse(events.some((e) => e.type === "consent_withdrawn"))
    }).pipe(Effect.provide(Layer.merge(TestLayer(), Audited)))
  )

  it.effect(
    "the confirmation cannot be forged: another session's mark, or a changed one, shows nothing",
    () =>
      Effect.gen(function* () {
        const { app, user, password, query } = yield* setup()
        const b = new Browser()
        yield* signIn(b, query, user.username, password)
        yield* allow(b, query)
        const list = yield* b.consents()
        const location = see(
          yield* b.post("consents", { ...ticketOf(list), action: "withdraw", app_key: app.appKey })
        )
        const marked = location.slice(location.indexOf("?") + 1)
        assert.isTrue(Option.isSome(view(yield* b.consents(marked), "Consents").withdrawn))
        // the same link opened in another signed-in session
        const other = new Browser()
        yield* signInHere(other, user.username, password)
        assert.isTrue(Option.isNone(view(yield* other.consents(marked), "Consents").withdrawn))
        // a changed signature, or another App Key with this signature
        const forged = marked.replace(/.(?=$)/, (c) => (c === "A" ? "B" : "A"))
        assert.isTrue(Option.isNone(view(yield* b.consents(forged), "Consents").withdrawn))
        const renamed = marked.replace(encodeURIComponent(app.appKey), "other-app")
        assert.isTrue(Option.isNone(view(yield* b.consents(renamed), "Consents").withdrawn))
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("consents page: forms", () => {
  it.effect(
    "forms are good once, tied to the session, and never continue the authorize flow or the reverse",
    () =>
      Effect.gen(function* () {
        const { app, user, password, query } = yield* setup()
        const b = new Browser()
        yield* signIn(b, query, user.username, password)
        const flowConsent = ticketOf(yield* b.get(query))
        yield* allow(b, query)
        const forbidden = (a: Answer) => assert.strictEqual(errorOf(a).status, 403)
        const withdrawWith = (t: Record<string, string>, headers: Record<string, string> = {}) =>
          b.post("consents", { ...t, action: "withdraw", app_key: app.appKey }, headers)
        // the authorize flow's consent form does not withdraw
        forbidden(yield* withdrawWith(flowConsent))
        // the page's ticket does not post the consent form or the sign-in form
        const page = ticketOf(yield* b.consents())
        forbidden(yield* b.post("authorize", { ...page, decision: "allow" }))
        const page2 = ticketOf(yield* b.consents())
        forbidden(yield* b.post("login", { ...page2, switch_account: "1" }))
        const anonymous = new Browser()
        const signInTicket = ticketOf(yield* anonymous.consents())
        forbidden(yield* anonymous.post("login", { ...signInTicket, username: user.username, password }))
        // cross-site, another session's ticket, no ticket
        const t = ticketOf(yield* b.consents())
        forbidden(yield* withdrawWith(t, { origin: "https://evil.example" }))
        forbidden(yield* withdrawWith(ticketOf(yield* b.consents()), { "sec-fetch-site": "cross-site" }))
        forbidden(yield* new Browser().post("consents", { ...t, action: "withdraw", app_key: app.appKey }))
        forbidden(yield* b.post("consents", { action: "withdraw", app_key: app.appKey }))
        assert.isTrue(
          Option.isSome(yield* Effect.flatMap(ConsentStore, (c) => c.find(user.userId, app.appKey)))
        )
        // good once
        const once = ticketOf(yield* b.consents())
        see(yield* withdrawWith(once))
        const expired = errorOf(yield* withdrawWith(once))
        assert.deepStrictEqual([expired.status, expired.problem], [403, { reason: "form_expired" }])
        assert.strictEqual(Option.getOrThrow(expired.back).href, Interaction.consentsPath)
        assert.isTrue(
          Option.isNone(yield* Effect.flatMap(ConsentStore, (c) => c.find(user.userId, app.appKey)))
        )
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a disabled or deleted user's session is ended here: signed out, and its forms withdraw nothing",
    () =>
      Effect.gen(function* () {
        const { app, user, password, query } = yield* setup()
        const b = new Browser()
        yield* signIn(b, query, user.username, password)
        yield* allow(b, query)
        const t = ticketOf(yield* b.consents())
        yield* Effect.flatMap(UserStore, (users) => users.setDisabled(user.userId, true, 0))
        // The session went with the disabling: its form is one of no session any more
        const ended = errorOf(yield* b.post("consents", { ...t, action: "withdraw", app_key: app.appKey }))
        assert.deepStrictEqual([ended.status, ended.problem], [403, { reason: "form_expired" }])
        view(yield* b.consents(), "ConsentsSignIn")
        assert.isTrue(
          Option.isSome(yield* Effect.flatMap(ConsentStore, (c) => c.find(user.userId, app.appKey)))
        )
        // and a deleted one
        const { user: gone, password: gonePassword } = yield* setup()
        const c = new Browser()
        yield* signInHere(c, gone.username, gonePassword)
        yield* Effect.flatMap(UserStore, (users) => users.remove(gone.userId, 0))
        view(yield* c.consents(), "ConsentsSignIn")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the page keeps its layout and languages in its form action and redirects", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const b = new Browser()
      const q = "client_type=Mobile&ui_locales=zh-CN%20en&junk=1"
      const page = view(yield* b.consents(q), "ConsentsSignIn")
      const kept = `${Interaction.consentsPath}?client_type=Mobile&ui_locales=zh-CN%20en`
      assert.deepStrictEqual([page.layout, page.uiLocales, page.action], ["Mobile", ["zh-CN", "en"], kept])
      const signedIn = see(yield* signInHere(b, user.username, password, q))
      assert.strictEqual(signedIn, kept)
      const list = view(yield* b.consents(queryOf(signedIn)), "Consents")
      assert.deepStrictEqual([list.layout, list.uiLocales, list.action], ["Mobile", ["zh-CN", "en"], kept])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "HEAD stores nothing; other methods are 405 with a way back to the page; an unknown action is 400",
    () =>
      Effect.gen(function* () {
        const b = new Browser()
        const head = yield* b.request("consents", "HEAD", "")
        assert.deepStrictEqual([view(head, "Head").formTargets, head.setCookie], [["'self'"], null])
        const put = errorOf(yield* b.request("consents", "PUT", "ui_locales=zh-CN"))
        assert.deepStrictEqual(
          [put.status, put.headers.allow, put.problem, Option.getOrThrow(put.back).href],
          [
            405,
            "GET, HEAD, POST",
            { reason: "method_not_allowed" },
            `${Interaction.consentsPath}?ui_locales=zh-CN`
          ]
        )
        const { user, password } = yield* setup()
        yield* signInHere(b, user.username, password)
        const t = ticketOf(yield* b.consents())
        const unknown = errorOf(yield* b.post("consents", { ...t, action: "dance" }))
        assert.deepStrictEqual([unknown.status, unknown.problem], [400, { reason: "bad_form" }])
      }).pipe(Effect.provide(TestLayer()))
  )

  it("the consents page is inside the session cookie's path, beside the authorize endpoint", () => {
    const folder = Metadata.paths.authorize.slice(0, Metadata.paths.authorize.lastIndexOf("/") + 1)
    assert.isTrue(Interaction.consentsPath.startsWith(folder))
  })
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as Interaction from "../src/interaction/Interaction.js"
import * as Authorize from "../src/oauth/Authorize.js"
import * as Metadata from "../src/oauth/Metadata.js"
import * as Throttle from "../src/security/Throttle.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import * as Memory from "../src/storage/Memory.js"
import { SessionStore } from "../src/storage/SessionStore.js"
import { StorageError } from "../src/storage/StorageError.js"
import { UserStore } from "../src/storage/UserStore.js"
import { type Answer, Browser, errorOf, setup, signIn, ticketOf, view } from "./browser.js"
import { cb, form, issuer, newApp, TestLayer, token } from "./fixtures.js"

describe("authorize interaction: GET", () => {
  it.effect(
    "an untrusted client or redirect URI is an error page in the requested layout, never a redirect",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const b = new Browser()
        const unknown = errorOf(yield* b.get({ response_type: "code", client_id: "nope", redirect_uri: cb }))
        assert.deepStrictEqual(
          [unknown.status, unknown.error, unknown.layout],
          [400, "invalid_request", "PC"]
        )
        const wrongUri = errorOf(
          yield* b.get({
            response_type: "code",
            client_id: app.appKey,
            redirect_uri: "https://evil.example/cb",
            client_type: "Mobile"
          })
        )
        assert.strictEqual(wrongUri.layout, "Mobile")
        assert.isUndefined(b.cookie)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("other errors go to the client's redirect URI with 302", () =>
    Effect.gen(function* () {
      const { app } = yield* newApp()
      const r = view(
        yield* new Browser().get({
          response_type: "nope",
          client_id: app.appKey,
          redirect_uri: cb,
          state: "x"
        }),
        "Redirect"
      )
      assert.strictEqual(r.status, 302)
      const url = new URL(r.location)
      assert.strictEqual(url.searchParams.get("error"), "unsupported_response_type")
      assert.strictEqual(url.searchParams.get("state"), "x")
      assert.strictEqual(url.searchParams.get("iss"), issuer)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("HEAD validates but opens no session and issues nothing", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const b = new Browser()
      const head = yield* b.request("authorize", "HEAD", query)
      assert.deepStrictEqual(view(head, "Head").formTargets, ["'self'", "https://app.example"])
      assert.isNull(head.setCookie)
      const bad = yield* b.request("authorize", "HEAD", form({ client_id: "nope" }))
      assert.strictEqual(errorOf(bad).status, 400)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an anonymous visitor gets the sign-in page and a session cookie scoped to the endpoints", () =>
    Effect.gen(function* () {
      const { app, query } = yield* setup({ client_type: "Mobile" })
      const b = new Browser()
      const a = yield* b.get(query)
      const page = view(a, "SignIn")
      assert.strictEqual(page.status, 200)
      assert.strictEqual(page.layout, "Mobile")
      assert.strictEqual(page.appName, app.name)
      assert.strictEqual(page.redirectHost, "app.example")
      assert.strictEqual(page.action, Metadata.paths.login)
      assert.isTrue(Option.isNone(page.error))
      assert.match(
        a.setCookie as string,
        /^latchkey_session=[\w-]{43}\.[\w-]{43}; Path=\/oauth2\/oauth2; HttpOnly; SameSite=Lax; Max-Age=1800; Secure$/
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("under a mount path, form actions and the cookie path follow it", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const a = yield* new Browser().request("authorize", "GET", query, "", {}, "/auth")
      assert.strictEqual(view(a, "SignIn").action, "/auth/oauth2/oauth2/login")
      assert.include(a.setCookie as string, "Path=/auth/oauth2/oauth2;")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("no Secure cookie under an http issuer", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const a = yield* new Browser().get(query)
      assert.notInclude(a.setCookie as string, "Secure")
    }).pipe(Effect.provide(TestLayer({ issuer: "http://127.0.0.1:8080" })))
  )

  it.effect("a forged or unknown cookie counts as no session", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const b = new Browser()
      yield* b.get(query)
      const [name, value] = (b.cookie as string).split("=") as [string, string]
      const forged = new Browser({ cookie: `${name}=${value.slice(0, 43)}.${"A".repeat(43)}` })
      const a = yield* forged.get(query)
      view(a, "SignIn")
      assert.notStrictEqual(forged.cookie?.split(".")[0], b.cookie?.split(".")[0])
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("authorize interaction: sign-in form", () => {
  it.effect("signing in answers 303 back to the authorize request, under a new session id", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* b.get(query)
      const before = b.cookie
      const a = yield* b.post("login", {
        ...ticketOf(yield* b.get(query)),
        username: user.username,
        password
      })
      const r = view(a, "Redirect")
      assert.deepStrictEqual([r.status, r.location], [303, `${Metadata.paths.authorize}?${query}`])
      assert.notStrictEqual(b.cookie, before)
      // the old id is gone: a browser still holding it is anonymous
      view(yield* new Browser({ cookie: before as string }).get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a missing field, an unknown user and a wrong password show the sign-in page again with 400",
    () =>
      Effect.gen(function* () {
        const { user, query } = yield* setup()
        const b = new Browser()
        for (const [username, password, problem] of [
          [user.username, "", "missing_fields"],
          ["nobody", "wrong password", "bad_credentials"],
          [user.username, "wrong password", "bad_credentials"]
        ] as const) {
          const page = view(
            yield* b.post("login", { ...ticketOf(yield* b.get(query)), username, password }),
            "SignIn"
          )
          assert.strictEqual(page.status, 400)
          assert.deepStrictEqual(Option.getOrThrow(page.error), { problem, username })
        }
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a form is good once, and only with its own CSRF token, session and step", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      const first = ticketOf(yield* b.get(query))
      const second = ticketOf(yield* b.get(query))
      const forbidden = (a: Answer) => assert.strictEqual(errorOf(a).status, 403)
      forbidden(
        yield* b.post("login", {
          txn: first.txn,
          csrf_token: second.csrf_token,
          username: user.username,
          password
        })
      )
      forbidden(yield* b.post("login", { txn: first.txn, username: user.username, password }))
      forbidden(yield* new Browser().post("login", { ...first, username: user.username, password }))
      const other = new Browser()
      yield* other.get(query)
      forbidden(yield* other.post("login", { ...first, username: user.username, password }))
      // consent step: a sign-in ticket does not post the consent form
      forbidden(yield* b.post("authorize", { ...first, decision: "allow" }))
      view(yield* b.post("login", { ...first, username: user.username, password }), "Redirect")
      forbidden(yield* b.post("login", { ...first, username: user.username, password }))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a cross-site post is refused, a same-origin one (Origin null or own origin) is not", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      const post = (headers: Record<string, string>) =>
        Effect.flatMap(b.get(query), (page) =>
          b.post("login", { ...ticketOf(page), username: user.username, password: "wrong password" }, headers)
        )
      assert.strictEqual(errorOf(yield* post({ "sec-fetch-site": "cross-site" })).status, 403)
      assert.strictEqual(errorOf(yield* post({ "sec-fetch-site": "same-site" })).status, 403)
      assert.strictEqual(errorOf(yield* post({ origin: "https://evil.example" })).status, 403)
      for (const headers of [
        { origin: "null" },
        { origin: "http://127.0.0.1:8080" },
        { origin: issuer, "sec-fetch-site": "same-origin" },
        {}
      ]) {
        assert.strictEqual(view(yield* post(headers), "SignIn").status, 400)
      }
      view(
        yield* b.post("login", { ...ticketOf(yield* b.get(query)), username: user.username, password }),
        "Redirect"
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a page form that is not urlencoded, repeats a field, is compressed or too large is refused",
    () =>
      Effect.gen(function* () {
        const { query } = yield* setup()
        const b = new Browser()
        const t = ticketOf(yield* b.get(query))
        const status = (a: Answer) => errorOf(a).status
        assert.strictEqual(
          status(yield* b.post("login", form(t), { "content-type": "application/json" })),
          400
        )
        assert.strictEqual(status(yield* b.post("login", `txn=a&txn=b&csrf_token=${t.csrf_token}`)), 400)
        assert.strictEqual(status(yield* b.post("login", form(t), { "content-encoding": "gzip" })), 415)
        assert.strictEqual(status(yield* b.post("login", `${form(t)}&pad=${"x".repeat(17 * 1024)}`)), 413)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("too many failed sign-ins answer 429 with Retry-After, even for the right password", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      // two free failures, then a third that starts the lockout
      for (let i = 0; i < 3; i++) {
        const page = view(yield* signIn(new Browser(), query, user.username, `wrong-${i}-password`), "SignIn")
        assert.strictEqual(page.status, 400)
      }
      const limited = errorOf(yield* signIn(new Browser(), query, user.username, password))
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.error, "temporarily_unavailable")
      assert.isAbove(Number(limited.headers["retry-after"]), 0)
    }).pipe(
      Effect.provide(
        TestLayer(
          {},
          {
            ...Throttle.defaultPolicy,
            freeFailures: 2,
            addressFreeFailures: 50,
            baseLockout: 60,
            maxLockout: 60,
            window: 600
          }
        )
      )
    )
  )

  it.effect("failures sent from elsewhere never lock out a browser the user signed in with before", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const alice = new Browser()
      view(yield* signIn(alice, query, user.username, password), "Redirect")
      assert.match(alice.device as string, /^latchkey_device=r\.[\w-]+\.[\w-]{43}$/)
      // An attacker who knows only the username fails from other browsers and addresses
      for (let i = 0; i < 12; i++) {
        yield* signIn(new Browser(), query, user.username, `wrong-${i}-password`)
      }
      const stranger = yield* signIn(new Browser(), query, user.username, password)
      assert.strictEqual(errorOf(stranger).status, 429)
      // Alice's browser, signed out (a new session) but still trusted, signs in
      alice.cookie = undefined
      view(yield* signIn(alice, query, user.username, password), "Redirect")
      // A forged device cookie gives no such budget
      const mallory = new Browser()
      mallory.device = `${(alice.device as string).slice(0, -3)}AAA`
      assert.strictEqual(errorOf(yield* signIn(mallory, query, user.username, password)).status, 429)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "the password grant has its own budget per application: sign-in page failures do not refuse it",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const { basic } = yield* newApp() // another application, registered for the password grant
        for (let i = 0; i < 12; i++) yield* signIn(new Browser(), query, user.username, `wrong-${i}-password`)
        assert.strictEqual(errorOf(yield* signIn(new Browser(), query, user.username, password)).status, 429)
        const grant = yield* token({ grant_type: "password", username: user.username, password }, basic)
        assert.strictEqual(grant.status, 200)
        // the grant's own failures lock only the grant of that application
        for (let i = 0; i < 12; i++) {
          yield* token(
            { grant_type: "password", username: user.username, password: `wrong-${i}-password` },
            basic
          )
        }
        const locked = yield* token({ grant_type: "password", username: user.username, password }, basic)
        assert.strictEqual(locked.status, 429)
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "an application removed while its sign-in form was open is an error page when the form returns",
    () =>
      Effect.gen(function* () {
        const { app, user, password, query } = yield* setup()
        const b = new Browser()
        const t = ticketOf(yield* b.get(query))
        yield* Effect.flatMap(ApplicationStore, (apps) => apps.remove(app.appKey, 0))
        const e = errorOf(yield* b.post("login", { ...t, username: user.username, password }))
        assert.strictEqual(e.status, 400)
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("authorize interaction: consent", () => {
  it.effect("a signed-in user sees consent; Allow answers 303 with code, state and iss", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const a = yield* b.get(query)
      const consent = view(a, "Consent")
      assert.strictEqual(consent.username, user.username)
      assert.deepStrictEqual([...consent.scope], ["read", "write"])
      assert.strictEqual(consent.action, Metadata.paths.authorize)
      assert.strictEqual(consent.switchAction, Metadata.paths.login)
      assert.isNotNull(a.setCookie)
      const allowed = view(yield* b.post("authorize", { ...ticketOf(a), decision: "allow" }), "Redirect")
      assert.strictEqual(allowed.status, 303)
      const url = new URL(allowed.location)
      assert.strictEqual(url.origin + url.pathname, cb)
      assert.match(url.searchParams.get("code") as string, /^[\w-]{43}$/)
      assert.strictEqual(url.searchParams.get("state"), "s-1")
      assert.strictEqual(url.searchParams.get("iss"), issuer)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("consent is remembered: the next request for the same scope redirects with 302 at once", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      yield* b.post("authorize", { ...ticketOf(yield* b.get(query)), decision: "allow" })
      const again = view(yield* b.get(query), "Redirect")
      assert.strictEqual(again.status, 302)
      assert.isNotNull(new URL(again.location).searchParams.get("code"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("Deny answers 303 with access_denied; implicit Allow delivers the token in the fragment", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const denied = view(
        yield* b.post("authorize", { ...ticketOf(yield* b.get(query)), decision: "deny" }),
        "Redirect"
      )
      assert.strictEqual(denied.status, 303)
      assert.strictEqual(new URL(denied.location).searchParams.get("error"), "access_denied")
      assert.strictEqual(denied.error, "access_denied")
      const implicit = query.replace("response_type=code", "response_type=token")
      const allowed = view(
        yield* b.post("authorize", { ...ticketOf(yield* b.get(implicit)), decision: "allow" }),
        "Redirect"
      )
      const fragment = new URLSearchParams(allowed.location.split("#")[1])
      assert.match(fragment.get("access_token") as string, /^[\w-]{43}$/)
      assert.isNull(fragment.get("refresh_token"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a decision other than allow or deny is 400, and the form is used up", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const t = ticketOf(yield* b.get(query))
      const e = errorOf(yield* b.post("authorize", { ...t, decision: "maybe" }))
      assert.deepStrictEqual([e.status, e.description], [400, "choose Allow or Deny"])
      assert.strictEqual(errorOf(yield* b.post("authorize", { ...t, decision: "allow" })).status, 403)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("Not you? signs out into a new anonymous session and goes back to the request", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const signedIn = b.cookie
      const r = view(
        yield* b.post("login", { ...ticketOf(yield* b.get(query)), switch_account: "1" }),
        "Redirect"
      )
      assert.deepStrictEqual([r.status, r.location], [303, `${Metadata.paths.authorize}?${query}`])
      assert.notStrictEqual(b.cookie, signedIn)
      view(yield* b.get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a user deleted mid-flow: the page asks to sign in again, a pending consent is 403", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const t = ticketOf(yield* b.get(query))
      yield* Effect.flatMap(UserStore, (users) => users.remove(user.userId, 0))
      assert.strictEqual(errorOf(yield* b.post("authorize", { ...t, decision: "allow" })).status, 403)
      view(yield* b.get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("tampered hidden fields cannot change the request: the stored one decides", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup({ response_type: "token" })
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const t = ticketOf(yield* b.get(query))
      const allowed = view(
        yield* b.post("authorize", {
          ...t,
          decision: "allow",
          response_type: "code",
          redirect_uri: "https://evil.example/"
        }),
        "Redirect"
      )
      assert.isTrue(allowed.location.startsWith(`${cb}#access_token=`))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a request the application no longer allows when the form returns is redirected with 303", () =>
    Effect.gen(function* () {
      const { app, user, password, query } = yield* setup({ response_type: "token" })
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const t = ticketOf(yield* b.get(query))
      const apps = yield* ApplicationStore
      yield* apps.remove(app.appKey, 0)
      yield* apps.insert({ ...app, grantTypes: ["authorization_code"] })
      const r = view(yield* b.post("authorize", { ...t, decision: "allow" }), "Redirect")
      assert.strictEqual(r.status, 303)
      assert.strictEqual(new URLSearchParams(r.location.split("#")[1]).get("error"), "unauthorized_client")
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("authorize interaction: what anonymous requests can make the server hold", () => {
  it.effect(
    "a pending request keeps only the authorize parameters: extra ones are neither stored nor echoed",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const b = new Browser()
        const page = yield* b.get(`${query}&junk=${"x".repeat(4000)}&utm_source=ad`)
        const r = view(
          yield* b.post("login", { ...ticketOf(page), username: user.username, password }),
          "Redirect"
        )
        assert.strictEqual(r.location, `${Metadata.paths.authorize}?${query}`)
        assert.strictEqual(Interaction.storedQuery("client_id=a&junk=1&%73tate=s&x"), "client_id=a&%73tate=s")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "an authorize request longer than maxAuthorizeQuery is a clear 414 page, and nothing is stored",
    () =>
      Effect.gen(function* () {
        const { query } = yield* setup()
        const long = `${query}&state2=${"y".repeat(Interaction.maxAuthorizeQuery)}`
        const a = yield* new Browser().get(long)
        assert.deepStrictEqual([errorOf(a).status, errorOf(a).error], [414, "invalid_request"])
        assert.isNull(a.setCookie)
        assert.deepStrictEqual(yield* Effect.flatMap(SessionStore, (s) => s.stats()), {
          sessions: 0,
          pendingBytes: 0
        })
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a flood of anonymous requests stays within maxPendingBytes and keeps a signed-in user's open form",
    () =>
      Effect.gen(function* () {
        const limits = { maxSessions: 100, maxPending: 8, maxPendingBytes: 50_000 }
        const run = Effect.gen(function* () {
          const { app, user, password, query } = yield* setup()
          const alice = new Browser()
          yield* signIn(alice, query, user.username, password)
          const open = ticketOf(yield* alice.get(query))
          for (let i = 0; i < 300; i++) {
            const flood = form({
              response_type: "code",
              client_id: app.appKey,
              redirect_uri: cb,
              state: `${i}${"z".repeat(2000)}`
            })
            view(yield* new Browser().get(flood), "SignIn")
          }
          const stats = yield* Effect.flatMap(SessionStore, (s) => s.stats())
          assert.isAtMost(stats.pendingBytes, limits.maxPendingBytes)
          assert.isAbove(stats.pendingBytes, limits.maxPendingBytes - 2 * 2200)
          assert.isAtMost(stats.sessions, limits.maxSessions)
          const allowed = view(yield* alice.post("authorize", { ...open, decision: "allow" }), "Redirect")
          assert.isNotNull(new URL(allowed.location).searchParams.get("code"))
        })
        yield* run.pipe(Effect.provide(Layer.merge(TestLayer(), Memory.layerWith(limits))))
      })
  )
})

describe("authorize interaction: sessions over time", () => {
  it.effect("a session lives sessionTtl seconds after its last page, then asks to sign in again", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      yield* TestClock.adjust("1700 seconds")
      view(yield* b.get(query), "Consent")
      yield* TestClock.adjust("1700 seconds")
      view(yield* b.get(query), "Consent")
      yield* TestClock.adjust("1801 seconds")
      view(yield* b.get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a form left open longer than the session lifetime is refused", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      const t = ticketOf(yield* b.get(query))
      yield* TestClock.adjust("1801 seconds")
      assert.strictEqual(
        errorOf(yield* b.post("login", { ...t, username: user.username, password })).status,
        403
      )
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("authorize interaction: methods and failures", () => {
  it.effect("other methods are 405 with Allow", () =>
    Effect.gen(function* () {
      const b = new Browser()
      const login = errorOf(yield* b.request("login", "GET", ""))
      assert.deepStrictEqual([login.status, login.headers.allow], [405, "POST"])
      const put = errorOf(yield* b.request("authorize", "PUT", form({ client_type: "Mobile" })))
      assert.deepStrictEqual([put.status, put.headers.allow, put.layout], [405, "GET, HEAD, POST", "Mobile"])
    }).pipe(Effect.provide(TestLayer()))
  )

  const failingSessions = (fail: Effect.Effect<never, StorageError>) =>
    Layer.succeed(SessionStore, {
      find: () => fail,
      save: () => fail,
      signIn: () => fail,
      renew: () => fail,
      remove: () => fail,
      addPending: () => fail,
      findPending: () => fail,
      takePending: () => fail,
      purgeExpired: () => fail,
      listOf: () => fail,
      endOf: () => fail,
      endOthersOf: () => fail,
      stats: () => fail
    })

  it.effect("a session store that cannot answer is a 503 page with Retry-After", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const e = errorOf(yield* new Browser().get(query))
      assert.deepStrictEqual(
        [e.status, e.error, e.headers["retry-after"]],
        [503, "temporarily_unavailable", "1"]
      )
      // the page explains it and offers to try the same request again
      assert.deepStrictEqual(e.problem, { reason: "unavailable" })
      assert.deepStrictEqual(Option.getOrThrow(e.back), {
        to: "request",
        href: `${Metadata.paths.authorize}?${query}`
      })
    }).pipe(
      Effect.provide(
        Layer.merge(TestLayer(), failingSessions(Effect.fail(new StorageError({ message: "down" }))))
      )
    )
  )

  it.effect("a defect is a 500 page that shows nothing of its cause", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const e = errorOf(yield* new Browser().get(query))
      assert.deepStrictEqual(
        [e.status, e.error, e.problem],
        [500, "server_error", { reason: "server_error" }]
      )
      assert.notInclude(e.description, "secret-detail")
    }).pipe(Effect.provide(Layer.merge(TestLayer(), failingSessions(Effect.die(new Error("secret-detail"))))))
  )

  it.effect("a user store that fails during sign-in is a 503 page, not a wrong-password answer", () =>
    Effect.gen(function* () {
      const { query } = yield* setup()
      const b = new Browser()
      const t = ticketOf(yield* b.get(query))
      const down = Effect.fail(new StorageError({ message: "down" }))
      const users = yield* UserStore
      const e = errorOf(
        yield* b
          .post("login", { ...t, username: "someone", password: "a password" })
          .pipe(Effect.provideService(UserStore, { ...users, findByUsername: () => down }))
      )
      assert.deepStrictEqual([e.status, e.headers["retry-after"]], [503, "1"])
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a repeated Sec-Fetch-Site header counts as cross-site", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      const t = ticketOf(yield* b.get(query))
      const answer = yield* Interaction.handle({
        method: "POST",
        path: Metadata.paths.login,
        query: "",
        headers: {
          cookie: b.cookie as string,
          "content-type": "application/x-www-form-urlencoded",
          "sec-fetch-site": ["same-origin", "cross-site"]
        },
        body: form({ ...t, username: user.username, password }),
        basePath: "",
        ownOrigin: "http://127.0.0.1:8080"
      })
      assert.strictEqual(errorOf(answer).status, 403)
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a path that is not one of the pages is a 404 page", () =>
    Effect.gen(function* () {
      const a = yield* Interaction.handle({
        method: "GET",
        path: Metadata.paths.token,
        query: "",
        headers: {},
        body: "",
        basePath: "",
        ownOrigin: issuer
      })
      assert.deepStrictEqual([errorOf(a).status, a.setCookie], [404, null])
      assert.deepStrictEqual(errorOf(a).problem, { reason: "not_found" })
    }).pipe(Effect.provide(TestLayer()))
  )

  it("pageOf names the three page paths and nothing else", () => {
    assert.deepStrictEqual(Interaction.pageOf(Metadata.paths.authorize), Option.some("authorize"))
    assert.deepStrictEqual(Interaction.pageOf(Metadata.paths.login), Option.some("login"))
    assert.deepStrictEqual(Interaction.pageOf(Interaction.consentsPath), Option.some("consents"))
    assert.isTrue(Option.isNone(Interaction.pageOf(Metadata.paths.token)))
  })

  it("layout is Mobile only when the query asks for it", () => {
    assert.strictEqual(Authorize.layout("client_type=Mobile"), "Mobile")
    assert.strictEqual(Authorize.layout("client_type=Tablet"), "PC")
    assert.strictEqual(Authorize.layout("client_type=Mobile&client_type=Mobile"), "PC")
    assert.strictEqual(Authorize.layout("%zz"), "PC")
  })
})

describe("authorize interaction: what the pages explain, and in which language", () => {
  it.effect("error pages carry a stable reason for the page to explain; the description stays English", () =>
    Effect.gen(function* () {
      const { app, query } = yield* setup()
      const b = new Browser()
      const untrusted: Array<Interaction.Problem> = []
      const reasonOf = (a: Answer) => errorOf(a).problem
      // the request that led to these cannot be trusted: no way back is offered
      const noWayBack = (a: Answer) => {
        assert.isTrue(Option.isNone(errorOf(a).back))
        untrusted.push(errorOf(a).problem)
      }
      noWayBack(yield* b.get({ client_id: "nope", redirect_uri: cb }))
      noWayBack(yield* b.get({ client_id: app.appKey, redirect_uri: "https://evil.example/" }))
      const malformed = yield* b.get("client_id=a&client_id=b")
      noWayBack(malformed)
      assert.include(errorOf(malformed).description, "repeated")
      noWayBack(yield* b.get(`${query}&x=${"y".repeat(9000)}`))
      assert.deepStrictEqual(untrusted, [
        { reason: "unknown_client" },
        { reason: "bad_redirect_uri" },
        { reason: "bad_request" },
        { reason: "request_too_long", limit: Interaction.maxAuthorizeQuery }
      ])
      const expired = errorOf(yield* b.post("login", { txn: "x", csrf_token: "y" }))
      assert.deepStrictEqual([expired.problem, expired.back], [{ reason: "form_expired" }, Option.none()])
      assert.deepStrictEqual(reasonOf(yield* b.request("login", "GET", "")), {
        reason: "method_not_allowed"
      })
      assert.deepStrictEqual(
        reasonOf(yield* b.post("login", "txn=a", { "content-type": "application/json" })),
        { reason: "bad_form" }
      )
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a choice that is neither Allow nor Deny links back to the request to start again", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const e = errorOf(yield* b.post("authorize", { ...ticketOf(yield* b.get(query)), decision: "maybe" }))
      assert.deepStrictEqual(e.problem, { reason: "no_decision" })
      assert.deepStrictEqual(Option.getOrThrow(e.back), {
        to: "request",
        href: `${Metadata.paths.authorize}?${query}`
      })
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("a lockout says how many seconds to wait and links back to the request", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      for (let i = 0; i < 3; i++) yield* signIn(new Browser(), query, user.username, `wrong-${i}-password`)
      const limited = errorOf(yield* signIn(new Browser(), query, user.username, password))
      assert.deepStrictEqual(limited.problem, { reason: "rate_limited", seconds: 60 })
      assert.strictEqual(limited.headers["retry-after"], "60")
      assert.strictEqual(Option.getOrThrow(limited.back).href, `${Metadata.paths.authorize}?${query}`)
    }).pipe(
      Effect.provide(
        TestLayer(
          {},
          {
            ...Throttle.defaultPolicy,
            freeFailures: 2,
            addressFreeFailures: 50,
            baseLockout: 60,
            maxLockout: 60
          }
        )
      )
    )
  )

  it.effect("ui_locales is kept with the pending request and reaches every page of the flow", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup({ ui_locales: "fr-CA zh-CN en", client_type: "Mobile" })
      assert.include(Interaction.storedQuery(query), "ui_locales=fr-CA+zh-CN+en")
      const b = new Browser()
      const first = yield* b.get(`${query}&junk=1`)
      const expected = ["fr-CA", "zh-CN", "en"]
      assert.deepStrictEqual(view(first, "SignIn").uiLocales, expected)
      // a failed sign-in shows the page again in the same languages
      const failed = yield* b.post("login", { ...ticketOf(first), username: user.username, password: "nope" })
      assert.deepStrictEqual(view(failed, "SignIn").uiLocales, expected)
      const signedIn = view(
        yield* b.post("login", { ...ticketOf(failed), username: user.username, password }),
        "Redirect"
      )
      assert.strictEqual(signedIn.location, `${Metadata.paths.authorize}?${query}`)
      const consent = view(yield* b.get(query), "Consent")
      assert.deepStrictEqual(consent.uiLocales, expected)
      assert.strictEqual(
        consent.consentsHref,
        `${Interaction.consentsPath}?client_type=Mobile&ui_locales=fr-CA%20zh-CN%20en`
      )
      // an error page of an untrusted request still speaks the reader's language
      const bad = errorOf(yield* b.get(query.replace(/redirect_uri=[^&]*/, "redirect_uri=https%3A%2F%2Fx")))
      assert.deepStrictEqual(bad.uiLocales, expected)
    }).pipe(Effect.provide(TestLayer()))
  )

  it("uiLocalesOf reads the tags of ui_locales and drops malformed ones", () => {
    assert.deepStrictEqual(Interaction.uiLocalesOf("ui_locales=zh-CN%20en"), ["zh-CN", "en"])
    assert.deepStrictEqual(Interaction.uiLocalesOf("ui_locales=%3Cb%3E+de"), ["de"])
    assert.deepStrictEqual(Interaction.uiLocalesOf("ui_locales=a&ui_locales=b"), [])
    assert.deepStrictEqual(Interaction.uiLocalesOf(""), [])
  })

  it.effect("a disabled user is treated as signed out: the sign-in page, and a pending consent is 403", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const t = ticketOf(yield* b.get(query))
      yield* Effect.flatMap(UserStore, (users) => users.setDisabled(user.userId, true, 0))
      assert.strictEqual(errorOf(yield* b.post("authorize", { ...t, decision: "allow" })).status, 403)
      view(yield* b.get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )
})

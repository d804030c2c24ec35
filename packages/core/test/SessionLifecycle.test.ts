import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, FiberId, Layer, Option, TestClock } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Session from "../src/security/Session.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Entropy from "../src/services/Entropy.js"
import * as Memory from "../src/storage/Memory.js"
import { SessionStore } from "../src/storage/SessionStore.js"
import { type Answer, Browser, errorOf, setup, signIn, ticketOf, view } from "./browser.js"
import { newUser, settings, TestHasher, TestLayer } from "./fixtures.js"
import { allow, openIdSetup, signedInWithConsent as openIdSignedIn } from "./openid.js"

/** The Max-Age of the session cookie an answer sets. */
const maxAge = (a: Answer): number => Number(/Max-Age=(\d+)/.exec(a.setCookie ?? "")?.[1])

/** Sign in and allow: from then on the authorize request is answered with a code at once. */
const signedInWithConsent = (b: Browser, query: string, username: string, password: string) =>
  Effect.gen(function* () {
    view(yield* signIn(b, query, username, password), "Redirect")
    const consent = yield* b.get(query)
    view(yield* b.post("authorize", { ...ticketOf(consent), decision: "allow" }, {}, query), "Redirect")
    const code = new URL(view(yield* b.get(query), "Redirect").location).searchParams.get("code")
    assert.isNotNull(code, "signed in with consent: a code at once")
  })

describe("sessions: absolute lifetime (ASVS V3.3.2)", () => {
  it.effect(
    "a session used every 29 minutes is signed out sessionMaxAge after the sign-in; its cookie never outlives it",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const b = new Browser()
        yield* signIn(b, query, user.username, password)
        // 24 × 1740 s = 41760 s: every page renews the idle lifetime, 1440 s of the 12 hours remain
        for (let i = 0; i < 24; i++) {
          yield* TestClock.adjust("1740 seconds")
          const page = yield* b.get(query)
          view(page, "Consent")
          if (i === 23) assert.isAtMost(maxAge(page), 1440, "the cookie ends with the absolute lifetime")
        }
        yield* TestClock.adjust("1740 seconds")
        view(yield* b.get(query), "SignIn")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("the absolute lifetime is the sessionMaxAge setting; signing in again starts a new one", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      yield* TestClock.adjust("1000 seconds")
      view(yield* b.get(query), "Consent")
      yield* TestClock.adjust("1000 seconds")
      view(yield* b.get(query), "SignIn")
      view(yield* signIn(b, query, user.username, password), "Redirect")
      yield* TestClock.adjust("1000 seconds")
      view(yield* b.get(query), "Consent")
    }).pipe(Effect.provide(TestLayer({ sessionMaxAge: 1800 })))
  )

  it.effect("a form of a session past its absolute lifetime is refused and issues nothing", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const consent = yield* b.get(query)
      yield* TestClock.adjust("601 seconds")
      const refused = errorOf(
        yield* b.post("authorize", { ...ticketOf(consent), decision: "allow" }, {}, query)
      )
      assert.strictEqual(refused.status, 403)
    }).pipe(Effect.provide(TestLayer({ sessionMaxAge: 600 })))
  )
})

describe("sessions: ended with the account's access", () => {
  it.effect(
    "disabling a user ends their session: enabled again, the old cookie is signed out and gets no code",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const b = new Browser()
        yield* signedInWithConsent(b, query, user.username, password)
        const other = yield* newUser()
        const c = new Browser()
        yield* signIn(c, query, other.user.username, other.password)
        yield* Admin.disableUser(user)
        yield* Admin.enableUser(user)
        view(yield* b.get(query), "SignIn")
        view(yield* c.get(query), "Consent")
      }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a page request that read the session before the disable does not store it again when it ends after it",
    () => {
      // Memory stores whose session writes wait at a gate once it is armed
      const stores = Memory.make()
      const inner = Context.get(stores, SessionStore)
      const gate = {
        armed: false,
        reached: Deferred.unsafeMake<void>(FiberId.none),
        release: Deferred.unsafeMake<void>(FiberId.none)
      }
      const held = <A, E>(write: Effect.Effect<A, E>) =>
        Effect.suspend(() => {
          if (!gate.armed) return write
          gate.armed = false
          return Deferred.succeed(gate.reached, undefined).pipe(
            Effect.zipRight(Deferred.await(gate.release)),
            Effect.zipRight(write)
          )
        })
      const gated = Context.add(stores, SessionStore, {
        ...inner,
        save: (s) => held(inner.save(s)),
        renew: (s) => held(inner.renew(s))
      })
      const layer = Layer.mergeAll(
        Layer.succeedContext(gated),
        settings(),
        Entropy.layer,
        TestHasher,
        Throttle.layer()
      )
      return Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const b = new Browser()
        yield* signIn(b, query, user.username, password)
        gate.armed = true
        // The consent page has read the signed-in session and is about to store it renewed
        const page = yield* Effect.fork(b.get(query))
        yield* Deferred.await(gate.reached)
        yield* Admin.disableUser(user)
        yield* Deferred.succeed(gate.release, undefined)
        yield* Fiber.join(page)
        yield* Admin.enableUser(user)
        view(yield* b.get(query), "SignIn")
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("a new password ends the user's sessions; with keepSessions they stay signed in", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password)
      yield* Admin.setPassword(user, "a new password", { keepSessions: true })
      view(yield* b.get(query), "Redirect")
      yield* Admin.setPassword(user, "another new password")
      view(yield* b.get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "a new password ends the trust of the user's browsers: no throttle budget of their own, a new device cookie at the next sign-in",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const alice = new Browser()
        yield* signIn(alice, query, user.username, password)
        const trusted = alice.device
        // Failures from elsewhere lock the username out of every untrusted browser
        for (let i = 0; i < 12; i++) yield* signIn(new Browser(), query, user.username, `wrong-${i}-password`)
        alice.cookie = undefined
        view(yield* signIn(alice, query, user.username, password), "Redirect")
        yield* Admin.setPassword(user, "a new password", { keepSessions: true })
        alice.cookie = undefined
        assert.strictEqual(errorOf(yield* signIn(alice, query, user.username, "a new password")).status, 429)
        assert.strictEqual(alice.device, trusted, "no new device cookie without a sign-in")
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("trusted devices: bound to the account and its password", () => {
  const cookie = { path: "/oauth2/oauth2", secure: true }
  it.effect("a device cookie counts for its account only while the password stays", () =>
    Effect.gen(function* () {
      const { user } = yield* newUser()
      const trusting = yield* Session.trusting(user, cookie, undefined)
      yield* trusting.write
      const header = trusting.value.split(";")[0] as string
      assert.isTrue(Option.isSome(yield* Session.trustedDevice(header, user)))
      assert.isTrue(
        Option.isNone(yield* Session.trustedDevice(header, { ...user, passwordHash: "new$hash" }))
      )
      // The same username deleted and created again is another account
      assert.isTrue(Option.isNone(yield* Session.trustedDevice(header, { ...user, userId: "recreated" })))
      assert.isTrue(Option.isNone(yield* Session.trustedDevice(header, null)))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("after a password change the next sign-in with the new password trusts the browser again", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signIn(b, query, user.username, password)
      const first = b.device
      yield* Admin.setPassword(user, "a new password")
      const again = yield* signIn(b, query, user.username, "a new password")
      view(again, "Redirect")
      assert.isString(again.deviceCookie)
      assert.notStrictEqual(b.device, first)
    }).pipe(Effect.provide(TestLayer()))
  )
})

describe("sessions: a silent authorization renews the session", () => {
  /** Two silent authorizations 20 minutes apart (40 minutes after the sign-in, past the 30 idle ones). */
  const twiceSilent = (b: Browser, query: string, answered: (location: string) => boolean) =>
    Effect.gen(function* () {
      for (let i = 0; i < 2; i++) {
        yield* TestClock.adjust("1200 seconds")
        const silent = yield* b.get(query)
        const location = view(silent, "Redirect").location
        assert.isTrue(answered(location), location)
        assert.strictEqual(maxAge(silent), 1800, "the session's cookie is renewed with it")
      }
    })

  it.effect("a code answered at once for a signed-in user with consent renews the idle lifetime", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password)
      yield* twiceSilent(b, query, (l) => new URL(l).searchParams.has("code"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("an implicit token answered at once renews the idle lifetime", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup({ response_type: "token" })
      const b = new Browser()
      view(yield* signIn(b, query, user.username, password), "Redirect")
      view(yield* allow(b, yield* b.get(query)), "Redirect")
      yield* twiceSilent(b, query, (l) => new URL(l).hash.startsWith("#access_token="))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("prompt=none succeeding renews the idle lifetime", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* openIdSetup()
      const b = new Browser()
      const at = yield* openIdSignedIn(b, query, user.username, password)
      assert.strictEqual(at, 1000)
      yield* twiceSilent(b, `${query}&prompt=none`, (l) => new URL(l).searchParams.has("code"))
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect("silent authorizations never renew a session past its absolute lifetime", () =>
    Effect.gen(function* () {
      const { user, password, query } = yield* setup()
      const b = new Browser()
      yield* signedInWithConsent(b, query, user.username, password)
      yield* TestClock.adjust("1200 seconds")
      assert.strictEqual(maxAge(yield* b.get(query)), 1800)
      yield* TestClock.adjust("1200 seconds")
      const last = yield* b.get(query)
      view(last, "Redirect")
      assert.strictEqual(maxAge(last), 600, "the cookie ends with the absolute lifetime")
      yield* TestClock.adjust("601 seconds")
      view(yield* b.get(query), "SignIn")
    }).pipe(Effect.provide(TestLayer({ sessionMaxAge: 3000 })))
  )
})

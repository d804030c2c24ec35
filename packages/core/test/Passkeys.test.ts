import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as Accounts from "../src/security/Accounts.js"
import * as Audit from "../src/security/Audit.js"
import * as Passkeys from "../src/security/Passkeys.js"
import { sha256 } from "../src/services/Digest.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { PasskeyStore } from "../src/storage/PasskeyStore.js"
import { SessionStore } from "../src/storage/SessionStore.js"
import { UserStore } from "../src/storage/UserStore.js"
import { type Answer, Browser, errorOf, setup, signIn, ticketOf, view } from "./browser.js"
import { issuer, TestLayer } from "./fixtures.js"
import { allow, codeOf, openIdSetup, queryOf } from "./openid.js"
import { Authenticator, FakeWebAuthn, verifications } from "./passkeys.js"

const Audited = () => Layer.provideMerge(Audit.layer, Memory.auditLayer)
const WithPasskeys = () => Layer.mergeAll(TestLayer(), FakeWebAuthn, Audited())

// biome-ignore lint/suspicious/noExplicitAny: the endpoints' JSON, read as the page's script reads it
const jsonOf = (a: Answer): any => view(a, "Json").body

const next = (body: { txn: string; csrf_token: string }) => ({ txn: body.txn, csrf_token: body.csrf_token })

/** A signed-in browser that allowed the application, and the query of its authorize request. */
const signedIn = Effect.gen(function* () {
  const s = yield* setup()
  const b = new Browser()
  view(yield* signIn(b, s.query, s.user.username, s.password), "Redirect")
  const consent = yield* b.get(s.query)
  view(yield* b.post("authorize", { ...ticketOf(consent), decision: "allow" }), "Redirect")
  return { ...s, b }
})

/** Register a passkey of `auth` from the signed-in browser `b`; answers the endpoint's JSON. */
const register = (b: Browser, auth: Authenticator, name = "Laptop") =>
  Effect.gen(function* () {
    const list = jsonOf(yield* b.request("passkeys", "GET", "", ""))
    const options = jsonOf(yield* b.post("passkeys", { ...next(list), action: "options" }))
    const credential = auth.create(options.publicKey)
    return jsonOf(yield* b.post("passkeys", { ...next(options), action: "register", credential, name }))
  })

/** A passkey sign-in from the sign-in page of `query` in `b`: the challenge, then the answer `answer` makes. */
const passkeySignIn = (b: Browser, query: string, answer: (options: unknown) => string) =>
  Effect.gen(function* () {
    const page = yield* b.get(query)
    const challenge = jsonOf(yield* b.post("passkeyChallenge", ticketOf(page)))
    const done = yield* b.post("passkeyLogin", {
      ...next(challenge),
      credential: answer(challenge.publicKey)
    })
    return { challenge, done }
  })

/** Follow a passkey sign-in's `location`: the authorize request again, answered with the code. */
const follow = (b: Browser, done: Answer) =>
  Effect.gen(function* () {
    const location = new URL(jsonOf(done).location, issuer)
    const redirect = view(yield* b.get(location.search.slice(1)), "Redirect")
    return new URL(redirect.location)
  })

const events = (type: string) =>
  Effect.flatMap(AuditStore, (s) => s.query({ limit: 100 })).pipe(
    Effect.map((all) => all.filter((e) => e.type === type))
  )

describe("passkeys are opt-in", () => {
  it.effect(
    "without a WebAuthn service the sign-in page has no passkey button and the endpoints are 404",
    () =>
      Effect.gen(function* () {
        const s = yield* setup()
        const b = new Browser()
        const page = view(yield* b.get(s.query), "SignIn")
        assert.isFalse("passkey" in page)
        for (const p of ["passkeyChallenge", "passkeyLogin", "passkeys"] as const) {
          assert.strictEqual(errorOf(yield* b.post(p, ticketOf(yield* b.get(s.query)))).status, 404)
        }
      }).pipe(Effect.provide(TestLayer()))
  )
})

describe("passkey registration", () => {
  it.effect("a signed-in user registers a passkey: listed, stored with its counter, audited", () =>
    Effect.gen(function* () {
      const { b, user } = yield* signedIn
      const auth = new Authenticator()
      const registered = yield* register(b, auth)
      assert.strictEqual(registered.passkey.name, "Laptop")
      const id = registered.passkey.credential_id
      assert.isTrue(auth.passkeys.has(id))
      const stored = yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(user.userId))
      assert.deepStrictEqual(
        stored.map((p) => [p.credentialId, p.counter, p.lastUsedAt]),
        [[id, 0, null]]
      )
      const list = jsonOf(yield* b.request("passkeys", "GET", "", ""))
      assert.deepStrictEqual(
        list.passkeys.map((p: { credential_id: string }) => p.credential_id),
        [id]
      )
      assert.notProperty(list.passkeys[0], "public_key")
      assert.deepStrictEqual(
        (yield* events("passkey_registered")).map((e) => [e.userId, e.detail]),
        [[user.userId, id]]
      )
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("nobody signed in: 401, nothing issued", () =>
    Effect.gen(function* () {
      const b = new Browser()
      assert.strictEqual(errorOf(yield* b.request("passkeys", "GET", "", "")).status, 401)
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("a registration's challenge is good once, for its own ticket, and for 300 seconds", () =>
    Effect.gen(function* () {
      const { b, user } = yield* signedIn
      const auth = new Authenticator()
      const list = jsonOf(yield* b.request("passkeys", "GET", "", ""))
      const options = jsonOf(yield* b.post("passkeys", { ...next(list), action: "options" }))
      // Another ticket's challenge does not verify for this one
      const other = jsonOf(yield* b.post("passkeys", { ...next(options), action: "options" }))
      const forOther = auth.create(options.publicKey)
      assert.strictEqual(
        errorOf(yield* b.post("passkeys", { ...next(other), action: "register", credential: forOther }))
          .status,
        400
      )
      // The ticket was spent by the refusal: its own answer finds nothing
      const again = auth.create(other.publicKey)
      assert.strictEqual(
        errorOf(yield* b.post("passkeys", { ...next(other), action: "register", credential: again })).status,
        403
      )
      // Past the challenge's lifetime
      const late = jsonOf(
        yield* b.post("passkeys", {
          ...next(jsonOf(yield* b.request("passkeys", "GET", "", ""))),
          action: "options"
        })
      )
      yield* TestClock.adjust(`${Passkeys.challengeTtl + 1} seconds`)
      const lateAnswer = auth.create(late.publicKey)
      assert.strictEqual(
        errorOf(yield* b.post("passkeys", { ...next(late), action: "register", credential: lateAnswer }))
          .status,
        403
      )
      assert.deepStrictEqual(yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(user.userId)), [])
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("a cross-site post is refused; remove takes the user's own passkey, audited", () =>
    Effect.gen(function* () {
      const { b, user } = yield* signedIn
      const auth = new Authenticator()
      const registered = yield* register(b, auth)
      const id = registered.passkey.credential_id
      const refused = yield* b.post(
        "passkeys",
        { ...next(registered), action: "remove", credential_id: id },
        { "sec-fetch-site": "cross-site" }
      )
      assert.strictEqual(errorOf(refused).status, 403)
      const list = jsonOf(yield* b.request("passkeys", "GET", "", ""))
      const removed = jsonOf(
        yield* b.post("passkeys", { ...next(list), action: "remove", credential_id: id })
      )
      assert.isTrue(removed.removed)
      assert.deepStrictEqual(yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(user.userId)), [])
      assert.strictEqual((yield* events("passkey_removed")).length, 1)
    }).pipe(Effect.provide(WithPasskeys()))
  )
})

describe("passkey sign-in", () => {
  it.effect("the sign-in page offers a passkey; a passkey signs in with no password and gets the code", () =>
    Effect.gen(function* () {
      const { b, query, user } = yield* signedIn
      const auth = new Authenticator()
      yield* register(b, auth)
      const fresh = new Browser()
      const page = view(yield* fresh.get(query), "SignIn")
      assert.deepStrictEqual(page.passkey, {
        challenge: "/oauth2/oauth2/passkey/challenge",
        login: "/oauth2/oauth2/passkey/login"
      })
      const { done } = yield* passkeySignIn(fresh, query, (o) => auth.get(o))
      assert.isNotNull(done.setCookie)
      const redirect = yield* follow(fresh, done)
      assert.isNotNull(redirect.searchParams.get("code"))
      assert.strictEqual(redirect.searchParams.get("state"), "s-1")
      // The session records how it was signed in: this authenticator's passkey is bound to it
      const id = (fresh.cookie ?? "").split("=")[1]?.split(".")[0] ?? ""
      const session = yield* Effect.flatMap(SessionStore, (s) =>
        Effect.flatMap(sha256(id), (h) => s.find(h, 0))
      )
      assert.deepStrictEqual(
        Option.map(session, (s) => [s.userId, s.method]),
        Option.some([user.userId, "passkey-device"])
      )
      const stored = yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(user.userId))
      assert.strictEqual(stored[0]?.counter, 1)
      assert.strictEqual((yield* events("passkey_signed_in")).length, 1)
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("a challenge issued within a second (its ticket's time rounded up) is live", () =>
    Effect.gen(function* () {
      const { b, query } = yield* signedIn
      const auth = new Authenticator()
      yield* TestClock.adjust("500 millis")
      yield* register(b, auth)
      const owner = new Browser()
      const { done } = yield* passkeySignIn(owner, query, (o) => auth.get(o))
      assert.isNotNull((yield* follow(owner, done)).searchParams.get("code"))
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("a sign-in challenge is good once: the same answer again is refused and signs nobody in", () =>
    Effect.gen(function* () {
      const { b, query } = yield* signedIn
      const auth = new Authenticator()
      yield* register(b, auth)
      const fresh = new Browser()
      const { challenge, done } = yield* passkeySignIn(fresh, query, (o) => auth.get(o))
      view(done, "Json")
      const replay = new Browser()
      replay.cookie = fresh.cookie
      const again = yield* replay.post("passkeyLogin", {
        ...next(challenge),
        credential: auth.get(challenge.publicKey)
      })
      assert.strictEqual(errorOf(again).status, 403)
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("a challenge past 300 seconds, another ticket's challenge, or a stale counter is refused", () =>
    Effect.gen(function* () {
      const { b, query } = yield* signedIn
      const auth = new Authenticator()
      yield* register(b, auth)
      const late = new Browser()
      const page = yield* late.get(query)
      const challenge = jsonOf(yield* late.post("passkeyChallenge", ticketOf(page)))
      yield* TestClock.adjust(`${Passkeys.challengeTtl + 1} seconds`)
      const lateAnswer = auth.get(challenge.publicKey)
      assert.strictEqual(
        errorOf(yield* late.post("passkeyLogin", { ...next(challenge), credential: lateAnswer })).status,
        403
      )
      // An answer to another ticket's challenge
      const other = new Browser()
      const first = jsonOf(yield* other.post("passkeyChallenge", ticketOf(yield* other.get(query))))
      const second = jsonOf(yield* other.post("passkeyChallenge", ticketOf(yield* other.get(query))))
      const crossed = yield* other.post("passkeyLogin", {
        ...next(second),
        credential: auth.get(first.publicKey)
      })
      assert.strictEqual(errorOf(crossed).status, 400)
      // A cloned authenticator's counter: not past the stored one
      const { done } = yield* passkeySignIn(new Browser(), query, (o) => auth.get(o, undefined, 5))
      view(done, "Json")
      const { done: cloned } = yield* passkeySignIn(new Browser(), query, (o) => auth.get(o, undefined, 5))
      assert.strictEqual(errorOf(cloned).status, 400)
      assert.isAtLeast((yield* events("signin_failed")).length, 2)
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("a disabled account's passkey signs nobody in", () =>
    Effect.gen(function* () {
      const { b, query, user } = yield* signedIn
      const auth = new Authenticator()
      yield* register(b, auth)
      yield* Effect.flatMap(UserStore, (s) => s.setDisabled(user.userId, true, 0))
      const { done } = yield* passkeySignIn(new Browser(), query, (o) => auth.get(o))
      assert.strictEqual(errorOf(done).status, 400)
      assert.isNull(done.setCookie)
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("failed answers lock the passkey's own budget: 429 for it, the password still signs in", () =>
    Effect.gen(function* () {
      const { b, query, user, password } = yield* signedIn
      const auth = new Authenticator()
      yield* register(b, auth)
      const forged = (o: unknown) => {
        const a = JSON.parse(auth.get(o))
        return JSON.stringify({ ...a, response: { ...a.response, signature: "forged" } })
      }
      const statuses: Array<number> = []
      for (let i = 0; i < 7; i++)
        statuses.push(errorOf((yield* passkeySignIn(new Browser(), query, forged)).done).status)
      assert.deepStrictEqual(statuses, [400, 400, 400, 400, 400, 400, 429])
      view(yield* signIn(new Browser(), query, user.username, password), "Redirect")
    }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect(
    "password guesses at the username, from this address and from many, never slow or refuse the passkey",
    () =>
      Effect.gen(function* () {
        const { b, query, user, password } = yield* signedIn
        const auth = new Authenticator()
        yield* register(b, auth)
        // Wrong passwords from the passkey's own address until the username is locked there
        const guesser = new Browser()
        for (let i = 0; i < 6; i++) yield* signIn(guesser, query, user.username, "wrong")
        assert.strictEqual(errorOf(yield* signIn(new Browser(), query, user.username, password)).status, 429)
        // and guesses from 40 other addresses at once: the username's schedule is full, they wait on the clock
        const guesses = yield* Effect.fork(
          Effect.forEach(
            Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`),
            (address) => Effect.either(Accounts.verify(user.username, "wrong", address)),
            { concurrency: "unbounded" }
          )
        )
        yield* Effect.yieldNow({ priority: 1 })
        // The passkey signs its owner in at once: no clock advanced, nothing waited for
        const before = verifications.count
        const owner = new Browser()
        const { done } = yield* passkeySignIn(owner, query, (o) => auth.get(o))
        assert.isNotNull((yield* follow(owner, done)).searchParams.get("code"))
        assert.strictEqual(verifications.count, before + 1)
        assert.isNull(yield* Fiber.poll(guesses).pipe(Effect.map(Option.getOrNull)))
        yield* Fiber.interrupt(guesses)
      }).pipe(Effect.provide(WithPasskeys()))
  )
})

describe("the sign-in method a code of an OpenID request records", () => {
  /** A browser that signed in with a password and allowed an OpenID request; the code it got. */
  const passwordSignedIn = (query: string, username: string, password: string) =>
    Effect.gen(function* () {
      const b = new Browser()
      yield* TestClock.setTime(1_000_000)
      const consent = yield* b.get(queryOf(yield* signIn(b, query, username, password)))
      return { b, code: yield* codeOf(yield* allow(b, consent)) }
    })

  it.effect("a password sign-in: password, at the sign-in's time; a plain OAuth code records none", () =>
    Effect.gen(function* () {
      const s = yield* openIdSetup()
      const { code } = yield* passwordSignedIn(s.query, s.user.username, s.password)
      assert.deepStrictEqual([code.signInMethod, code.authTime], ["password", 1000])
      const plain = yield* setup()
      const b = new Browser()
      yield* signIn(b, plain.query, plain.user.username, plain.password)
      const consent = yield* b.get(plain.query)
      const oauth = yield* codeOf(yield* allow(b, consent))
      assert.notProperty(oauth, "signInMethod")
      assert.isNull(oauth.authTime ?? null)
    }).pipe(Effect.provide(WithPasskeys()))
  )

  for (const [deviceType, method] of [
    ["singleDevice", "passkey-device"],
    ["multiDevice", "passkey"]
  ] as const) {
    it.effect(`a ${deviceType} passkey: the session and the code record ${method}`, () =>
      Effect.gen(function* () {
        const s = yield* openIdSetup()
        const { b } = yield* passwordSignedIn(s.query, s.user.username, s.password)
        const auth = new Authenticator(new URL(issuer).origin, deviceType)
        yield* register(b, auth)
        yield* TestClock.setTime(2_000_000)
        const fresh = new Browser()
        const { done } = yield* passkeySignIn(fresh, s.query, (o) => auth.get(o))
        const location = new URL(jsonOf(done).location, issuer)
        const code = yield* codeOf(yield* fresh.get(location.search.slice(1)))
        assert.deepStrictEqual([code.signInMethod, code.authTime], [method, 2000])
      }).pipe(Effect.provide(WithPasskeys()))
    )
  }
})

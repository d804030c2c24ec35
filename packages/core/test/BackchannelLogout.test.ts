/**
 * OpenID Connect Back-Channel Logout 1.0: the retry schedule, the logout token a session's end
 * sends to the applications that received an ID token in it (and to no other), its delivery,
 * retries and giving up, and the registration of the URI. Time comes from the TestClock; the
 * sender is a recording stand-in whose answers each test scripts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option, TestClock } from "effect"
import * as jose from "jose"
import * as Admin from "../src/admin/Admin.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as LogoutToken from "../src/openid/LogoutToken.js"
import * as Audit from "../src/security/Audit.js"
import * as BackchannelLogout from "../src/security/BackchannelLogout.js"
import { LogoutSender } from "../src/services/LogoutSender.js"
import * as Jwt from "../src/signing/Jwt.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import { LogoutStore } from "../src/storage/LogoutStore.js"
import * as Memory from "../src/storage/Memory.js"
import { Browser, signIn, ticketOf } from "./browser.js"
import { form, issuer, TestLayer } from "./fixtures.js"
import { redeem } from "./openid/helpers.js"
import { clientRedirect, openIdSetup, queryOf } from "./openid.js"

const receiver = "https://app.example/backchannel"

/** A sender that records what it was given and answers the scripted statuses in turn (the last one after). */
const scripted = (statuses: ReadonlyArray<number | null>) => {
  const sent: Array<{ readonly uri: string; readonly token: string }> = []
  const layer = Layer.succeed(LogoutSender, {
    send: (uri, token) =>
      Effect.sync(() => {
        sent.push({ uri, token })
        return { status: statuses[Math.min(sent.length, statuses.length) - 1] ?? null }
      })
  })
  return { sent, layer }
}

const Layers = (sender: Layer.Layer<LogoutSender>) =>
  Layer.mergeAll(TestLayer({ issuer }), Layer.provideMerge(Audit.layer, Memory.auditLayer), sender)

/** An OpenID application (with `uri` as its back-channel logout URI), a signed-in browser, its ID token. */
const signedIn = (uri: string | null = receiver) =>
  Effect.gen(function* () {
    const { app, user, password, query } = yield* openIdSetup()
    yield* Admin.updateApplication(app.appKey, { backchannelLogoutUri: uri })
    const { appSecret } = yield* Admin.rotateSecret(app.appKey)
    yield* TestClock.setTime(1000 * 1000)
    const b = new Browser()
    const consent = yield* b.get(queryOf(yield* signIn(b, query, user.username, password)))
    const code = clientRedirect(yield* b.post("authorize", { ...ticketOf(consent), decision: "allow" })).get(
      "code"
    )
    const basic = BasicAuth.encode({ appKey: app.appKey, appSecret })
    const idToken = JSON.parse((yield* redeem(code as string, basic)).body as string).id_token as string
    return { app, user, idToken, b }
  })

/** End the browser's session the way an application does: RP-initiated logout with its ID token. */
const logout = (b: Browser, idToken: string) =>
  b.request("logout", "GET", form({ id_token_hint: idToken }), "")

const pending = Effect.flatMap(LogoutStore, (s) => s.pending())

const events = (type: string) =>
  Effect.map(
    Effect.flatMap(AuditStore, (s) => s.tail({ limit: 100 })),
    (all) => all.filter((e) => e.type === type)
  )

describe("the retry schedule", () => {
  it("doubles from the base up to the cap, and ends at the last attempt", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 2_000_000_000 }),
        (base, capOver, maxAttempts, now) => {
          const backoff = { base, cap: base + capOver, maxAttempts }
          let previous = 0
          for (let attempts = 1; attempts < maxAttempts; attempts++) {
            const delay = Option.getOrThrow(BackchannelLogout.nextAttempt(attempts, now, backoff)) - now
            assert.isAtLeast(delay, previous)
            assert.isAtMost(delay, backoff.cap)
            assert.strictEqual(delay, Math.min(backoff.cap, base * 2 ** (attempts - 1)))
            previous = delay
          }
          assert.isTrue(Option.isNone(BackchannelLogout.nextAttempt(maxAttempts, now, backoff)))
        }
      )
    )
  })
})

describe("a session's end sends a logout token", () => {
  it.effect(
    "to the application that received an ID token in it: signed, typed logout+jwt, with sub, sid, events, no nonce",
    () => {
      const sender = scripted([200])
      return Effect.gen(function* () {
        const { app, idToken, b } = yield* signedIn()
        assert.strictEqual(yield* pending, 0)
        yield* logout(b, idToken)
        assert.strictEqual(yield* pending, 1)
        const outcome = yield* BackchannelLogout.deliverDue()
        assert.deepStrictEqual(outcome, { delivered: 1, retried: 0, gaveUp: 0 })
        assert.strictEqual(sender.sent.length, 1)
        const [{ uri, token }] = sender.sent as [{ uri: string; token: string }]
        assert.strictEqual(uri, receiver)
        const claims = yield* Jwt.verify(token, { typ: LogoutToken.logoutTokenType, audience: app.appKey })
        const id = jose.decodeJwt(idToken)
        assert.strictEqual(jose.decodeProtectedHeader(token).typ, "logout+jwt")
        assert.strictEqual(claims.iss, issuer)
        assert.strictEqual(claims.sub, id.sub)
        assert.strictEqual(claims.sid, id.sid)
        assert.deepStrictEqual(claims.events, { [LogoutToken.backchannelLogoutEvent]: {} })
        assert.isString(claims.jti)
        assert.strictEqual((claims.exp as number) - (claims.iat as number), LogoutToken.logoutTokenTtl)
        assert.notProperty(claims, "nonce")
        assert.strictEqual(yield* pending, 0)
        assert.strictEqual((yield* events("backchannel_logout_delivered")).length, 1)
        // Delivered once: the next run sends nothing
        assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 0, retried: 0, gaveUp: 0 })
      }).pipe(Effect.provide(Layers(sender.layer)))
    }
  )

  it.effect("to no application without a back-channel logout URI", () => {
    const sender = scripted([200])
    return Effect.gen(function* () {
      const { idToken, b } = yield* signedIn(null)
      yield* logout(b, idToken)
      assert.strictEqual(yield* pending, 0)
      yield* BackchannelLogout.deliverDue()
      assert.strictEqual(sender.sent.length, 0)
    }).pipe(Effect.provide(Layers(sender.layer)))
  })

  it.effect("again after the backoff when the application does not answer 2xx, not before", () => {
    const sender = scripted([503, null, 200])
    return Effect.gen(function* () {
      const { idToken, b } = yield* signedIn()
      yield* logout(b, idToken)
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 0, retried: 1, gaveUp: 0 })
      yield* TestClock.adjust("9 seconds")
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 0, retried: 0, gaveUp: 0 })
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 0, retried: 1, gaveUp: 0 })
      yield* TestClock.adjust("20 seconds")
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 1, retried: 0, gaveUp: 0 })
      assert.strictEqual(sender.sent.length, 3)
      // A new logout token each time (a new jti)
      assert.strictEqual(new Set(sender.sent.map((s) => jose.decodeJwt(s.token).jti)).size, 3)
    }).pipe(Effect.provide(Layers(sender.layer)))
  })

  it.effect("given up after the last attempt, with a backchannel_logout_failed audit event", () => {
    const sender = scripted([500])
    const backoff = { base: 1, cap: 1, maxAttempts: 2 }
    return Effect.gen(function* () {
      const { app, idToken, b } = yield* signedIn()
      yield* logout(b, idToken)
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue({ backoff }), {
        delivered: 0,
        retried: 1,
        gaveUp: 0
      })
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue({ backoff }), {
        delivered: 0,
        retried: 0,
        gaveUp: 1
      })
      assert.strictEqual(yield* pending, 0)
      const failed = yield* events("backchannel_logout_failed")
      assert.strictEqual(failed.length, 1)
      assert.strictEqual(failed[0]?.appKey, app.appKey)
      assert.strictEqual(failed[0]?.detail, "given up after 2 attempts: status 500")
    }).pipe(Effect.provide(Layers(sender.layer)))
  })

  it.effect("given up at once when the application no longer has a URI", () => {
    const sender = scripted([200])
    return Effect.gen(function* () {
      const { app, idToken, b } = yield* signedIn()
      yield* logout(b, idToken)
      yield* Admin.updateApplication(app.appKey, { backchannelLogoutUri: null })
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 0, retried: 0, gaveUp: 1 })
      assert.strictEqual(sender.sent.length, 0)
    }).pipe(Effect.provide(Layers(sender.layer)))
  })

  it.effect("when the operator disables the user: one delivery per session", () => {
    const sender = scripted([200])
    return Effect.gen(function* () {
      const { user } = yield* signedIn()
      yield* Admin.disableUser(user.username)
      assert.strictEqual(yield* pending, 1)
      assert.deepStrictEqual(yield* BackchannelLogout.deliverDue(), { delivered: 1, retried: 0, gaveUp: 0 })
    }).pipe(Effect.provide(Layers(sender.layer)))
  })
})

describe("registering a back-channel logout URI", () => {
  it.effect("https, or http on loopback; never another http, a fragment or a private-use scheme", () =>
    Effect.gen(function* () {
      const { app } = yield* openIdSetup()
      for (const ok of [receiver, "http://127.0.0.1:8080/bc", "http://localhost/bc"]) {
        const { app: updated } = yield* Admin.updateApplication(app.appKey, { backchannelLogoutUri: ok })
        assert.strictEqual(updated.backchannelLogoutUri, ok)
      }
      for (const bad of [
        "http://app.example/bc",
        "https://app.example/bc#x",
        "com.example.app:/bc",
        "/bc",
        ""
      ]) {
        const e = yield* Effect.flip(Admin.updateApplication(app.appKey, { backchannelLogoutUri: bad }))
        assert.strictEqual(e._tag, "InvalidField")
      }
      const { app: cleared } = yield* Admin.updateApplication(app.appKey, { backchannelLogoutUri: null })
      assert.isNull(cleared.backchannelLogoutUri)
    }).pipe(Effect.provide(Layers(scripted([]).layer)))
  )
})

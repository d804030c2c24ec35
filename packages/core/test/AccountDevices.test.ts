/**
 * Trusted devices, recorded: every sign-in that makes a browser trusted stores its record (label,
 * since when, last sign-in), the account page lists them (this browser marked) and forgets one
 * (`forget_device`: that browser's cookie trusted no more, audited, CSRF-protected, never another
 * user's) or all others; a recorded cookie whose record is gone is not trusted, while a cookie from
 * before records stays trusted until "Forget all other browsers" and is recorded at its next sign-in.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, Option, TestClock } from "effect"
import { Config } from "../src/model/Config.js"
import * as SecondFactor from "../src/security/SecondFactor.js"
import * as Session from "../src/security/Session.js"
import { hmac } from "../src/services/Digest.js"
import * as Entropy from "../src/services/Entropy.js"
import { DeviceStore } from "../src/storage/DeviceStore.js"
import { UserStore } from "../src/storage/UserStore.js"
import { Audited, events, noticeAfter, postForm, sectionOf, signedIn } from "./account.js"
import { appCode, Browser, errorOf, factorForm, setup, signIn, ticketOf, view } from "./browser.js"
import { newUser, TestLayer } from "./fixtures.js"

const Layers = () => Layer.mergeAll(TestLayer(), Audited())

const firefox = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0" }
const iPhone = {
  "user-agent":
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

/** The Sessions section of the page `b` shows now. */
const sessionsOf = (b: Browser) => Effect.map(b.account(), (a) => Option.getOrThrow(sectionOf(a, "Sessions")))

/** The devices the page of `b` lists. */
const devicesOf = (b: Browser) => Effect.map(sessionsOf(b), (s) => s.devices)

const trusted = (b: Browser) => Effect.map(sessionsOf(b), (s) => s.trusted)

/** A trusted-device cookie as Latchkey signed them before device records (generation 0): no record. */
const legacyCookie = (user: { readonly userId: string; readonly passwordHash: string }) =>
  Effect.gen(function* () {
    const { serverKey } = yield* Config
    const nonce = yield* Entropy.id()
    const message = `latchkey-device-v2\u0000${nonce}\u0000${user.userId}\u0000${user.passwordHash}`
    return `${Session.deviceCookieName}=${nonce}.${yield* hmac(`${serverKey}\u0000latchkey-device-cookie`, message)}`
  })

/** The account of `username` as stored now. */
const account = (username: string) =>
  Effect.map(
    Effect.flatMap(UserStore, (u) => u.findByUsername(username)),
    Option.getOrThrow
  )

describe("account page: trusted devices listed", () => {
  it.effect(
    "each recorded device with its label, since when and last sign-in from the clock, this browser marked",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const t0 = yield* now
        const here = yield* signedIn(user.username, password, new Browser(firefox))
        const cookie = here.device
        yield* TestClock.adjust("100 seconds")
        yield* signedIn(user.username, password, new Browser(iPhone))
        yield* TestClock.adjust("50 seconds")
        here.cookie = undefined
        yield* signedIn(user.username, password, here)
        assert.strictEqual(here.device, cookie, "a recorded browser keeps its cookie at a new sign-in")
        const listed = yield* devicesOf(here)
        assert.deepStrictEqual(
          listed.map((d) => [d.browser, d.system, d.trustedAt, d.lastSignInAt, d.current]),
          [
            ["Firefox", "Linux", t0, t0 + 150, true],
            ["Safari", "iOS", t0 + 100, t0 + 100, false]
          ]
        )
        for (const d of listed) {
          assert.isFalse(cookie?.includes(d.handle) ?? true, "the handle is not the cookie's nonce")
        }
      }).pipe(Effect.provide(Layers()))
  )

  it.effect("the second sign-in step records the browser it makes trusted, and no earlier step does", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_800_000_000_000)
      const { user, password, query } = yield* setup()
      const { secret } = yield* SecondFactor.enrol(user.userId, user.username)
      yield* SecondFactor.confirm(user.userId, yield* appCode(secret))
      yield* TestClock.adjust("30 seconds")
      const listed = Effect.flatMap(DeviceStore, (d) => d.listOf(user.userId, 0))
      const b = new Browser(firefox)
      const step = yield* signIn(b, query, user.username, password)
      assert.deepStrictEqual(yield* listed, [], "the password alone trusts no browser of this user")
      view(yield* b.post("login", factorForm(step, yield* appCode(secret))), "Redirect")
      assert.deepStrictEqual(
        (yield* listed).map((d) => [d.browser, d.system, d.trustedAt]),
        [["Firefox", "Linux", 1_800_000_030]]
      )
      assert.isTrue(Option.isSome(yield* Session.trustedDevice(b.cookies(), yield* account(user.username))))
    }).pipe(Effect.provide(Layers()))
  )
})

describe("account page: forgetting one trusted device", () => {
  it.effect(
    "forget one: that browser is trusted no more (no throttle budget of its own), another stays, audited",
    () =>
      Effect.gen(function* () {
        const { user, password, query } = yield* setup()
        const here = yield* signedIn(user.username, password, new Browser(firefox))
        const there = yield* signedIn(user.username, password, new Browser(iPhone))
        const target = (yield* devicesOf(here)).find((d) => !d.current)
        assert.isDefined(target)
        const forgot = yield* postForm(here, { action: "forget_device", device: target?.handle ?? "" })
        assert.deepStrictEqual(yield* noticeAfter(here, forgot), Option.some("device_forgotten" as const))
        assert.deepStrictEqual([yield* trusted(here), yield* trusted(there)], [true, false])
        assert.deepStrictEqual(
          (yield* devicesOf(here)).map((d) => d.current),
          [true]
        )
        assert.deepStrictEqual(
          (yield* events("device_forgotten")).map((e) => [e.userId, e.detail, e.actor]),
          [[user.userId, "another browser", "user"]]
        )
        // Failures from elsewhere lock the username out of every untrusted browser: there is one now
        for (let i = 0; i < 12; i++) yield* signIn(new Browser(), query, user.username, `wrong-${i}-password`)
        here.cookie = undefined
        there.cookie = undefined
        view(yield* signIn(here, query, user.username, password), "Redirect")
        assert.strictEqual(errorOf(yield* signIn(there, query, user.username, password)).status, 429)
      }).pipe(Effect.provide(Layers()))
  )

  it.effect("forgetting this browser itself: it is simply not trusted any more", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const here = yield* signedIn(user.username, password, new Browser(firefox))
      const own = (yield* devicesOf(here)).find((d) => d.current)
      const forgot = yield* postForm(here, { action: "forget_device", device: own?.handle ?? "" })
      assert.deepStrictEqual(yield* noticeAfter(here, forgot), Option.some("device_forgotten" as const))
      assert.isFalse(yield* trusted(here))
      assert.deepStrictEqual(yield* devicesOf(here), [])
      assert.deepStrictEqual(
        (yield* events("device_forgotten")).map((e) => e.detail),
        ["this browser"]
      )
    }).pipe(Effect.provide(Layers()))
  )

  it.effect("another user's device id, or no device at all, changes nothing and records nothing", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const other = yield* newUser()
      const alice = yield* signedIn(user.username, password)
      const bob = yield* signedIn(other.user.username, other.password)
      const bobs = (yield* devicesOf(bob))[0]?.handle ?? ""
      for (const device of [bobs, "", "not-a-handle"]) {
        const answered = view(yield* postForm(alice, { action: "forget_device", device }), "Redirect")
        assert.isFalse(answered.location.includes("done="), "no notice")
      }
      assert.isTrue(yield* trusted(bob))
      assert.strictEqual((yield* devicesOf(bob)).length, 1)
      assert.strictEqual((yield* devicesOf(alice)).length, 1)
      assert.deepStrictEqual(yield* events("device_forgotten"), [])
    }).pipe(Effect.provide(Layers()))
  )

  it.effect(
    "the form needs the page's ticket, once, and from this site: else 403 and nothing forgotten",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const here = yield* signedIn(user.username, password)
        const handle = (yield* devicesOf(here))[0]?.handle ?? ""
        const page = yield* here.account()
        const noTicket = yield* here.post("account", { action: "forget_device", device: handle })
        assert.strictEqual(errorOf(noTicket).status, 403)
        const crossSite = yield* here.post(
          "account",
          { ...ticketOf(page), action: "forget_device", device: handle },
          { origin: "https://evil.example", "sec-fetch-site": "cross-site" }
        )
        assert.strictEqual(errorOf(crossSite).status, 403)
        const fields = { ...ticketOf(yield* here.account()), action: "forget_device", device: "nothing" }
        view(yield* here.post("account", fields), "Redirect")
        assert.strictEqual(errorOf(yield* here.post("account", { ...fields, device: handle })).status, 403)
        assert.isTrue(yield* trusted(here))
        assert.deepStrictEqual(yield* events("device_forgotten"), [])
      }).pipe(Effect.provide(Layers()))
  )
})

describe("trusted devices: records and cookies from before them", () => {
  it.effect(
    "a recorded cookie whose record was deleted is not trusted; the next sign-in records the browser anew",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const before = b.device
        const owner = yield* account(user.username)
        assert.isTrue(Option.isSome(yield* Session.trustedDevice(b.cookies(), owner)))
        yield* Effect.flatMap(DeviceStore, (d) => d.forgetOthers(user.userId, null))
        assert.isTrue(Option.isNone(yield* Session.trustedDevice(b.cookies(), owner)))
        b.cookie = undefined
        yield* signedIn(user.username, password, b)
        assert.notStrictEqual(b.device, before)
        assert.isTrue(Option.isSome(yield* Session.trustedDevice(b.cookies(), owner)))
      }).pipe(Effect.provide(Layers()))
  )

  it.effect("a cookie from before records stays trusted, unlisted, and is recorded at its next sign-in", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const owner = yield* account(user.username)
      const b = yield* signedIn(user.username, password)
      yield* Effect.flatMap(DeviceStore, (d) => d.forgetOthers(user.userId, null))
      const legacy = yield* legacyCookie(owner)
      b.device = legacy
      assert.isTrue(yield* trusted(b))
      assert.deepStrictEqual(yield* devicesOf(b), [])
      b.cookie = undefined
      yield* signedIn(user.username, password, b)
      assert.notStrictEqual(b.device, legacy)
      assert.deepStrictEqual(
        (yield* devicesOf(b)).map((d) => d.current),
        [true]
      )
    }).pipe(Effect.provide(Layers()))
  )

  it.effect(
    "a cookie from before records is trusted until Forget all other browsers, from another browser",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const owner = yield* account(user.username)
        const old = new Browser()
        old.device = yield* legacyCookie(owner)
        assert.isTrue(Option.isSome(yield* Session.trustedDevice(old.cookies(), owner)))
        const here = yield* signedIn(user.username, password)
        const kept = here.device
        const forgot = yield* postForm(here, { action: "forget_devices" })
        assert.isUndefined(forgot.deviceCookie, "a recorded browser keeps its cookie")
        assert.strictEqual(here.device, kept)
        assert.isTrue(yield* trusted(here))
        assert.isTrue(Option.isNone(yield* Session.trustedDevice(old.cookies(), owner)))
      }).pipe(Effect.provide(Layers()))
  )

  it.effect(
    "Forget all other browsers from a browser with a cookie from before records records it, with a new cookie",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const owner = yield* account(user.username)
        const here = yield* signedIn(user.username, password)
        const there = yield* signedIn(user.username, password)
        yield* Effect.flatMap(DeviceStore, (d) => d.forgetOthers(user.userId, null))
        here.device = yield* legacyCookie(owner)
        const forgot = yield* postForm(here, { action: "forget_devices" })
        assert.isString(forgot.deviceCookie)
        assert.deepStrictEqual([yield* trusted(here), yield* trusted(there)], [true, false])
        assert.deepStrictEqual(
          (yield* devicesOf(here)).map((d) => d.current),
          [true]
        )
      }).pipe(Effect.provide(Layers()))
  )

  it.effect(
    "from a browser that is not trusted, Forget all other browsers ends every trust and trusts no browser",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const there = yield* signedIn(user.username, password)
        const here = yield* signedIn(user.username, password)
        here.device = undefined
        const forgot = yield* postForm(here, { action: "forget_devices" })
        assert.isUndefined(forgot.deviceCookie)
        assert.deepStrictEqual([yield* trusted(here), yield* trusted(there)], [false, false])
        assert.deepStrictEqual(yield* devicesOf(there), [])
        assert.deepStrictEqual(
          (yield* events("devices_forgotten")).map((e) => [e.userId, e.detail, e.actor]),
          [[user.userId, null, "user"]]
        )
      }).pipe(Effect.provide(Layers()))
  )
})

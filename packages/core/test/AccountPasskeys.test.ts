/**
 * The account page's passkeys (passkeys on: listed, renamed and removed by the page's forms, each
 * change audited with the user as actor and CSRF-protected; off: no section, and their forms are
 * refused) and its trusted devices (whether this browser is one, and "forget all other browsers":
 * every other browser's cookie trusted no longer, this one's renewed in the same answer).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type * as Interaction from "../src/interaction/Interaction.js"
import * as Audit from "../src/security/Audit.js"
import { AuditStore } from "../src/storage/AuditStore.js"
import * as Memory from "../src/storage/Memory.js"
import { PasskeyStore } from "../src/storage/PasskeyStore.js"
import { type Answer, Browser, errorOf, setup, ticketOf, view } from "./browser.js"
import { TestLayer } from "./fixtures.js"
import { Authenticator, FakeWebAuthn } from "./passkeys.js"

const Audited = () => Layer.provideMerge(Audit.layer, Memory.auditLayer)
const WithPasskeys = () => Layer.mergeAll(TestLayer(), FakeWebAuthn, Audited())
const WithoutPasskeys = () => Layer.mergeAll(TestLayer(), Audited())

// biome-ignore lint/suspicious/noExplicitAny: the passkeys endpoint's JSON, read as the page's script reads it
const jsonOf = (a: Answer): any => view(a, "Json").body

/** Sign in with the password on the account page; returns the browser, signed in. */
const signedIn = (username: string, password: string, b = new Browser()) =>
  Effect.gen(function* () {
    const page = yield* b.account()
    view(yield* b.post("account", { ...ticketOf(page), action: "signin", username, password }), "Redirect")
    return b
  })

/** Register a passkey of a new authenticator through the passkeys endpoint, as the page's script does. */
const register = (b: Browser, name: string) =>
  Effect.gen(function* () {
    const list = jsonOf(yield* b.request("passkeys", "GET", "", ""))
    const options = jsonOf(
      yield* b.post("passkeys", { txn: list.txn, csrf_token: list.csrf_token, action: "options" })
    )
    const credential = new Authenticator().create(options.publicKey)
    const done = jsonOf(
      yield* b.post("passkeys", {
        txn: options.txn,
        csrf_token: options.csrf_token,
        action: "register",
        credential,
        name
      })
    )
    return done.passkey.credential_id as string
  })

/** One section of the account page `a` shows, by tag; none when the page has no such section. */
const sectionOf = <T extends Interaction.AccountSection["_tag"]>(a: Answer, tag: T) =>
  Option.fromNullable(
    view(a, "Account").sections.find((s) => s._tag === tag) as
      | Extract<Interaction.AccountSection, { _tag: T }>
      | undefined
  )

const listed = (a: Answer) => Option.getOrThrow(sectionOf(a, "Passkeys")).passkeys

/** Post a form of the page `b` shows now. */
const postForm = (b: Browser, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  Effect.flatMap(b.account(), (page) => b.post("account", { ...ticketOf(page), ...fields }, headers))

/** Follow a 303 back to the page; its notice. */
const noticeAfter = (b: Browser, a: Answer) =>
  Effect.gen(function* () {
    const r = view(a, "Redirect")
    const q = r.location.indexOf("?")
    return view(yield* b.account(q === -1 ? "" : r.location.slice(q + 1)), "Account").notice
  })

const events = (type: Audit.EventType) =>
  Effect.flatMap(AuditStore, (s) =>
    Effect.map(s.tail({ limit: 100 }), (all) => all.filter((e) => e.type === type))
  )

describe("account page: passkeys", () => {
  it.effect(
    "with passkeys on, the section lists the user's passkeys after the password; off, there is none",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const empty = yield* b.account()
        assert.deepStrictEqual(
          view(empty, "Account").sections.map((s) => s._tag),
          ["Password", "Passkeys", "Authenticator", "Sessions", "Applications"]
        )
        assert.strictEqual(
          Option.getOrThrow(sectionOf(empty, "Passkeys")).endpoint,
          "/oauth2/oauth2/account/passkeys"
        )
        const id = yield* register(b, "Laptop")
        const [shown] = listed(yield* b.account())
        assert.deepStrictEqual(
          [shown?.credentialId, shown?.name, shown?.lastUsedAt, shown?.synced],
          [id, "Laptop", null, false]
        )
        assert.strictEqual(
          shown?.createdAt,
          Option.getOrThrow(yield* Effect.flatMap(PasskeyStore, (s) => s.find(id))).createdAt
        )
      }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect(
    "rename: the new name stored and confirmed, audited as the user's; a blank name or another's passkey changes nothing",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const id = yield* register(b, "Laptop")
        const renamed = yield* postForm(b, {
          action: "rename_passkey",
          credential_id: id,
          name: "  Work laptop "
        })
        assert.deepStrictEqual(yield* noticeAfter(b, renamed), Option.some("passkey_renamed" as const))
        assert.strictEqual(listed(yield* b.account())[0]?.name, "Work laptop")
        const audited = yield* events("passkey_renamed")
        assert.deepStrictEqual(
          audited.map((e) => [e.userId, e.detail, e.actor]),
          [[user.userId, id, "user"]]
        )
        // Blank: nothing renamed, nothing recorded
        view(yield* postForm(b, { action: "rename_passkey", credential_id: id, name: "   " }), "Redirect")
        // Another user's passkey, by its id: untouched
        const other = yield* setup()
        const theirs = yield* signedIn(other.user.username, other.password)
        const theirId = yield* register(theirs, "Theirs")
        const refused = yield* postForm(b, {
          action: "rename_passkey",
          credential_id: theirId,
          name: "Mine now"
        })
        assert.isTrue(Option.isNone(yield* noticeAfter(b, refused)))
        assert.strictEqual(listed(yield* theirs.account())[0]?.name, "Theirs")
        assert.strictEqual((yield* events("passkey_renamed")).length, 1)
      }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect(
    "remove: gone and confirmed, audited as the user's; without the page's ticket or cross-site, refused and kept",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const b = yield* signedIn(user.username, password)
        const id = yield* register(b, "Laptop")
        const page = yield* b.account()
        const noTicket = yield* b.post("account", { action: "remove_passkey", credential_id: id })
        assert.strictEqual(errorOf(noTicket).status, 403)
        const crossSite = yield* b.post(
          "account",
          { ...ticketOf(page), action: "remove_passkey", credential_id: id },
          { origin: "https://evil.example", "sec-fetch-site": "cross-site" }
        )
        assert.strictEqual(errorOf(crossSite).status, 403)
        assert.strictEqual(listed(yield* b.account()).length, 1)
        const removed = yield* postForm(b, { action: "remove_passkey", credential_id: id })
        assert.deepStrictEqual(yield* noticeAfter(b, removed), Option.some("passkey_removed" as const))
        assert.deepStrictEqual(listed(yield* b.account()), [])
        assert.deepStrictEqual(
          (yield* events("passkey_removed")).map((e) => [e.userId, e.detail, e.actor]),
          [[user.userId, id, "user"]]
        )
      }).pipe(Effect.provide(WithPasskeys()))
  )

  it.effect("with passkeys off, a passkey form of the page is refused (400) and nothing recorded", () =>
    Effect.gen(function* () {
      const { user, password } = yield* setup()
      const b = yield* signedIn(user.username, password)
      assert.isTrue(Option.isNone(sectionOf(yield* b.account(), "Passkeys")))
      for (const action of ["rename_passkey", "remove_passkey"]) {
        const refused = errorOf(yield* postForm(b, { action, credential_id: "x", name: "y" }))
        assert.deepStrictEqual([refused.status, refused.problem], [400, { reason: "bad_form" }])
      }
      assert.deepStrictEqual(yield* events("passkey_removed"), [])
    }).pipe(Effect.provide(WithoutPasskeys()))
  )
})

describe("account page: trusted devices", () => {
  const trusted = (b: Browser) =>
    Effect.map(b.account(), (a) => Option.getOrThrow(sectionOf(a, "Sessions")).trusted)

  it.effect(
    "forget all other browsers: the others trusted no longer, this one renewed, audited as the user's",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const here = yield* signedIn(user.username, password)
        const there = yield* signedIn(user.username, password)
        const neverTrusted = new Browser()
        neverTrusted.cookie = here.cookie
        assert.deepStrictEqual(
          [yield* trusted(here), yield* trusted(there), yield* trusted(neverTrusted)],
          [true, true, false]
        )
        const before = here.device
        const forgot = yield* postForm(here, { action: "forget_devices" })
        assert.isString(forgot.deviceCookie)
        assert.notStrictEqual(here.device, before)
        assert.deepStrictEqual(yield* noticeAfter(here, forgot), Option.some("devices_forgotten" as const))
        assert.deepStrictEqual([yield* trusted(here), yield* trusted(there)], [true, false])
        // The old cookie of this browser is one of the forgotten
        const stale = new Browser()
        stale.cookie = here.cookie
        stale.device = before
        assert.isFalse(yield* trusted(stale))
        assert.deepStrictEqual(
          (yield* events("devices_forgotten")).map((e) => [e.userId, e.actor]),
          [[user.userId, "user"]]
        )
        // Signing in again with the password there makes that browser trusted again
        const again = new Browser()
        again.device = there.device
        yield* signedIn(user.username, password, again)
        assert.notStrictEqual(again.device, there.device)
        assert.isTrue(yield* trusted(again))
      }).pipe(Effect.provide(WithoutPasskeys()))
  )

  it.effect(
    "from a browser that is not trusted, forgetting ends the others' trust and trusts no browser",
    () =>
      Effect.gen(function* () {
        const { user, password } = yield* setup()
        const there = yield* signedIn(user.username, password)
        const here = yield* signedIn(user.username, password)
        here.device = undefined
        const forgot = yield* postForm(here, { action: "forget_devices" })
        assert.isUndefined(forgot.deviceCookie)
        assert.deepStrictEqual([yield* trusted(here), yield* trusted(there)], [false, false])
        assert.deepStrictEqual(
          (yield* events("devices_forgotten")).map((e) => e.detail),
          [null]
        )
      }).pipe(Effect.provide(WithoutPasskeys()))
  )
})

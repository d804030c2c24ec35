/**
 * The account page's passkeys (passkeys on: listed, renamed and removed by the page's forms, each
 * change audited with the user as actor and CSRF-protected; off: no section, and their forms are
 * refused).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { PasskeyStore } from "../src/storage/PasskeyStore.js"
import { Audited, events, noticeAfter, postForm, sectionOf, signedIn } from "./account.js"
import { type Answer, type Browser, errorOf, setup, ticketOf, view } from "./browser.js"
import { TestLayer } from "./fixtures.js"
import { Authenticator, FakeWebAuthn } from "./passkeys.js"

const WithPasskeys = () => Layer.mergeAll(TestLayer(), FakeWebAuthn, Audited())
const WithoutPasskeys = () => Layer.mergeAll(TestLayer(), Audited())

// biome-ignore lint/suspicious/noExplicitAny: the passkeys endpoint's JSON, read as the page's script reads it
const jsonOf = (a: Answer): any => view(a, "Json").body

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

const listed = (a: Answer) => Option.getOrThrow(sectionOf(a, "Passkeys")).passkeys

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

/**
 * docs/security.md T18: texts an administrator gives that pages show (application names,
 * usernames) hold no bidirectional control or invisible format character: refused when given
 * (400 naming the field, never the value, nothing stored) and dropped when a page shows a text
 * stored before the rule.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Layer } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as DisplayText from "../src/model/DisplayText.js"
import * as Accounts from "../src/security/Accounts.js"
import * as Audit from "../src/security/Audit.js"
import { ApplicationStore } from "../src/storage/ApplicationStore.js"
import * as Memory from "../src/storage/Memory.js"
import { UserStore } from "../src/storage/UserStore.js"
import { Browser, setup, signIn, ticketOf, view } from "./browser.js"
import { cb, newApp, TestLayer } from "./fixtures.js"

/** Every character the rule refuses that the issue names, and a few more of category Cf. */
const refused = [
  ...["\u202a", "\u202b", "\u202c", "\u202d", "\u202e"],
  ...["\u2066", "\u2067", "\u2068", "\u2069"],
  ...["\u200e", "\u200f", "\u061c"],
  ...["\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064", "\ufeff"],
  ...["\u180e", "\u00ad", "\u2028", "\u2029", "\u3164", "\u115f", "\ufff9", "\u{e0001}", "\u{e0041}"]
]

/** Texts of any script that read as they are: kept. */
const fine = [
  "Example app",
  "مثال",
  "דוגמה",
  "例子 App",
  "Café déjà vu",
  "Rocket 🚀",
  "❤️ love",
  "a-b_c.d (e)"
]

const Audited = () => Layer.mergeAll(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))

/** The field of an InvalidField failure, checking the value is not in its description. */
const fieldOf = <A, E>(r: Either.Either<A, E>, value: string): string => {
  if (Either.isRight(r)) return "accepted"
  const e = r.left as { _tag?: string; field?: string; description?: string }
  assert.notInclude(e.description ?? "", value)
  return e._tag === "InvalidField" ? `${e.field}: ${e.description}` : (e._tag ?? "")
}

describe("T18: texts shown on pages", () => {
  it("refuses bidirectional controls and invisible format characters, and keeps text of any script", () => {
    for (const c of refused) {
      assert.isFalse(DisplayText.isDisplayText(`App${c}name`), c.codePointAt(0)?.toString(16))
      assert.strictEqual(DisplayText.forDisplay(`App${c}name`), "Appname")
    }
    for (const s of fine) {
      assert.isTrue(DisplayText.isDisplayText(s), s)
      assert.strictEqual(DisplayText.forDisplay(s), s)
    }
  })

  it("property: what forDisplay shows is display text, and display text is shown as it is", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.constantFrom(...refused), (s, c) => {
        const shown = DisplayText.forDisplay(`${s}${c}${s}`)
        assert.isTrue(DisplayText.isDisplayText(shown))
        assert.strictEqual(DisplayText.forDisplay(shown), shown)
      })
    )
  })

  it.effect(
    "admin: an application name (created, updated, with spaces around) or a username holding one is 400 naming the field, never the value; nothing stored",
    () =>
      Effect.gen(function* () {
        const { app } = yield* newApp()
        const base = { name: "Fine", redirectUris: [cb] }
        const names = (field: string) =>
          `${field}: ${field} must not contain bidirectional or invisible formatting characters`
        for (const c of refused) {
          const h = `Pay${c}Pal`
          const field = <A, E, R>(e: Effect.Effect<A, E, R>) =>
            Effect.map(Effect.either(e), (r) => fieldOf(r, h))
          assert.strictEqual(yield* field(Admin.createApplication({ ...base, name: h })), names("name"))
          assert.strictEqual(
            yield* field(Admin.createApplication({ ...base, name: ` ${h} ` })),
            names("name")
          )
          assert.strictEqual(
            yield* field(Admin.createApplication({ ...base, name: `${c}Fine` })),
            names("name")
          )
          assert.strictEqual(yield* field(Admin.updateApplication(app.appKey, { name: h })), names("name"))
          assert.strictEqual(yield* field(Admin.createUser(h, "long enough")), names("username"))
          assert.strictEqual(
            Accounts.usernameProblem(h),
            "username must not contain bidirectional or invisible formatting characters"
          )
        }
        const apps = yield* Effect.flatMap(ApplicationStore, (s) => s.list())
        assert.deepStrictEqual(
          apps.map((a) => a.name),
          [app.name]
        )
        assert.lengthOf(yield* Effect.flatMap(UserStore, (s) => s.list()), 0)
        for (const name of fine)
          assert.strictEqual((yield* Admin.createApplication({ ...base, name })).app.name, name)
        assert.strictEqual((yield* Admin.createUser("Zoë 🚀", "long enough")).username, "Zoë 🚀")
      }).pipe(Effect.provide(Audited()))
  )

  it.effect(
    "pages: an application name and a username stored before the rule are shown without those characters on the sign-in, consent and consents pages",
    () =>
      Effect.gen(function* () {
        const { app, user, password, query } = yield* setup()
        const apps = yield* ApplicationStore
        const users = yield* UserStore
        // As an older version kept them: written to the stores, past the rule
        const hostile = "\u202eppa lioheR\u202c Good\u200b"
        yield* apps.update(app.appKey, { name: hostile }, 0)
        const bob = { ...user, userId: "bob-id", username: "bob\u202egnp.exe" }
        yield* users.insert(bob)
        const b = new Browser()
        assert.strictEqual(view(yield* b.get(query), "SignIn").appName, "ppa lioheR Good")
        yield* signIn(b, query, bob.username, password)
        const page = yield* b.get(query)
        assert.strictEqual(view(page, "Consent").appName, "ppa lioheR Good")
        assert.strictEqual(view(page, "Consent").username, "bobgnp.exe")
        view(yield* b.post("authorize", { ...ticketOf(page), decision: "allow" }), "Redirect")
        assert.deepStrictEqual(
          view(yield* b.consents(), "Consents").consents.map((c) => c.appName),
          ["ppa lioheR Good"]
        )
      }).pipe(Effect.provide(TestLayer()))
  )
})

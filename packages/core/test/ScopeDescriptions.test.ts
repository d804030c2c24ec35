/**
 * The consent page and the consents page carry what the scope catalogue says their scopes allow,
 * by language, for the scopes it holds (the binding falls back to its own texts for the rest);
 * with an empty catalogue they carry none, as before the catalogue.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Admin from "../src/admin/Admin.js"
import { Browser, setup, signIn, ticketOf, view } from "./browser.js"
import { TestLayer } from "./fixtures.js"

const read = { en: "Read your notes", "zh-CN": "读取你的笔记" }

/** The setup's application (scopes read and write), then `catalogue`, then sign in: the consent page. */
const consentPage = <E, R>(catalogue: Effect.Effect<unknown, E, R>) =>
  Effect.gen(function* () {
    const { user, password, query } = yield* setup()
    yield* catalogue
    const b = new Browser()
    yield* signIn(b, query, user.username, password)
    const page = yield* b.get(query)
    return { b, page, consent: view(page, "Consent") }
  })

describe("scope descriptions from the scope catalogue", () => {
  it.effect("an empty catalogue: the consent and consents pages carry no description", () =>
    Effect.gen(function* () {
      const { b, page, consent } = yield* consentPage(Effect.void)
      assert.deepStrictEqual([[...consent.scope], consent.scopeDescriptions], [["read", "write"], {}])
      yield* b.post("authorize", { ...ticketOf(page), decision: "allow" })
      const list = view(yield* b.consents(), "Consents")
      assert.strictEqual(list.consents.length, 1)
      assert.deepStrictEqual(list.scopeDescriptions, {})
    }).pipe(Effect.provide(TestLayer()))
  )

  it.effect(
    "the consent page and the consents page carry the catalogue's texts of the scopes it holds, and only those",
    () =>
      Effect.gen(function* () {
        const { b, page, consent } = yield* consentPage(
          Effect.andThen(
            Admin.createScope({ name: "read", descriptions: read }),
            Admin.createScope({ name: "unrelated", descriptions: { en: "Not asked for" } })
          )
        )
        assert.deepStrictEqual(consent.scopeDescriptions, { read })
        yield* b.post("authorize", { ...ticketOf(page), decision: "allow" })
        yield* Admin.updateScope("read", { descriptions: { en: "Read your notebooks" } })
        const list = view(yield* b.consents(), "Consents")
        assert.deepStrictEqual(list.scopeDescriptions, { read: { en: "Read your notebooks" } })
      }).pipe(Effect.provide(TestLayer()))
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Option } from "effect"
import * as Locale from "../src/interaction/Locale.js"

const supported = ["en", "zh-CN"]
const tag = Arbitrary.make(Locale.LanguageTag)

describe("Locale.match", () => {
  it("serves Simplified Chinese tags with zh-CN, Traditional ones not at all", () => {
    for (const t of ["zh", "zh-Hans", "zh-CN", "zh-SG", "ZH-cn", "zh-Hans-CN", "zh-Hans-SG", "zh-MY"]) {
      assert.deepStrictEqual(Locale.match(supported, t), Option.some("zh-CN"), t)
    }
    for (const t of ["zh-TW", "zh-HK", "zh-MO", "zh-Hant", "zh-Hant-CN"]) {
      assert.isTrue(Option.isNone(Locale.match(supported, t)), t)
    }
  })

  it("serves a regional variant with the language, and prefers the same region when it is supported", () => {
    assert.deepStrictEqual(Locale.match(supported, "en-GB"), Option.some("en"))
    assert.deepStrictEqual(Locale.match(supported, "EN"), Option.some("en"))
    assert.deepStrictEqual(Locale.match(["pt-PT", "pt-BR"], "pt-BR"), Option.some("pt-BR"))
    assert.deepStrictEqual(Locale.match(["pt-PT", "pt", "pt-BR"], "pt-AO"), Option.some("pt"))
    assert.deepStrictEqual(Locale.match(["pt-PT"], "pt"), Option.some("pt-PT"))
    assert.deepStrictEqual(Locale.match(["zh", "zh-Hans"], "zh-hans"), Option.some("zh-Hans"))
    assert.isTrue(Option.isNone(Locale.match(supported, "fr")))
    assert.isTrue(Option.isNone(Locale.match(supported, "e")))
    assert.isTrue(Option.isNone(Locale.match(supported, "en_US")))
    assert.isTrue(Option.isNone(Locale.match(supported, "*")))
  })

  it("only ever answers a supported tag, and a supported tag always serves itself", () => {
    fc.assert(
      fc.property(tag, (t) => {
        const found = Locale.match(supported, t)
        assert.isTrue(Option.isNone(found) || supported.includes(found.value))
      })
    )
    fc.assert(
      fc.property(
        fc.uniqueArray(tag, { minLength: 1, maxLength: 6, selector: (t) => t.toLowerCase() }),
        (tags) => {
          for (const t of tags) assert.deepStrictEqual(Locale.match(tags, t), Option.some(t))
        }
      )
    )
  })
})

describe("Locale.parseAcceptLanguage", () => {
  it("orders by q (stably), drops q=0, the wildcard and malformed entries", () => {
    assert.deepStrictEqual(Locale.parseAcceptLanguage("fr;q=0.5, zh-CN, en;q=0.9, de;q=0.9"), [
      "zh-CN",
      "en",
      "de",
      "fr"
    ])
    assert.deepStrictEqual(Locale.parseAcceptLanguage("en;q=0, *;q=0.8, zh;q=1.5, <b>, fr;q=0.1"), ["fr"])
    assert.deepStrictEqual(Locale.parseAcceptLanguage("EN ; Q=0.3 , de"), ["de", "EN"])
    assert.deepStrictEqual(Locale.parseAcceptLanguage(undefined), [])
    assert.deepStrictEqual(Locale.parseAcceptLanguage(""), [])
  })

  it("gives back any list of tags with distinct q-values in order of q, and never more than maxPreferences", () => {
    const entries = fc.uniqueArray(fc.record({ tag, q: fc.integer({ min: 1, max: 1000 }) }), {
      maxLength: 40,
      selector: (e) => e.q
    })
    fc.assert(
      fc.property(entries, (list) => {
        const header = list.map((e) => `${e.tag};q=${(e.q / 1000).toFixed(3)}`).join(", ")
        const expected = [...list]
          .sort((a, b) => b.q - a.q)
          .map((e) => e.tag)
          .slice(0, Locale.maxPreferences)
        assert.deepStrictEqual(Locale.parseAcceptLanguage(header), expected)
      })
    )
  })
})

describe("Locale.choose", () => {
  it("ui_locales first (its first supported tag), then Accept-Language, then the fallback", () => {
    const choose = (uiLocales: ReadonlyArray<string>, acceptLanguage?: string) =>
      Locale.choose(supported, { uiLocales, acceptLanguage }, "en")
    assert.strictEqual(choose(["fr", "zh-Hans", "en"], "en"), "zh-CN")
    assert.strictEqual(choose(["fr"], "de, zh-SG;q=0.5, en;q=0.4"), "zh-CN")
    assert.strictEqual(choose([], "zh-TW, en-US;q=0.8"), "en")
    assert.strictEqual(choose([], "zh;q=0.8, en;q=0.9"), "en")
    assert.strictEqual(choose(["de"], "fr"), "en")
    assert.strictEqual(choose([]), "en")
  })

  it("whatever the request says, answers a supported tag; a supported first ui_locales tag always wins", () => {
    fc.assert(
      fc.property(
        fc.array(tag, { maxLength: 5 }),
        fc.string(),
        fc.constantFrom(...supported),
        (ui, header, first) => {
          assert.include(supported, Locale.choose(supported, { uiLocales: ui, acceptLanguage: header }, "en"))
          assert.strictEqual(
            Locale.choose(supported, { uiLocales: [first, ...ui], acceptLanguage: header }, "en"),
            first
          )
        }
      )
    )
  })

  it("parseUiLocales splits on spaces and keeps well-formed tags only", () => {
    assert.deepStrictEqual(Locale.parseUiLocales("zh-CN  en"), ["zh-CN", "en"])
    assert.deepStrictEqual(Locale.parseUiLocales("<script> en-"), [])
    assert.deepStrictEqual(Locale.parseUiLocales(null), [])
    assert.strictEqual(Locale.parseUiLocales(Array(40).fill("en").join(" ")).length, Locale.maxPreferences)
  })
})

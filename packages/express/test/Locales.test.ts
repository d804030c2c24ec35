import { assert, describe, it } from "@effect/vitest"
import { type Catalogue, catalogue, catalogues, languages } from "../src/locales/index.js"

/** Every text of a catalogue by its path, functions called with marked arguments, rich texts flattened. */
const leaves = (c: Catalogue): Map<string, string> => {
  const out = new Map<string, string>()
  const text = (v: unknown): string =>
    Array.isArray(v)
      ? v.map((p) => (typeof p === "string" ? p : `*${(p as { strong: string }).strong}*`)).join("")
      : String(v)
  const walk = (v: unknown, path: string) => {
    if (typeof v === "function") {
      const args =
        path === "date" || path === "dateTime"
          ? [86400 * 365]
          : path.endsWith(".explain")
            ? [{ reason: path.split(".")[2], seconds: 7, limit: 4096 }, "⟦product⟧"]
            : ["⟦one⟧", "⟦two⟧"]
      out.set(path, text((v as (...a: Array<unknown>) => unknown)(...args)))
    } else if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const [k, child] of Object.entries(v)) walk(child, path === "" ? k : `${path}.${k}`)
    } else {
      out.set(path, text(v))
    }
  }
  walk(c, "")
  return out
}

const marks = (s: string) => [...s.matchAll(/⟦\w+⟧|\b7\b|4096/g)].map((m) => m[0]).sort()

describe("message catalogues", () => {
  const english = leaves(catalogue("en"))

  it("English comes first, each catalogue is listed under its own language tag, and an unknown tag gets English", () => {
    assert.strictEqual(languages[0], "en")
    assert.deepStrictEqual(languages, ["en", "zh-CN"])
    for (const [tag, c] of Object.entries(catalogues)) assert.strictEqual(c.lang, tag)
    assert.strictEqual(catalogue("fr"), catalogue("en"))
    assert.strictEqual(catalogue("__proto__"), catalogue("en"))
  })

  for (const tag of languages) {
    it(`${tag}: no text carries markup, and every text uses the parameters English uses`, () => {
      const texts = leaves(catalogue(tag))
      assert.deepStrictEqual([...texts.keys()], [...english.keys()])
      for (const [path, value] of texts) {
        assert.notMatch(value, /[<>&]/, `${tag} ${path}`)
        assert.isNotEmpty(value.trim(), `${tag} ${path}`)
        if (path !== "date" && path !== "dateTime" && path !== "lang") {
          assert.deepStrictEqual(marks(value), marks(english.get(path) as string), `${tag} ${path}`)
        }
      }
    })
  }

  it("zh-CN translates every text (none is left in English)", () => {
    const chinese = leaves(catalogue("zh-CN"))
    for (const [path, value] of chinese) {
      if (path === "lang") continue
      assert.notStrictEqual(value, english.get(path), path)
      assert.match(value, /[\u4e00-\u9fff]/, path)
    }
  })

  it("English says how long to wait in seconds, then minutes", () => {
    const wait = (seconds: number) =>
      catalogue("en").error.problems.rate_limited.explain({ reason: "rate_limited", seconds }, "Latchkey")
    assert.include(wait(1), "Wait 1 second and")
    assert.include(wait(30), "Wait 30 seconds and")
    assert.include(wait(900), "Wait 15 minutes and")
    assert.include(
      catalogue("zh-CN").error.problems.rate_limited.explain({ reason: "rate_limited", seconds: 30 }, "x"),
      "30 秒"
    )
  })
})

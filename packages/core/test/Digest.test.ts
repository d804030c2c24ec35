import { assert, describe, it } from "@effect/vitest"
import { timingSafeEqual } from "../src/services/Digest.js"

describe("timingSafeEqual", () => {
  it("is true exactly for equal strings, whatever their characters and lengths", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["", "", true],
      ["abc", "abc", true],
      ["abc", "abd", false],
      ["abc", "ab", false],
      ["ab", "abc", false],
      ["", "a", false],
      ["é", "é", true],
      ["é", "e", false],
      // A surrogate pair against its first half, and against another pair sharing that half
      ["😀", "\ud83d", false],
      ["😀", "😁", false],
      ["\u0000", "", false],
      ["x".repeat(43), "x".repeat(43), true]
    ]
    for (const [a, b, equal] of cases) assert.strictEqual(timingSafeEqual(a, b), equal, `${a} vs ${b}`)
  })
})

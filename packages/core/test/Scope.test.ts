import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck as fc } from "effect"
import * as Scope from "../src/model/Scope.js"

const token = Arbitrary.make(Scope.ScopeToken)
const scopeSet = fc.array(token, { maxLength: 20 }).map(Scope.make)

describe("Scope", () => {
  it("parse(format(s, d)) equals s for both delimiters, and each joins with its own character", () => {
    fc.assert(
      fc.property(scopeSet, fc.constantFrom("comma" as const, "space" as const), (s, d) => {
        const written = Scope.format(s, d)
        assert.deepStrictEqual(Either.getOrThrow(Scope.parse(written)), s)
        assert.strictEqual(written.split(d === "comma" ? "," : " ").length, Math.max(s.length, 1))
        assert.notInclude(written, d === "comma" ? " " : ",")
      })
    )
  })

  it("parse(format(s)) equals s for every scope set", () => {
    fc.assert(
      fc.property(scopeSet, (s) => {
        assert.deepStrictEqual(Either.getOrThrow(Scope.parse(Scope.format(s))), s)
      })
    )
  })

  it("space-separated input (RFC 6749) parses to the same set as comma-separated input", () => {
    fc.assert(
      fc.property(scopeSet, (s) => {
        assert.deepStrictEqual(
          Either.getOrThrow(Scope.parse(s.join(" "))),
          Either.getOrThrow(Scope.parse(s.join(",")))
        )
      })
    )
  })

  it("a scope set is sorted and duplicate-free whatever the input order", () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 30 }), (items) => {
        const s = Either.getOrThrow(Scope.parse(items.join(",")))
        assert.deepStrictEqual([...s], [...new Set(items)].sort())
      })
    )
  })

  it("ignores empty items and collapses duplicates", () => {
    assert.deepStrictEqual([...Either.getOrThrow(Scope.parse(",read,,write, read,"))], ["read", "write"])
    assert.strictEqual(Scope.format(Either.getOrThrow(Scope.parse("write read"))), "read,write")
  })

  it("is case-sensitive", () => {
    assert.deepStrictEqual([...Either.getOrThrow(Scope.parse("READ,read"))], ["READ", "read"])
  })

  it("refuses non-ASCII, quotes, backslashes and control characters (RFC 6749 A.4 NQCHAR)", () => {
    for (const bad of ["rеad", "read\u200b", "ｒｅａｄ", 'a"b', "a\\b", "a\tb", "a\u0000"]) {
      assert.isTrue(Either.isLeft(Scope.parse(bad)), bad)
    }
  })

  it("refuses more than 64 items and more than 2048 characters", () => {
    assert.isTrue(Either.isLeft(Scope.parse(Array.from({ length: 65 }, (_, i) => `s${i}`).join(","))))
    assert.isTrue(Either.isLeft(Scope.parse("a,".repeat(50_000))))
    assert.isTrue(Either.isRight(Scope.parse(Array.from({ length: 64 }, (_, i) => `s${i}`).join(","))))
  })

  it("isSubset holds exactly when every item is in the wider set", () => {
    fc.assert(
      fc.property(scopeSet, scopeSet, (a, b) => {
        assert.strictEqual(
          Scope.isSubset(a, b),
          a.every((x) => b.includes(x))
        )
        assert.isTrue(Scope.isSubset(a, Scope.union(a, b)))
      })
    )
  })
})

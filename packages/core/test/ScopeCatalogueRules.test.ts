/**
 * The scope catalogue's pure rules, on inputs generated from their Schemas: the descriptions a
 * page is given are exactly those of the scopes shown that the catalogue holds; `scopes_supported`
 * keeps the OpenID scopes first and names every catalogued scope once; an entry's changes touch
 * only the fields given.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc } from "effect"
import * as Scope from "../src/model/Scope.js"
import * as ScopeCatalogue from "../src/model/ScopeCatalogue.js"
import * as Claims from "../src/openid/Claims.js"
import * as Discovery from "../src/openid/Discovery.js"

const token = Arbitrary.make(Scope.ScopeToken)
const entry = Arbitrary.make(ScopeCatalogue.Entry)
const urls = { userinfo: "u", jwks: "j", endSession: "e" }

describe("scope catalogue rules", () => {
  it("descriptionsOf: exactly the shown scopes the catalogue holds, each with its own descriptions", () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), fc.array(token, { maxLength: 8 }), (entries, shown) => {
        const unique = [...new Map(entries.map((e) => [e.name, e])).values()]
        const names = [...shown, ...unique.slice(0, 2).map((e) => e.name)]
        const described = ScopeCatalogue.descriptionsOf(unique, names)
        for (const [name, d] of Object.entries(described)) {
          assert.include(names, name)
          assert.deepStrictEqual(d, unique.find((e) => e.name === name)?.descriptions)
        }
        for (const e of unique) assert.strictEqual(Object.hasOwn(described, e.name), names.includes(e.name))
      })
    )
  })

  it("scopes_supported: the OpenID scopes first, as before, then every catalogued name once", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(token, fc.constantFrom("openid", "profile", "email"))),
        (catalogued) => {
          const supported = Discovery.fields(urls, catalogued).scopes_supported as ReadonlyArray<string>
          assert.deepStrictEqual(supported.slice(0, Claims.scopesSupported.length), [
            ...Claims.scopesSupported
          ])
          assert.strictEqual(new Set(supported).size, supported.length)
          for (const name of catalogued) assert.include(supported, name)
        }
      )
    )
    assert.deepStrictEqual(Discovery.fields(urls, []), Discovery.fields(urls))
  })

  it("apply: only the fields changed, and the time", () => {
    fc.assert(
      fc.property(entry, fc.boolean(), fc.integer({ min: 0, max: 2 ** 40 }), (e, flag, now) => {
        const changed = ScopeCatalogue.apply(e, { needsReview: flag }, now)
        assert.deepStrictEqual(changed, { ...e, needsReview: flag, updatedAt: now })
      })
    )
  })
})

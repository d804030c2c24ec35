/**
 * The scope catalogue (`ScopeStore`): added once per name, found, listed by name in code-unit
 * order, changed field by field, removed; a second
 * entry of a name is refused and changes nothing.
 */
import { assert, type Vitest } from "@effect/vitest"
import { type ScopeCatalogue, ScopeStore, type Stores } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"

const T = F.baseTime

/** A catalogue entry with a fresh name (the catalogue is shared by every case of the store). */
const entry = (overrides: Partial<ScopeCatalogue.Entry> = {}): ScopeCatalogue.Entry =>
  ({
    name: F.id("scope"),
    descriptions: { en: "Read your orders", "zh-CN": "读取你的订单" },
    developerRequestable: true,
    needsReview: false,
    createdAt: T,
    updatedAt: T,
    ...overrides
  }) as ScopeCatalogue.Entry

/** Register the scope catalogue cases with the contract's `it`. */
export const scopeCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "scope catalogue: an entry is found and listed as stored, the list by name in code-unit order",
    () =>
      Effect.gen(function* () {
        const scopes = yield* ScopeStore.ScopeStore
        const base = F.id("scope")
        // "Z" (0x5A) sorts before "a" (0x61) by code unit, after it in most collations
        const lower = entry({ name: `${base}:a` as ScopeCatalogue.Entry["name"] })
        const upper = entry({
          name: `${base}:Z` as ScopeCatalogue.Entry["name"],
          descriptions: { "zh-CN": "写", en: "Write" },
          developerRequestable: false,
          needsReview: true
        })
        yield* scopes.insert(lower)
        yield* scopes.insert(upper)
        assert.deepStrictEqual(yield* scopes.find(upper.name), Option.some(upper))
        assert.isTrue(Option.isNone(yield* scopes.find(`${base}:b`)))
        const listed = (yield* scopes.list()).filter((e) => e.name.startsWith(base))
        assert.deepStrictEqual(listed, [upper, lower])
      })
  )

  it.effect("scope catalogue: a second entry of a name is refused (ScopeTaken) and changes nothing", () =>
    Effect.gen(function* () {
      const scopes = yield* ScopeStore.ScopeStore
      const first = entry()
      yield* scopes.insert(first)
      const again = yield* Effect.flip(
        scopes.insert(entry({ name: first.name, descriptions: { en: "Other" } }))
      )
      assert.strictEqual(again._tag, "ScopeTaken")
      assert.deepStrictEqual(yield* scopes.find(first.name), Option.some(first))
    })
  )

  it.effect(
    "scope catalogue: an update changes only the fields given, and its time; none for an unknown name",
    () =>
      Effect.gen(function* () {
        const scopes = yield* ScopeStore.ScopeStore
        const first = entry()
        yield* scopes.insert(first)
        const flags = yield* scopes.update(first.name, { needsReview: true }, T + 5)
        assert.deepStrictEqual(flags, Option.some({ ...first, needsReview: true, updatedAt: T + 5 }))
        const texts = yield* scopes.update(first.name, { descriptions: { en: "Only English" } }, T + 9)
        const expected = {
          ...first,
          needsReview: true,
          descriptions: { en: "Only English" },
          updatedAt: T + 9
        }
        assert.deepStrictEqual(texts, Option.some(expected))
        assert.deepStrictEqual(yield* scopes.find(first.name), Option.some(expected))
        assert.isTrue(Option.isNone(yield* scopes.update(F.id("scope"), { needsReview: true }, T)))
      })
  )

  it.effect("scope catalogue: a removed entry is gone; removing it again changes nothing", () =>
    Effect.gen(function* () {
      const scopes = yield* ScopeStore.ScopeStore
      const kept = entry()
      const gone = entry()
      yield* scopes.insert(kept)
      yield* scopes.insert(gone)
      assert.isTrue(yield* scopes.remove(gone.name))
      assert.isFalse(yield* scopes.remove(gone.name))
      assert.isTrue(Option.isNone(yield* scopes.find(gone.name)))
      assert.deepStrictEqual(yield* scopes.find(kept.name), Option.some(kept))
      assert.isFalse((yield* scopes.list()).some((e) => e.name === gone.name))
    })
  )
}

/**
 * The open_id and setting part of the storage contract: `getOrCreate` records the first
 * value offered and answers it ever after, also to concurrent callers.
 */
import { assert, type Vitest } from "@effect/vitest"
import { OpenIdStore, SettingStore, type Stores } from "@latchkey/core"
import { Array as Arr, Effect, Option } from "effect"
import * as F from "../Fixtures.js"

/** Register the open_id and setting cases with the contract's `it`. */
export const getOrCreateCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("open_id: findUser answers the user an open_id was recorded for, in that application only", () =>
    Effect.gen(function* () {
      const openIds = yield* OpenIdStore.OpenIdStore
      const appKey = F.id("app")
      const userId = F.id("user")
      const openId = yield* openIds.getOrCreate(appKey, userId, F.id("oid"))
      assert.deepStrictEqual(yield* openIds.findUser(appKey, openId), Option.some(userId))
      assert.isTrue(Option.isNone(yield* openIds.findUser(F.id("app"), openId)))
      assert.isTrue(Option.isNone(yield* openIds.findUser(appKey, F.id("oid"))))
    })
  )

  it.effect("open_id: getOrCreate records the first candidate and keeps it", () =>
    Effect.gen(function* () {
      const openIds = yield* OpenIdStore.OpenIdStore
      const appKey = F.id("app")
      const userId = F.id("user")
      assert.strictEqual(yield* openIds.getOrCreate(appKey, userId, "first"), "first")
      assert.strictEqual(yield* openIds.getOrCreate(appKey, userId, "second"), "first")
      assert.strictEqual(yield* openIds.getOrCreate(F.id("app"), userId, "other"), "other")
      assert.strictEqual(yield* openIds.getOrCreate(appKey, F.id("user"), "third"), "third")
      const racing = F.id("user")
      const seen = yield* Effect.all(
        Arr.makeBy(10, (i) => openIds.getOrCreate(appKey, racing, `candidate-${i}`)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(seen).size, 1)
    })
  )

  it.effect("settings: getOrCreate stores the first value and keeps it", () =>
    Effect.gen(function* () {
      const settings = yield* SettingStore.SettingStore
      const name = F.id("setting")
      assert.strictEqual(yield* settings.getOrCreate(name, "one"), "one")
      assert.strictEqual(yield* settings.getOrCreate(name, "two"), "one")
      const racing = F.id("setting")
      const seen = yield* Effect.all(
        Arr.makeBy(10, (i) => settings.getOrCreate(racing, `value-${i}`)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(seen).size, 1)
      assert.strictEqual(yield* settings.getOrCreate(racing, "late"), seen[0])
    })
  )
}

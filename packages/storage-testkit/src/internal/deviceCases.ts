/**
 * The trusted-device generation of a user (`UserStore.deviceGeneration`, `forgetDevices`): 0 until
 * the first "forget other devices", one more at each, per user, and gone with the user.
 */
import { assert, type Vitest } from "@effect/vitest"
import { type Stores, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { insertUser } from "./users.js"

/** Register the trusted-device generation cases with the contract's `it`. */
export const deviceCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("devices: a user's generation starts at 0 and forgetDevices moves only theirs on by one", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const userId = yield* insertUser
      const other = yield* insertUser
      assert.strictEqual(yield* users.deviceGeneration(userId), 0)
      assert.deepStrictEqual(yield* users.forgetDevices(userId), Option.some(1))
      assert.deepStrictEqual(yield* users.forgetDevices(userId), Option.some(2))
      assert.strictEqual(yield* users.deviceGeneration(userId), 2)
      assert.strictEqual(yield* users.deviceGeneration(other), 0)
    })
  )

  it.effect("devices: no such user has generation 0, and forgetDevices changes nothing for one", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const nobody = F.id("user")
      assert.isTrue(Option.isNone(yield* users.forgetDevices(nobody)))
      assert.strictEqual(yield* users.deviceGeneration(nobody), 0)
    })
  )

  it.effect("devices: a new password keeps the generation; a removed user's goes with them", () =>
    Effect.gen(function* () {
      const users = yield* UserStore.UserStore
      const userId = yield* insertUser
      yield* users.forgetDevices(userId)
      assert.isTrue(yield* users.setPasswordHash(userId, F.hash()))
      assert.strictEqual(yield* users.deviceGeneration(userId), 1)
      assert.isTrue(yield* users.remove(userId, F.baseTime))
      assert.strictEqual(yield* users.deviceGeneration(userId), 0)
    })
  )
}

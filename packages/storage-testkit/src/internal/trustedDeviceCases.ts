/**
 * Trusted devices (`DeviceStore`): recorded, found while unexpired, listed per user with the
 * latest sign-in first, their sign-ins recorded, forgotten one by one or all but one, only ever
 * the user's own; gone with a new password and with the user; expired ones swept.
 */
import { assert, type Vitest } from "@effect/vitest"
import { DeviceStore, type Stores, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"
import { purgeEra } from "./support.js"
import { insertUser } from "./users.js"

const T = F.baseTime

/** A trusted device of `userId` made trusted at `at`, for 1000 seconds. */
const device = (userId: string, at: number = T, label: Partial<DeviceStore.TrustedDevice> = {}) => ({
  idHash: F.hash(),
  userId,
  browser: "Firefox",
  system: "Linux",
  trustedAt: at,
  lastSignInAt: at,
  expiresAt: at + 1000,
  ...label
})

const ids = (ds: ReadonlyArray<DeviceStore.TrustedDevice>) => ds.map((d) => d.idHash)

/** Register the trusted device cases with the contract's `it`. */
export const trustedDeviceCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "trusted devices: found by digest until they expire, listed per user, the latest sign-in first",
    () =>
      Effect.gen(function* () {
        const devices = yield* DeviceStore.DeviceStore
        const userId = yield* insertUser
        const other = yield* insertUser
        const older = device(userId, T)
        const newer = device(userId, T + 10, { browser: null, system: null })
        const expired = device(userId, T - 2000)
        const theirs = device(other, T)
        for (const d of [older, newer, expired, theirs]) yield* devices.insert(d)
        assert.deepStrictEqual(yield* devices.find(newer.idHash, T + 20), Option.some(newer))
        assert.isTrue(Option.isNone(yield* devices.find(older.idHash, older.expiresAt)))
        assert.isTrue(Option.isNone(yield* devices.find(F.hash(), T)))
        assert.deepStrictEqual(ids(yield* devices.listOf(userId, T + 20)), [newer.idHash, older.idHash])
        assert.deepStrictEqual(ids(yield* devices.listOf(other, T + 20)), [theirs.idHash])
      })
  )

  it.effect("trusted devices: a sign-in is recorded on the user's own device only", () =>
    Effect.gen(function* () {
      const devices = yield* DeviceStore.DeviceStore
      const userId = yield* insertUser
      const other = yield* insertUser
      const first = device(userId, T)
      const second = device(userId, T + 5)
      yield* devices.insert(first)
      yield* devices.insert(second)
      assert.isTrue(yield* devices.recordSignIn(userId, first.idHash, T + 50))
      assert.isFalse(yield* devices.recordSignIn(other, second.idHash, T + 60))
      assert.isFalse(yield* devices.recordSignIn(userId, F.hash(), T + 60))
      const listed = yield* devices.listOf(userId, T + 70)
      assert.deepStrictEqual(ids(listed), [first.idHash, second.idHash])
      assert.deepStrictEqual(listed[0], { ...first, lastSignInAt: T + 50 })
      assert.strictEqual(listed[1]?.lastSignInAt, T + 5)
    })
  )

  forgettingCases(it)
}

/** The cases of forgetting devices, and of what deletes them besides. */
const forgettingCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("trusted devices: forget deletes only the user's own; another user's id changes nothing", () =>
    Effect.gen(function* () {
      const devices = yield* DeviceStore.DeviceStore
      const userId = yield* insertUser
      const other = yield* insertUser
      const mine = device(userId)
      const theirs = device(other)
      yield* devices.insert(mine)
      yield* devices.insert(theirs)
      assert.isFalse(yield* devices.forget(userId, theirs.idHash))
      assert.isTrue(Option.isSome(yield* devices.find(theirs.idHash, T)))
      assert.isTrue(yield* devices.forget(userId, mine.idHash))
      assert.isFalse(yield* devices.forget(userId, mine.idHash))
      assert.isTrue(Option.isNone(yield* devices.find(mine.idHash, T)))
    })
  )

  it.effect("trusted devices: forgetOthers keeps the one named (or none) and the other users' devices", () =>
    Effect.gen(function* () {
      const devices = yield* DeviceStore.DeviceStore
      const userId = yield* insertUser
      const other = yield* insertUser
      const [a, b, c] = [device(userId), device(userId, T + 1), device(userId, T + 2)]
      const theirs = device(other)
      for (const d of [a, b, c, theirs]) yield* devices.insert(d)
      assert.strictEqual(yield* devices.forgetOthers(userId, b.idHash), 2)
      assert.deepStrictEqual(ids(yield* devices.listOf(userId, T)), [b.idHash])
      assert.strictEqual(yield* devices.forgetOthers(userId, null), 1)
      assert.deepStrictEqual(yield* devices.listOf(userId, T), [])
      assert.deepStrictEqual(ids(yield* devices.listOf(other, T)), [theirs.idHash])
    })
  )

  it.effect("trusted devices: a new password deletes the user's devices, and so does removing the user", () =>
    Effect.gen(function* () {
      const devices = yield* DeviceStore.DeviceStore
      const users = yield* UserStore.UserStore
      const userId = yield* insertUser
      const other = yield* insertUser
      const theirs = device(other)
      yield* devices.insert(device(userId))
      yield* devices.insert(theirs)
      assert.isTrue(yield* users.setPasswordHash(userId, F.hash(), { keepSessions: true }))
      assert.deepStrictEqual(yield* devices.listOf(userId, T), [])
      yield* devices.insert(device(userId))
      assert.isTrue(yield* users.remove(userId, T))
      assert.deepStrictEqual(yield* devices.listOf(userId, T), [])
      assert.deepStrictEqual(ids(yield* devices.listOf(other, T)), [theirs.idHash])
    })
  )

  it.effect(
    "trusted devices: purgeExpired deletes at most `limit` expired devices and never a live one",
    () =>
      Effect.gen(function* () {
        const devices = yield* DeviceStore.DeviceStore
        const userId = yield* insertUser
        const P = purgeEra
        const expired = [1, 2, 3].map((i) => device(userId, P - 1000 - i))
        const live = device(userId, P - 10)
        for (const d of [...expired, live]) yield* devices.insert(d)
        assert.strictEqual(yield* devices.purgeExpired(P, 2), 2)
        assert.strictEqual(yield* devices.purgeExpired(P, 0), 0)
        assert.isAtLeast(yield* devices.purgeExpired(P, 10), 1)
        for (const d of expired) assert.isTrue(Option.isNone(yield* devices.find(d.idHash, P - 2000)))
        assert.deepStrictEqual(ids(yield* devices.listOf(userId, P)), [live.idHash])
      })
  )
}

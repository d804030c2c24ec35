/**
 * The throttle part of the storage contract: counters that lock, slow down, are given
 * back and are swept, atomically under concurrent attempts. Time is always passed in as
 * `now`; no test reads or waits for the wall clock.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, type Stores, Throttle } from "@latchkey/core"
import { Array as Arr, Effect, Option } from "effect"
import * as F from "../Fixtures.js"

const T = F.baseTime
const policy = Throttle.defaultPolicy

/** Keys of each kind, fresh to the test named `name`. */
const keysOf = (name: string) => {
  const id = F.id(name)
  return {
    identifier: { key: `contract:${id}:identifier`, kind: "identifier" } as const,
    shared: { key: `contract:${id}:shared`, kind: "shared" } as const,
    slow: { key: `contract:${id}:slow`, kind: "slow" } as const
  }
}

const store = Throttle.ThrottleStore

/** Locking an identifier key, and slowing down a slow key. */
const lockAndSlowDown = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect("throttle: an identifier key locks past its free failures, doubling; success clears it", () =>
    Effect.gen(function* () {
      const s = yield* store
      const { identifier } = keysOf("lock")
      for (let i = 0; i < policy.freeFailures; i++) {
        const r = yield* s.reserve([identifier], T, policy)
        assert.deepStrictEqual(r, { wait: 0, started: false, delay: 0 }, `free attempt ${i}`)
      }
      const locking = yield* s.reserve([identifier], T, policy)
      assert.deepStrictEqual(locking, { wait: 0, started: true, delay: 0 })
      assert.strictEqual(yield* s.lockedFor([identifier], T + 10), policy.baseLockout - 10)
      const refused = yield* s.reserve([identifier], T + 10, policy)
      assert.strictEqual(refused.wait, policy.baseLockout - 10)
      // after the lockout, the next failure locks twice as long
      const t = T + policy.baseLockout
      assert.strictEqual(yield* s.lockedFor([identifier], t), 0)
      assert.isTrue(yield* s.fail([identifier], t, policy))
      assert.strictEqual(yield* s.lockedFor([identifier], t), policy.baseLockout * 2)
      yield* s.settle([identifier], policy)
      assert.strictEqual(yield* s.lockedFor([identifier], t), 0)
      assert.deepStrictEqual(yield* s.reserve([identifier], t, policy), { wait: 0, started: false, delay: 0 })
    })
  )

  it.effect(
    "throttle: a slow key never locks; past its free failures each attempt takes the next slot, 1 s doubling apart, and one whose slot is more than maxDelay away is refused, counting nothing",
    () =>
      Effect.gen(function* () {
        const s = yield* store
        const { slow } = keysOf("slow")
        const free = policy.slowFreeFailures
        for (let i = 0; i < free; i++)
          assert.deepStrictEqual(yield* s.reserve([slow], T, policy), { wait: 0, started: false, delay: 0 })
        // slots T, T+1, T+3; the next one, T+7, is more than maxDelay (5 s) away
        assert.deepStrictEqual(yield* s.reserve([slow], T, policy), { wait: 0, started: true, delay: 0 })
        assert.deepStrictEqual(yield* s.reserve([slow], T, policy), { wait: 0, started: false, delay: 1 })
        assert.deepStrictEqual(yield* s.reserve([slow], T, policy), { wait: 0, started: false, delay: 3 })
        for (let i = 0; i < 5; i++)
          assert.deepStrictEqual(yield* s.reserve([slow], T, policy), { wait: 2, started: false, delay: 0 })
        assert.strictEqual(yield* s.lockedFor([slow], T), 0)
        // the refused attempts took no slot: T+7 is still the next one, then 5 s apart
        assert.deepStrictEqual(yield* s.reserve([slow], T + 2, policy), { wait: 0, started: false, delay: 5 })
        assert.deepStrictEqual(yield* s.reserve([slow], T + 7, policy), { wait: 0, started: false, delay: 5 })
        // a success gives back one attempt only: still slowed, spaced by maxDelay
        yield* s.settle([slow], policy)
        const later = T + 60
        assert.deepStrictEqual(yield* s.reserve([slow], later, policy), { wait: 0, started: false, delay: 0 })
        assert.strictEqual((yield* s.reserve([slow], later, policy)).delay, policy.maxDelay)
      })
  )
}

/** Parallel reservations on a slow key, a shared key's give-back, and refused attempts. */
const slotsAndGiveBack = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "throttle: 80 parallel reservations on one slow key: the free ones and those whose slot is within maxDelay pass, each slot taken once",
    () =>
      Effect.gen(function* () {
        const s = yield* store
        const { slow } = keysOf("slow-parallel")
        const results = yield* Effect.forEach(
          Arr.range(1, 80),
          (i) => s.reserve([keysOf(`slow-parallel-${i}`).identifier, slow], T, policy),
          { concurrency: "unbounded" }
        )
        const passed = results.filter((r) => r.wait === 0).map((r) => r.delay)
        assert.deepStrictEqual(
          passed.sort((x, y) => x - y),
          [...Array.from({ length: policy.slowFreeFailures + 1 }, () => 0), 1, 3]
        )
        assert.isTrue(results.filter((r) => r.wait > 0).every((r) => r.wait === 2))
      })
  )

  it.effect(
    "throttle: a shared key gives back one attempt per success and unlocks at its free failures",
    () =>
      Effect.gen(function* () {
        const s = yield* store
        const { shared } = keysOf("shared")
        for (let i = 0; i <= policy.addressFreeFailures; i++) yield* s.reserve([shared], T, policy)
        assert.strictEqual(yield* s.lockedFor([shared], T), policy.baseLockout)
        yield* s.settle([shared], policy)
        assert.strictEqual(yield* s.lockedFor([shared], T), 0)
      })
  )

  it.effect("throttle: a refused attempt counts on none of its keys", () =>
    Effect.gen(function* () {
      const s = yield* store
      const { identifier, slow } = keysOf("refused")
      for (let i = 0; i <= policy.freeFailures; i++) yield* s.reserve([identifier], T, policy)
      for (let i = 0; i < 20; i++) assert.isAbove((yield* s.reserve([identifier, slow], T, policy)).wait, 0)
      // the slow key saw none of the refused attempts
      for (let i = 0; i < policy.slowFreeFailures; i++)
        assert.strictEqual((yield* s.reserve([slow], T, policy)).delay, 0)
    })
  )
}

/** Parallel reservations counted, the window, and the sweep. */
const countingAndSweep = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "throttle: parallel reservations are all counted: exactly the free failures and one more pass",
    () =>
      Effect.gen(function* () {
        const s = yield* store
        const { identifier, shared, slow } = keysOf("parallel")
        const results = yield* Effect.forEach(
          Arr.range(1, 40),
          () => s.reserve([identifier, shared, slow], T, policy),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r.wait === 0).length, policy.freeFailures + 1)
        assert.strictEqual(results.filter((r) => r.started).length, 1)
      })
  )

  it.effect("throttle: a failure after the window starts over", () =>
    Effect.gen(function* () {
      const s = yield* store
      const { identifier } = keysOf("window")
      for (let i = 0; i < policy.freeFailures; i++) yield* s.reserve([identifier], T, policy)
      const r = yield* s.reserve([identifier], T + policy.window, policy)
      assert.deepStrictEqual(r, { wait: 0, started: false, delay: 0 })
    })
  )

  it.effect("throttle: purgeExpired deletes entries without a failure within the window, and no others", () =>
    Effect.gen(function* () {
      const s = yield* store
      const x = T + 10 * policy.window
      const old = keysOf("old").identifier
      const recent = keysOf("recent").identifier
      for (let i = 0; i < policy.freeFailures; i++) yield* s.reserve([old], x, policy)
      for (let i = 0; i < policy.freeFailures; i++) yield* s.reserve([recent], x + 10, policy)
      assert.isAtLeast(yield* s.purgeExpired(x + 10, 10, 1000), 1)
      // the old entry is gone: its count starts over; the recent one is kept: this failure locks it
      assert.isFalse((yield* s.reserve([old], x + 10, policy)).started)
      assert.isTrue((yield* s.reserve([recent], x + 10, policy)).started)
    })
  )

  it.effect("throttle: purgeExpired keeps a locked entry and stops at its limit", () =>
    Effect.gen(function* () {
      const s = yield* store
      const { identifier } = keysOf("locked-long")
      const far = T + 100 * policy.window
      for (let i = 0; i <= policy.freeFailures; i++) yield* s.reserve([identifier], far, policy)
      for (let i = 0; i < 5; i++) yield* s.reserve([keysOf(`many-${i}`).identifier], far, policy)
      assert.strictEqual(yield* s.purgeExpired(far + policy.window, policy.window, 2), 2)
      // the locked entry is still locked while its lockout lasts, even past the window
      const lockedTill = far + policy.baseLockout
      assert.strictEqual(yield* s.lockedFor([identifier], lockedTill - 1), 1)
      yield* s.purgeExpired(lockedTill - 1, 0, 1000)
      assert.strictEqual(yield* s.lockedFor([identifier], lockedTill - 1), 1)
    })
  )
}

/** `ApplicationStore.findForClient`, where a store has it: the application with the entries the throttle store keeps. */
const readWithApplication = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "throttle: findForClient answers find's application with the entries lockedFor decides on, and no entries for counters it does not keep",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const s = yield* store
        if (apps.findForClient === undefined) return
        const app = F.application()
        yield* apps.insert(app)
        const { identifier, shared } = keysOf("client-read")
        const keys = [identifier, shared]
        for (let i = 0; i <= policy.freeFailures; i++) yield* s.reserve([identifier], T, policy)
        // Counters of another store are never read here
        const foreign = yield* apps.findForClient(app.appKey, keys, {})
        assert.deepStrictEqual(foreign, { app: yield* apps.find(app.appKey), entries: null })
        if (s.counters === undefined) return
        const read = yield* apps.findForClient(app.appKey, keys, s.counters)
        assert.deepStrictEqual(read.app, yield* apps.find(app.appKey))
        if (read.entries !== null) {
          assert.strictEqual(read.entries.length, 2)
          assert.strictEqual(read.entries[1], undefined)
          assert.strictEqual(Throttle.lockWait(keys, read.entries, T + 10), yield* s.lockedFor(keys, T + 10))
          assert.strictEqual(Throttle.lockWait(keys, read.entries, T + 10), policy.baseLockout - 10)
        }
        const unknown = yield* apps.findForClient(F.id("no-such-app"), keys, s.counters)
        assert.isTrue(Option.isNone(unknown.app))
      })
  )
}

/** Register the throttle cases with the contract's `it`. */
export const throttleCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  lockAndSlowDown(it)
  slotsAndGiveBack(it)
  countingAndSweep(it)
  readWithApplication(it)
}

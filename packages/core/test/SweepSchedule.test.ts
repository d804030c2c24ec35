import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope, TestClock } from "effect"
import * as Sweep from "../src/security/Sweep.js"
import * as Throttle from "../src/security/Throttle.js"
import { CodeStore } from "../src/storage/CodeStore.js"
import { StorageError } from "../src/storage/StorageError.js"
import { ThrottleStore } from "../src/storage/ThrottleStore.js"
import { issueCode, newApp, newUser, TestLayer } from "./fixtures.js"

/** What the stores were asked to purge: the time of each code purge, the window of each throttle purge. */
interface Calls {
  readonly codes: Array<number>
  readonly windows: Array<number>
}

/**
 * The in-memory services with the code and throttle stores recording each purge; the first
 * `failures` code purges fail with StorageError.
 */
const recording = (calls: Calls, policy = Throttle.defaultPolicy, failures = 0) => {
  let failed = 0
  const codes = Layer.effect(
    CodeStore,
    Effect.map(CodeStore, (store) => ({
      ...store,
      purgeExpired: (now: number, limit: number) => {
        calls.codes.push(now)
        return failed++ < failures
          ? Effect.fail(new StorageError({ message: "database unavailable" }))
          : store.purgeExpired(now, limit)
      }
    }))
  )
  const throttle = Layer.effect(
    ThrottleStore,
    Effect.map(ThrottleStore, (store) => ({
      ...store,
      purgeExpired: (now: number, window: number, limit: number) => {
        calls.windows.push(window)
        return store.purgeExpired(now, window, limit)
      }
    }))
  )
  return Layer.provideMerge(Layer.merge(codes, throttle), TestLayer({}, policy))
}

const minute = 60

describe("Sweep.scheduled", () => {
  it.scoped("sweeps one interval after the start and every interval after, deleting what expired", () => {
    const calls: Calls = { codes: [], windows: [] }
    return Effect.gen(function* () {
      const { app } = yield* newApp()
      const { user } = yield* newUser()
      yield* issueCode(app.appKey, user.userId) // expires 60 s from now
      yield* Effect.forkScoped(Sweep.scheduled({ interval: "5 minutes" }))
      yield* TestClock.adjust("4 minutes")
      assert.deepStrictEqual(calls.codes, [])
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(calls.codes, [5 * minute])
      yield* TestClock.adjust("10 minutes")
      assert.deepStrictEqual(calls.codes, [5 * minute, 10 * minute, 15 * minute])
      // the first sweep deleted the code: nothing expired is left for another purge
      assert.strictEqual(yield* Effect.flatMap(CodeStore, (s) => s.purgeExpired(16 * minute, 1000)), 0)
    }).pipe(Effect.provide(recording(calls)))
  })

  it.scoped("keeps its schedule after a failed sweep (the database unavailable)", () => {
    const calls: Calls = { codes: [], windows: [] }
    return Effect.gen(function* () {
      yield* Effect.forkScoped(Sweep.scheduled({ interval: "1 minute" }))
      yield* TestClock.adjust("3 minutes")
      assert.deepStrictEqual(calls.codes, [minute, 2 * minute, 3 * minute])
    }).pipe(Effect.provide(recording(calls, Throttle.defaultPolicy, 2)))
  })

  it.scoped(
    "forgets throttle counters by the window of the ThrottlePolicy in force, unless given one",
    () => {
      const calls: Calls = { codes: [], windows: [] }
      return Effect.gen(function* () {
        yield* Effect.forkScoped(Sweep.scheduled())
        yield* Effect.forkScoped(Sweep.scheduled({ interval: "10 minutes", throttleWindow: 99 }))
        yield* TestClock.adjust(Sweep.defaultInterval)
        assert.deepStrictEqual(calls.windows, [77])
        yield* TestClock.adjust(Sweep.defaultInterval)
        assert.sameMembers(calls.windows, [77, 77, 99])
      }).pipe(Effect.provide(recording(calls, { ...Throttle.defaultPolicy, window: 77 })))
    }
  )
})

describe("Sweep.layer", () => {
  it.effect("sweeps while the layer is alive and stops when its scope closes (runtime.dispose)", () => {
    const calls: Calls = { codes: [], windows: [] }
    return Effect.gen(function* () {
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(Sweep.layer({ interval: "1 minute" }), scope)
      yield* TestClock.adjust("2 minutes")
      assert.deepStrictEqual(calls.codes, [minute, 2 * minute])
      yield* Scope.close(scope, Exit.void)
      yield* TestClock.adjust("10 minutes")
      assert.deepStrictEqual(calls.codes, [minute, 2 * minute])
    }).pipe(Effect.provide(recording(calls)))
  })
})

/**
 * The steps the metrics and the availability watch add to every store call, counted (never timed)
 * by a supervisor that sees each step of the fiber: the timing is one step that starts the clock
 * and one match around the call, and the watch shares that match.
 */
import { assert, describe, it } from "@effect/vitest"
import { SettingStore, StorageHealth } from "@latchkey/core"
import { Context, Effect, Layer, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"
import * as Availability from "../src/Availability.js"
import * as Metrics from "../src/Metrics.js"
import * as Observed from "../src/Observed.js"
import { parse, value } from "./prometheus.js"

class Steps extends Supervisor.AbstractSupervisor<void> {
  count = 0
  get value() {
    return Effect.void
  }
  override onEffect(): void {
    this.count++
  }
}

/** How many steps `effect` takes. */
const steps = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const counted = new Steps()
    return effect.pipe(
      Effect.supervised(counted),
      Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
      Effect.map(() => counted.count)
    )
  })

/** A store of one service that answers at once, with a health ping (what the watch needs). */
const store = Layer.succeedContext(
  Context.make(SettingStore.SettingStore, {
    getOrCreate: (_name, candidate) => Effect.succeed(candidate)
  }).pipe(Context.add(StorageHealth.StorageHealth, { ping: Effect.void }))
)

const call = (context: Context.Context<SettingStore.SettingStore>) =>
  Effect.flatMap(SettingStore.SettingStore, (s) => s.getOrCreate("k", "v")).pipe(Effect.provide(context))

describe("Observed store calls", () => {
  it.scoped("timing a store call adds three steps, and watching its availability as well adds none", () =>
    Effect.gen(function* () {
      const metrics = Metrics.make({ defaults: false })
      const plain = yield* steps(call(yield* Layer.build(store)))
      const timed = yield* steps(call(yield* Layer.build(Observed.timedStorage(store, metrics))))
      const both = yield* steps(call(yield* Layer.build(Availability.watched(store, "db", metrics))))
      assert.strictEqual(timed - plain, 3)
      assert.strictEqual(both - plain, 3)
      // Both timed the call: once each
      const samples = parse(yield* Effect.promise(() => metrics.registry.metrics()))
      const operation = { operation: "SettingStore.getOrCreate" }
      assert.strictEqual(value(samples, "latchkey_storage_operation_duration_seconds_count", operation), 2)
    })
  )
})

/**
 * Counting the Effect operations a program runs, for the per-endpoint budgets: a `Supervisor` whose
 * `onEffect` the fiber's run loop calls once per operation while the OpSupervision runtime flag is
 * on. A count, never a clock: a change that adds steps to a hot path fails a budget on any machine.
 */
import { Effect, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"

class Counter extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onEffect(): void {
    this.count++
  }
}

const supervised = <A, E, R>(effect: Effect.Effect<A, E, R>, counter: Counter) =>
  effect.pipe(
    Effect.supervised(counter),
    Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
  )

// What the counting wrapper itself runs, subtracted from every count
const overhead = (() => {
  const counter = new Counter()
  Effect.runSync(supervised(Effect.void, counter))
  return counter.count - 1
})()

/** `effect`'s result and the number of Effect operations it ran (its forks' included). */
export const countOps = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly value: A; readonly ops: number }, E, R> =>
  Effect.suspend(() => {
    const counter = new Counter()
    return Effect.map(supervised(effect, counter), (value) => ({ value, ops: counter.count - overhead }))
  })

/**
 * Several store calls committed as one transaction: the writes of one page request, so that a
 * request commits once. Optional: an adapter provides it for its own stores; without it each
 * store call commits on its own, as the in-memory store's do.
 */
import { Context, Effect, FiberRef } from "effect"
import type { StorageError } from "./StorageError.js"

/** Runs a unit of store calls in one transaction of the adapter that provides the stores. */
export class Transaction extends Context.Tag("@latchkey/core/Transaction")<
  Transaction,
  {
    /**
     * Run `unit` in one transaction and succeed once it committed; a failure of `unit` (or of the
     * commit) rolls all of it back. `unit` is made of calls of this adapter's stores and
     * synchronous steps only (no hashing, no waiting): an adapter may run it synchronously
     * inside its transaction, and runs it again as a whole when the database asks (a
     * serialization failure).
     */
    readonly run: <A, E>(unit: Effect.Effect<A, E>) => Effect.Effect<A, E | StorageError>
  }
>() {}

// What runs once the unit this fiber runs has committed; null outside a unit
const committed = FiberRef.unsafeMake<Array<Effect.Effect<void>> | null>(null)

/**
 * Run `unit` (store calls and synchronous steps) as one transaction when the program has a
 * `Transaction`, else as it is; inside a unit, as part of it.
 */
export const atomically = <A, E, R>(unit: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
  Effect.flatMap(Effect.serviceOption(Transaction), (tx) =>
    tx._tag === "None"
      ? unit
      : Effect.flatMap(FiberRef.get(committed), (outer) => {
          if (outer !== null) return unit
          const after: Array<Effect.Effect<void>> = []
          return Effect.flatMap(Effect.context<R>(), (context) =>
            tx.value
              .run(
                Effect.suspend(() => {
                  // A unit run again (a serialization failure) starts over
                  after.length = 0
                  return Effect.locally(Effect.provide(unit, context), committed, after)
                })
              )
              .pipe(Effect.tap(() => Effect.forEach(after, (e) => e, { discard: true })))
          )
        })
  )

/** Run `effect` once the unit this fiber runs (`atomically`) has committed; outside a unit, now. */
export const whenCommitted = (effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(committed), (after) =>
    after === null
      ? effect
      : Effect.sync(() => {
          after.push(effect)
        })
  )

/**
 * `value`, once `f` ran after the commit of the unit this fiber runs (`atomically`); outside a
 * unit, `f` runs now. One step (`f`, a plain callback, must not throw).
 */
export const afterCommit = <A>(f: () => void, value: A): Effect.Effect<A> =>
  Effect.withFiberRuntime((fiber) => {
    const after = fiber.getFiberRef(committed)
    if (after === null) f()
    else after.push(Effect.sync(f))
    return Effect.succeed(value)
  })

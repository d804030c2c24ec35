/**
 * Several store calls committed as one transaction: the writes of one page request, so that a
 * request commits once. Optional: an adapter provides it for its own stores; without it each
 * store call commits on its own, as the in-memory store's do.
 */
import { Context, Effect } from "effect"
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

/**
 * Run `unit` (store calls and synchronous steps) as one transaction when the program has a
 * `Transaction`, else as it is.
 */
export const atomically = <A, E, R>(unit: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
  Effect.flatMap(Effect.serviceOption(Transaction), (tx) =>
    tx._tag === "None"
      ? unit
      : Effect.flatMap(Effect.context<R>(), (context) => tx.value.run(Effect.provide(unit, context)))
  )

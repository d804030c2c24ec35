/**
 * Whether the store answers, as the server meets it, logged once per change: one error line when
 * it becomes unavailable (with the reason in words, never a credential) and one info line when it
 * answers again, however many requests fail in between. Only the store's health ping decides: a
 * failed store call while available, or a successful one while unavailable, has one ping run (at
 * most one at a time), and `/readyz`'s own ping counts too.
 */
import { StorageError, StorageHealth } from "@latchkey/core"
import { Cause, Clock, Context, Effect, Exit, Layer, Option, type Scope } from "effect"
import type { Metrics } from "./Metrics.js"
import { aroundStores, observedCall } from "./Observed.js"

/** What the store's health ping ended with: nothing for an interruption (no answer either way). */
const outcome = (exit: Exit.Exit<unknown, unknown>): "answered" | StorageError.StorageError | undefined => {
  if (Exit.isSuccess(exit)) return "answered"
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) && failure.value instanceof StorageError.StorageError
    ? failure.value
    : undefined
}

/** The state of one store: available or since when not, and whether a ping is under way. */
interface Watch {
  available: boolean
  /** When it became unavailable (epoch ms, by the Clock). */
  since: number
  checking: boolean
}

/** Take the result of a health ping: log a change of availability, once. */
const settle = (w: Watch, store: string, exit: Exit.Exit<unknown, unknown>) =>
  Effect.gen(function* () {
    const result = outcome(exit)
    if (result === undefined) return
    if (result !== "answered" && w.available) {
      w.available = false
      w.since = yield* Clock.currentTimeMillis
      yield* Effect.logError("database unavailable").pipe(
        Effect.annotateLogs({ db: store, reason: result.message })
      )
    } else if (result === "answered" && !w.available) {
      w.available = true
      const now = yield* Clock.currentTimeMillis
      yield* Effect.logInfo("database available again").pipe(
        Effect.annotateLogs({ db: store, unavailableSeconds: Math.round((now - w.since) / 1000) })
      )
    }
  })

/**
 * `storage` with its availability watched: every store call and every health ping observed, the
 * changes logged as `db` (the store's description, without credentials). The pings it runs itself
 * are in the layer's scope: they end with it, and log nothing once it is closing. With `metrics`,
 * every store call is also timed into them (`Observed.timedStorage`'s timing), in the same match.
 */
export const watched = <ROut, E, RIn>(
  storage: Layer.Layer<ROut, E, RIn>,
  store: string,
  metrics?: Metrics
): Layer.Layer<ROut, E, RIn> =>
  Layer.provide(
    Layer.scopedContext(
      Effect.gen(function* () {
        const context = yield* Effect.context<ROut>()
        const health = Context.getOption(
          context as unknown as Context.Context<StorageHealth.StorageHealth>,
          StorageHealth.StorageHealth
        )
        if (Option.isNone(health)) return context
        const ping = health.value.ping
        const scope: Scope.Scope = yield* Effect.scope
        const w: Watch = { available: true, since: 0, checking: false }
        let closed = false
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            closed = true
          })
        )
        const check = Effect.suspend(() => {
          if (w.checking || closed) return Effect.void
          w.checking = true
          return ping.pipe(
            Effect.exit,
            Effect.flatMap((exit) => (closed ? Effect.void : settle(w, store, exit))),
            Effect.ensuring(
              Effect.sync(() => {
                w.checking = false
              })
            )
          )
        })
        // A call whose result disagrees with the state: the ping decides, off the request's path
        const observe = (failed: boolean) =>
          failed === w.available && !w.checking && !closed
            ? Effect.asVoid(Effect.forkIn(check, scope))
            : Effect.void
        const watchedContext = aroundStores(
          context,
          observedCall(metrics, {
            onFailure: (cause) => {
              const failure = Cause.failureOption(cause)
              const storageFailure =
                Option.isSome(failure) && failure.value instanceof StorageError.StorageError
              return Effect.zipRight(storageFailure ? observe(true) : Effect.void, Effect.failCause(cause))
            },
            // The common case, a store answering while it is known available, adds no step
            onSuccess: (value) => (w.available ? Exit.succeed(value) : Effect.as(observe(false), value))
          })
        )
        return Context.add(watchedContext, StorageHealth.StorageHealth, {
          ping: Effect.onExit(ping, (exit) => (closed ? Effect.void : settle(w, store, exit)))
        })
      })
    ),
    storage
  )

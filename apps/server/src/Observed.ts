/**
 * The store services and the audit log, observed from the outside for the metrics (`Metrics`),
 * so neither the core nor the storage adapters know about metrics: every store call timed, every
 * audit event kept counted, the sessions gauge read from the session store. This runs on every
 * store call and every audit event: a call's timing and what else observes its result share one
 * match around it, and an event is counted where its log line is written.
 */
import {
  ApplicationStore,
  type Audit,
  AuditStore,
  CodeStore,
  ConsentStore,
  LogoutStore,
  OpenIdStore,
  SessionStore,
  SettingStore,
  type StorageError,
  ThrottleStore,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { type Cause, Context, Effect, Exit, Layer } from "effect"
import type { Metrics, SessionStats } from "./Metrics.js"

/** What follows a store call, given its result: the answer it passes on (its own, by default). */
interface Continuation {
  readonly onFailure: (cause: Cause.Cause<unknown>) => Effect.Effect<unknown, unknown>
  readonly onSuccess: (value: unknown) => Effect.Effect<unknown, unknown>
}

const passOn: Continuation = { onFailure: Exit.failCause, onSuccess: Exit.succeed }

/**
 * Each call of the store method `name` followed by `next` and, with `metrics`, timed into them as
 * `name`, from its start to its end, failed or not: one step that starts the clock and one match
 * around the call (not onExit's uninterruptible region), the time taken in the match's
 * continuations themselves. The method's series is looked up once, not per call.
 */
export const observedCall =
  (metrics: Metrics | undefined, next: Continuation = passOn) =>
  (name: string): ((call: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown, unknown>) => {
    if (metrics === undefined) return (call) => Effect.matchCauseEffect(call, next)
    const observe = metrics.storage(name)
    return (call) =>
      Effect.suspend(() => {
        const start = performance.now()
        return Effect.matchCauseEffect(call, {
          onFailure: (cause) => {
            observe((performance.now() - start) / 1000)
            return next.onFailure(cause)
          },
          onSuccess: (value) => {
            observe((performance.now() - start) / 1000)
            return next.onSuccess(value)
          }
        })
      })
  }

// A store service: by the core's declarations of them, a record of functions returning Effects,
// and values that are not calls (ThrottleStore's `counters`), passed through
type Store = Readonly<Record<string, ((...args: Array<never>) => Effect.Effect<unknown, unknown>) | object>>

// Every store the core declares
const stores = [
  ApplicationStore.ApplicationStore,
  UserStore.UserStore,
  CodeStore.CodeStore,
  TokenStore.TokenStore,
  ConsentStore.ConsentStore,
  OpenIdStore.OpenIdStore,
  SettingStore.SettingStore,
  SessionStore.SessionStore,
  LogoutStore.LogoutStore,
  ThrottleStore.ThrottleStore,
  AuditStore.AuditStore
] as ReadonlyArray<Context.Tag<unknown, object>> as ReadonlyArray<Context.Tag<unknown, Store>>

/**
 * `context` with every call of every store the core declares passed through what `around` gave
 * for its method's name (`<Store>.<method>`, the store's name being its tag's), once per method;
 * the rest of the context is unchanged.
 */
export const aroundStores = <R>(
  context: Context.Context<R>,
  around: (name: string) => (call: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown, unknown>
): Context.Context<R> =>
  stores.reduce((out, tag) => {
    const service = Context.getOption(out, tag)
    if (service._tag === "None") return out
    const name = tag.key.slice(tag.key.lastIndexOf("/") + 1)
    const methods = Object.entries(service.value).map(([method, call]) => {
      if (typeof call !== "function") return [method, call]
      const observed = around(`${name}.${method}`)
      return [method, (...args: Array<never>) => observed(call(...args))]
    })
    return Context.add(out, tag, Object.fromEntries(methods))
  }, context)

/**
 * The stores of a storage layer with every call timed into `latchkey_storage_operation_duration_seconds`
 * as `<Store>.<method>` (the store's name is its tag's: `@latchkey/core/TokenStore`); the rest of its
 * output passes through. The timing wraps the call's effect, so a store that runs it in a transaction still can.
 * (`Availability.watched` times the calls it watches itself, in the same match.)
 */
export const timedStorage = <ROut, E, RIn>(
  storage: Layer.Layer<ROut, E, RIn>,
  metrics: Metrics
): Layer.Layer<ROut, E, RIn> =>
  Layer.provide(
    Layer.effectContext(
      Effect.map(Effect.context<ROut>(), (context) => aroundStores(context, observedCall(metrics)))
    ),
    storage
  )

/**
 * `line` (what writes an audit event's log line, as `Audit.layerWriting` takes it) that also counts
 * the event into `metrics`: the audit layer calls it for each event it keeps, once the write or the
 * unit the event is part of committed, so counting adds no step of its own.
 */
export const countingLines =
  (line: (event: Audit.AuditEvent) => void, metrics: Metrics) =>
  (event: Audit.AuditEvent): void => {
    line(event)
    metrics.auditEvent(event.type)
    if (event.type === "token_issued") metrics.tokenIssued(event.detail ?? "other", event.appKey ?? "")
  }

/** Read the sessions gauge through `run` (a runtime of the store). */
export const sessionStats =
  (
    run: <A>(effect: Effect.Effect<A, StorageError.StorageError, SessionStore.SessionStore>) => Promise<A>
  ): SessionStats =>
  () =>
    run(Effect.flatMap(SessionStore.SessionStore, (s) => s.stats()))

/**
 * The store services and the audit log, observed from the outside for the metrics (`Metrics`),
 * so neither the core nor the storage adapters know about metrics: every store call timed, every
 * audit event kept counted, the sessions gauge read from the session store.
 */
import {
  ApplicationStore,
  Audit,
  AuditStore,
  CodeStore,
  ConsentStore,
  OpenIdStore,
  SessionStore,
  SettingStore,
  type StorageError,
  ThrottleStore,
  TokenStore,
  Transaction,
  UserStore
} from "@latchkey/core"
import { Context, Effect, Layer } from "effect"
import type { Metrics, SessionStats } from "./Metrics.js"

/** `effect` with its duration, from its start to its end, failed or not, handed to `done`. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (seconds: number) => void) =>
  Effect.suspend(() => {
    const start = performance.now()
    const stop = () => done((performance.now() - start) / 1000)
    // One match around the call (not onExit's uninterruptible region), the time taken in its
    // continuations themselves: this runs on every store call
    return Effect.matchCauseEffect(effect, {
      onFailure: (cause) => {
        stop()
        return Effect.failCause(cause)
      },
      onSuccess: (value) => {
        stop()
        return Effect.succeed(value)
      }
    })
  })

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
  ThrottleStore.ThrottleStore,
  AuditStore.AuditStore
] as ReadonlyArray<Context.Tag<unknown, object>> as ReadonlyArray<Context.Tag<unknown, Store>>

/**
 * `context` with every call of every store the core declares passed through `around` (given the
 * call's effect and its name, `<Store>.<method>`, the store's name being its tag's); the rest of
 * the context is unchanged.
 */
export const aroundStores = <R>(
  context: Context.Context<R>,
  around: (call: Effect.Effect<unknown, unknown>, name: string) => Effect.Effect<unknown, unknown>
): Context.Context<R> =>
  stores.reduce((out, tag) => {
    const service = Context.getOption(out, tag)
    if (service._tag === "None") return out
    const name = tag.key.slice(tag.key.lastIndexOf("/") + 1)
    const methods = Object.entries(service.value).map(([method, call]) => [
      method,
      typeof call === "function"
        ? (...args: Array<never>) => around(call(...args), `${name}.${method}`)
        : call
    ])
    return Context.add(out, tag, Object.fromEntries(methods))
  }, context)

/**
 * The stores of a storage layer with every call timed into `latchkey_storage_operation_duration_seconds`
 * as `<Store>.<method>` (the store's name is its tag's: `@latchkey/core/TokenStore`); the rest of its
 * output passes through. The timing wraps the call's effect, so a store that runs it in a transaction still can.
 */
export const timedStorage = <ROut, E, RIn>(
  storage: Layer.Layer<ROut, E, RIn>,
  metrics: Metrics
): Layer.Layer<ROut, E, RIn> =>
  Layer.provide(
    Layer.effectContext(
      Effect.map(Effect.context<ROut>(), (context) =>
        aroundStores(context, (call, name) => timed(call, (s) => metrics.storage(name, s)))
      )
    ),
    storage
  )

/**
 * The AuditLog `log`, counting each event it keeps: `record` always, `recordWith` once its write
 * committed, each once the unit it is part of (`Transaction.whenCommitted`) committed.
 */
const countingAuditLog = (
  log: Context.Tag.Service<Audit.AuditLog>,
  metrics: Metrics
): Context.Tag.Service<Audit.AuditLog> => {
  const count = (events: ReadonlyArray<Audit.AuditEvent>): void => {
    for (const event of events) {
      metrics.auditEvent(event.type)
      if (event.type === "token_issued") metrics.tokenIssued(event.detail ?? "other", event.appKey ?? "")
    }
  }
  return {
    record: (event) =>
      Effect.zipRight(log.record(event), Transaction.whenCommitted(Effect.sync(() => count([event])))),
    recordWith: <A, E, R>(events: ReadonlyArray<Audit.AuditEvent>, write: Effect.Effect<A, E, R>) =>
      Effect.tap(log.recordWith(events, write), () =>
        Transaction.whenCommitted(Effect.sync(() => count(events)))
      )
  }
}

/** The audit layer with `countingAuditLog` over it. */
export const countingAudit = <E, R>(
  audit: Layer.Layer<Audit.AuditLog, E, R>,
  metrics: Metrics
): Layer.Layer<Audit.AuditLog, E, R> =>
  Layer.effect(
    Audit.AuditLog,
    Effect.map(Audit.AuditLog, (log) => countingAuditLog(log, metrics))
  ).pipe(Layer.provide(audit))

/** Read the sessions gauge through `run` (a runtime of the store). */
export const sessionStats =
  (
    run: <A>(effect: Effect.Effect<A, StorageError.StorageError, SessionStore.SessionStore>) => Promise<A>
  ): SessionStats =>
  () =>
    run(Effect.flatMap(SessionStore.SessionStore, (s) => s.stats()))

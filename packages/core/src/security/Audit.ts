/**
 * The audit trail: security events with time, App Key, user, source address and
 * request id, and never a secret. Recording is best effort and never fails the
 * request; a program without an `AuditLog` records nothing.
 */
import { Context, Effect, Layer } from "effect"
import { nowSeconds } from "../services/internal/time.js"
import { AuditStore } from "../storage/AuditStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { afterCommit, whenCommitted } from "../storage/Transaction.js"
import { type AuditEvent, bound, type EventType } from "./AuditEvent.js"

export { AuditEvent, bound, EventType, maxFieldLength } from "./AuditEvent.js"

/** Who is asking: set by the HTTP binding for each request. */
export class RequestInfo extends Context.Tag("@latchkey/core/RequestInfo")<
  RequestInfo,
  {
    readonly requestId: string | null
    readonly address: string | null
    /** Who acts, for administrative changes (`admin-api`, `cli`, `user`); absent for the protocol. */
    readonly actor?: string | null
  }
>() {}

/** Where audit events go. */
export class AuditLog extends Context.Tag("@latchkey/core/AuditLog")<
  AuditLog,
  {
    /** Record an event on its own. */
    readonly record: (event: AuditEvent) => Effect.Effect<void>
    /**
     * Run `write` (one write of a store) and record `events` in its transaction:
     * they are kept if and only if the write commits.
     */
    readonly recordWith: <A, E, R>(
      events: ReadonlyArray<AuditEvent>,
      write: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | StorageError, R>
  }
>() {}

/**
 * The fields a caller names; time and request come from the context. Each is cut to
 * `maxFieldLength` characters before it is stored.
 */
export interface Fields {
  readonly appKey?: string | null
  readonly userId?: string | null
  readonly openId?: string | null
  readonly detail?: string | null
}

/** Who an event is about, besides its fields: the request's address and id, and the actor. */
export interface Source {
  readonly address: string | null
  readonly requestId: string | null
  readonly actor: string | null
}

/** The event of `type` with `fields`, from `source`, at `at` (epoch seconds). */
export const eventAt = (type: EventType, fields: Fields, source: Source, at: number): AuditEvent => ({
  at,
  type,
  appKey: fields.appKey ?? null,
  userId: fields.userId ?? null,
  openId: fields.openId ?? null,
  address: source.address,
  requestId: source.requestId,
  detail: fields.detail ?? null,
  actor: source.actor
})

const anonymous: Source = { address: null, requestId: null, actor: null }

const event = (type: EventType, fields: Fields): Effect.Effect<AuditEvent> =>
  Effect.gen(function* () {
    const info = yield* Effect.serviceOption(RequestInfo)
    const source =
      info._tag === "Some"
        ? { address: info.value.address, requestId: info.value.requestId, actor: info.value.actor ?? null }
        : anonymous
    return eventAt(type, fields, source, yield* nowSeconds)
  })

/** Record an event if the program has an AuditLog. Never fails. */
export const record = (type: EventType, fields: Fields = {}): Effect.Effect<void> =>
  Effect.serviceOption(AuditLog).pipe(
    Effect.flatMap((log) =>
      log._tag === "None" ? Effect.void : Effect.flatMap(event(type, fields), log.value.record)
    ),
    Effect.catchAllCause(() => Effect.void)
  )

/**
 * Run `write`, one write of a store, and record the events in the same transaction
 * (if the program has an AuditLog): the change and its audit record commit together.
 */
export const recordWith = <A, E, R>(
  write: Effect.Effect<A, E, R>,
  events: ReadonlyArray<readonly [EventType, Fields]>
): Effect.Effect<A, E | StorageError, R> =>
  Effect.flatMap(Effect.serviceOption(AuditLog), (log) =>
    log._tag === "None"
      ? write
      : Effect.flatMap(
          Effect.forEach(events, ([type, fields]) => event(type, fields)),
          (built) => log.value.recordWith(built, write)
        )
  )

const logLine = (event: AuditEvent): Effect.Effect<void> =>
  Effect.logInfo("audit").pipe(Effect.annotateLogs({ audit: event }))

/** How kept events are written once their transaction committed: one step after a write. */
type Lines = <A>(events: ReadonlyArray<AuditEvent>, value: A) => Effect.Effect<A>

/**
 * An AuditLog that appends to the AuditStore and writes each kept event as one log line with
 * `lines`, once its transaction committed (`Transaction.whenCommitted`). Every event is cut here,
 * once, to `maxFieldLength` per free-text field (`bound`), whether `record` built it or a caller did.
 */
const make = (lines: Lines): Layer.Layer<AuditLog, never, AuditStore> =>
  Layer.effect(
    AuditLog,
    Effect.map(AuditStore, (store) => ({
      record: (raw) => {
        const event = bound(raw)
        return store.append(event).pipe(
          Effect.flatMap(() => lines([event], undefined)),
          Effect.catchAll((e) =>
            Effect.logWarning("audit event not stored").pipe(
              Effect.annotateLogs({ audit: event, reason: e.message })
            )
          )
        )
      },
      recordWith: (raw, write) => {
        const events = raw.map(bound)
        return Effect.flatMap(store.appendWith(events, write), (value) => lines(events, value))
      }
    }))
  )

/**
 * An AuditLog that appends to the AuditStore and writes each event as an Effect log line
 * (`Effect.logInfo("audit")`, annotated `audit`). Every event is cut here, once, to
 * `maxFieldLength` per free-text field (`bound`), whether `record` built it or a caller did.
 */
export const layer: Layer.Layer<AuditLog, never, AuditStore> = make((events, value) =>
  Effect.as(whenCommitted(Effect.forEach(events, logLine, { discard: true })), value)
)

/**
 * `layer`, with each kept event's line written by `write` (e.g. a logger's `info({ audit: event },
 * "audit")`) instead of through Effect's logger: the same line without Effect's logging steps,
 * for a server that writes its own log lines. `write` must not throw.
 */
export const layerWriting = (write: (event: AuditEvent) => void): Layer.Layer<AuditLog, never, AuditStore> =>
  make((events, value) =>
    afterCommit(() => {
      for (const event of events) write(event)
    }, value)
  )

/**
 * One protocol request as the endpoints run it: its services read once from the fiber (one Effect
 * step), the clock read as a plain call, and who is asking (address, request id) as a value, so an
 * endpoint is a few coarse Effect steps (the store calls, digests, randomness and the audited
 * write) with its rules as plain functions between them, not a chain of hundreds of fine steps
 * (docs/performance.md). Audit events of a request are built here with its address and request id;
 * no scope is opened per request.
 */
import { Clock, Context, Effect, FiberRef } from "effect"
import { Config, type Settings } from "../model/Config.js"
import * as Audit from "../security/Audit.js"
import { Digest, type DigestService } from "../services/Digest.js"
import type { StorageError } from "../storage/StorageError.js"

/** A request being answered: the services it reads and who sent it. */
export interface Call<R = never> {
  /** The fiber's services when the request started (read with `use`). */
  readonly context: Context.Context<R>
  readonly clock: Clock.Clock
  readonly config: Settings
  readonly digest: DigestService
  /** The AuditLog, when the program has one. */
  readonly audit: Context.Tag.Service<Audit.AuditLog> | null
  /** Whether the runtime's tracer is on (a span per request then). */
  readonly tracing: boolean
  /** The client's address, as the binding gave it. */
  readonly address: string | undefined
  /** The binding's id of the request. */
  readonly requestId: string | null
}

/** Who sent a request, as a binding names it. */
export interface Sender {
  readonly remoteAddress?: string | undefined
  readonly requestId?: string | undefined
}

/** Run `f` with the request's `Call`: its services read from the fiber in one step. */
export const run = <A, E, R, R2>(
  sender: Sender,
  f: (call: Call<R | Config>) => Effect.Effect<A, E, R2>
): Effect.Effect<A, E, R | R2 | Config> =>
  Effect.withFiberRuntime((fiber) => {
    const context = fiber.currentContext as Context.Context<R | Config>
    return f({
      context,
      clock: Context.get(fiber.currentDefaultServices, Clock.Clock),
      config: Context.unsafeGet(context, Config),
      digest: Context.get(context as Context.Context<Digest>, Digest),
      audit: Context.getOrElse(context as Context.Context<never>, Audit.AuditLog, () => null),
      tracing: fiber.getFiberRef(FiberRef.currentTracerEnabled),
      address: sender.remoteAddress,
      requestId: sender.requestId ?? null
    })
  })

/** A service of the request's context. */
export const use = <R, I extends R, S>(call: Call<R>, tag: Context.Tag<I, S>): S =>
  Context.unsafeGet(call.context as Context.Context<I>, tag)

/** The current time in epoch milliseconds. */
export const millis = (call: Call<never>): number => call.clock.unsafeCurrentTimeMillis()

/** The current time in whole epoch seconds, rounded down (as `nowSeconds`). */
export const seconds = (call: Call<never>): number => Math.floor(millis(call) / 1000)

/** An audit event of this request at `at` (seconds). */
export const event = (
  call: Call<never>,
  type: Audit.EventType,
  fields: Audit.Fields,
  at: number
): Audit.AuditEvent =>
  Audit.eventAt(type, fields, { address: call.address ?? null, requestId: call.requestId, actor: null }, at)

/** `effect` in a span named `name` (no stack capture) when the runtime traces, else as it is. */
export const traced = <A, E, R>(call: Call<never>, name: string, effect: Effect.Effect<A, E, R>) =>
  call.tracing ? Effect.withSpan(effect, name, { captureStackTrace: false }) : effect

/** Record an event of this request now, if the program has an AuditLog. Never fails. */
export const record = (
  call: Call<never>,
  type: Audit.EventType,
  fields: Audit.Fields = {}
): Effect.Effect<void> =>
  call.audit === null
    ? Effect.void
    : Effect.catchAllCause(call.audit.record(event(call, type, fields, seconds(call))), () => Effect.void)

/**
 * Run `write`, one write of a store, with this request's `events` in its transaction (if the program
 * has an AuditLog): the change and its audit record commit together.
 */
export const audited = <A, E, R>(
  call: Call<never>,
  write: Effect.Effect<A, E, R>,
  events: ReadonlyArray<readonly [Audit.EventType, Audit.Fields]>
): Effect.Effect<A, E | StorageError, R> => {
  if (call.audit === null) return write
  const at = seconds(call)
  return call.audit.recordWith(
    events.map(([type, fields]) => event(call, type, fields, at)),
    write
  )
}

/**
 * Admission of password checks (docs/security.md, throttling). Every check of a password
 * (the dummy ones for unknown users included) waits for one of `concurrency` turns, and
 * waiting checks from a trusted device are served first, so the owner's own browser waits
 * for the checks already running, not for an attacker's queue. A sign-in attempt holds a
 * place from before it is counted until it is answered: at most `perSource` at once per
 * source (an address, a username's trusted devices), more refused 429; at most `maxPending`
 * at once per lane, more answered 503 with Retry-After. A refused attempt has written nothing.
 */
import { Context, Deferred, Effect, Exit, Layer } from "effect"
import { RateLimited, TemporarilyUnavailable } from "../model/OAuthError.js"

/** How many password checks run and wait at once. */
export interface Limits {
  /** Password checks running at once (the reference server: its hashing threads). */
  readonly concurrency: number
  /** Sign-in attempts in progress at once per source; more are refused 429. */
  readonly perSource: number
  /** Sign-in attempts in progress at once per lane; more are answered 503 with Retry-After. */
  readonly maxPending: number
}

/** Two checks at once, two attempts per source, 64 attempts per lane. */
export const defaultLimits: Limits = { concurrency: 2, perSource: 2, maxPending: 64 }

/** Which queue an attempt's checks wait in: `trusted` (a trusted-device browser) goes first. */
export type Lane = "trusted" | "other"

/** What an attempt is admitted as: its lane, and the sources it counts against. */
export interface Ticket {
  readonly lane: Lane
  readonly sources: ReadonlyArray<string>
}

/** An admitted attempt. */
export interface Pass {
  /** Run one password check when its turn comes (trusted lane first), holding the turn while it runs. */
  readonly check: <A, E, R>(verify: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** Refusals of admission. */
export type Refusal = RateLimited | TemporarilyUnavailable

/** Admission of sign-in attempts and their password checks. */
export class PasswordChecks extends Context.Tag("@latchkey/core/PasswordChecks")<
  PasswordChecks,
  {
    /** Run `use` holding a place for `ticket`, or refuse it at once (429 past `perSource`, 503 past `maxPending`). */
    readonly admit: <A, E, R>(
      ticket: Ticket,
      use: (pass: Pass) => Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | Refusal, R>
    /** How many password checks are waiting for their turn now, in both lanes. */
    readonly waiting: Effect.Effect<number>
  }
>() {}

const tooManyAtOnce = new RateLimited({
  description: "too many sign-in attempts at once; try again shortly",
  retryAfter: 1
})

const busy = new TemporarilyUnavailable({
  description: "too many sign-in attempts are waiting; retry shortly",
  retryAfter: 1
})

/** A new admission with `limits`; its counts live in this process. */
export const make = (limits: Limits = defaultLimits): Effect.Effect<PasswordChecks["Type"]> =>
  Effect.sync(() => {
    const bySource = new Map<string, number>()
    const pending: Record<Lane, number> = { trusted: 0, other: 0 }
    const queues: Record<Lane, Array<Deferred.Deferred<void>>> = { trusted: [], other: [] }
    let running = 0
    // Take a place for `t`, or the refusal when there is none (nothing taken then)
    const enter = (t: Ticket): Refusal | null => {
      if (t.sources.some((s) => (bySource.get(s) ?? 0) >= limits.perSource)) return tooManyAtOnce
      if (pending[t.lane] >= limits.maxPending) return busy
      for (const s of t.sources) bySource.set(s, (bySource.get(s) ?? 0) + 1)
      pending[t.lane]++
      return null
    }
    const leave = (t: Ticket) => {
      for (const s of t.sources) {
        const n = (bySource.get(s) ?? 1) - 1
        if (n > 0) bySource.set(s, n)
        else bySource.delete(s)
      }
      pending[t.lane]--
    }
    // A finished check hands its turn to the next waiting one, trusted lane first.
    const release = () => {
      const next = queues.trusted.shift() ?? queues.other.shift()
      if (next !== undefined) Deferred.unsafeDone(next, Exit.void)
      else running--
    }
    const check =
      (lane: Lane) =>
      <A, E, R>(verify: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            const turn = yield* Deferred.make<void>()
            yield* Effect.sync(() => {
              if (running < limits.concurrency) {
                running++
                Deferred.unsafeDone(turn, Exit.void)
              } else queues[lane].push(turn)
            })
            // interrupted while waiting: leave the queue, or pass on a turn already handed over
            yield* restore(Deferred.await(turn)).pipe(
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  const i = queues[lane].indexOf(turn)
                  if (i >= 0) queues[lane].splice(i, 1)
                  else release()
                })
              )
            )
            return yield* restore(verify).pipe(Effect.ensuring(Effect.sync(release)))
          })
        )
    const passes: Record<Lane, Pass> = {
      trusted: { check: check("trusted") },
      other: { check: check("other") }
    }
    return {
      // The place is taken and given back as plain code around `use`, uninterruptibly (as
      // acquireUseRelease would, in a few steps instead of a dozen): given back however `use` ends
      admit: <A, E, R>(ticket: Ticket, use: (pass: Pass) => Effect.Effect<A, E, R>) =>
        Effect.uninterruptibleMask((restore): Effect.Effect<A, E | Refusal, R> => {
          const refused = enter(ticket)
          if (refused !== null) return Effect.fail(refused)
          return Effect.matchCauseEffect(restore(use(passes[ticket.lane])), {
            onFailure: (cause) => {
              leave(ticket)
              return Effect.failCause(cause)
            },
            onSuccess: (a) => {
              leave(ticket)
              return Effect.succeed(a)
            }
          })
        }),
      waiting: Effect.sync(() => queues.trusted.length + queues.other.length)
    }
  })

/** Admission with `limits` (the default: `defaultLimits`). */
export const layer = (limits: Limits = defaultLimits): Layer.Layer<PasswordChecks> =>
  Layer.effect(PasswordChecks, make(limits))

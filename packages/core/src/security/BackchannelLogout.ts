/**
 * OpenID Connect Back-Channel Logout 1.0 delivery: the outbox the stores fill when a session ends
 * (`LogoutStore`) is drained by `deliverDue`, run on a schedule by the server in the background.
 * Each due delivery is claimed under a lease (so instances never send the same one at once, and a
 * crash is retried once the lease ends), signed (`LogoutToken`), POSTed (`LogoutSender`), and then
 * finished (2xx), released for a retry after a backoff that grows with its attempts, or given up
 * past the last attempt with a `backchannel_logout_failed` audit event.
 */
import { Duration, Effect, Option } from "effect"
import { backchannelLogoutUri } from "../model/Application.js"
import { Config } from "../model/Config.js"
import * as LogoutToken from "../openid/LogoutToken.js"
import * as Entropy from "../services/Entropy.js"
import { issueTime, nowSeconds } from "../services/internal/time.js"
import { delivered, LogoutSender, type SendResult } from "../services/LogoutSender.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import type { KeyStore } from "../storage/KeyStore.js"
import { type Delivery, LogoutStore } from "../storage/LogoutStore.js"
import type { StorageError } from "../storage/StorageError.js"
import * as Audit from "./Audit.js"

/** The retry schedule: the delay after a failed attempt doubles from `base` up to `cap` seconds. */
export interface Backoff {
  /** Seconds after the first failed attempt. */
  readonly base: number
  /** Longest delay, in seconds. */
  readonly cap: number
  /** Attempts before the delivery is given up. */
  readonly maxAttempts: number
}

/** 10 s, 20 s, 40 s, … up to an hour, 12 attempts: about five hours before a delivery is given up. */
export const defaultBackoff: Backoff = { base: 10, cap: 3600, maxAttempts: 12 }

/**
 * When a delivery whose `attempts`th attempt failed at `now` is due again: `now` plus
 * `min(cap, base * 2^(attempts - 1))`; none once `attempts` reached `maxAttempts` (given up).
 */
export const nextAttempt = (
  attempts: number,
  now: number,
  backoff: Backoff = defaultBackoff
): Option.Option<number> =>
  attempts >= backoff.maxAttempts
    ? Option.none()
    : Option.some(now + Math.min(backoff.cap, backoff.base * 2 ** Math.max(0, attempts - 1)))

/** What became of the deliveries one run claimed. */
export interface Outcome {
  readonly delivered: number
  readonly retried: number
  readonly gaveUp: number
}

/** Bounds of one run of `deliverDue`. */
export interface Options {
  /** Most deliveries claimed in one run (default 32). */
  readonly limit?: number
  /** Seconds a claim holds its deliveries before another instance may take them (default 120). */
  readonly lease?: number
  /** Deliveries sent at once (default 8). */
  readonly concurrency?: number
  /** The retry schedule (default `defaultBackoff`). */
  readonly backoff?: Backoff
}

/** What `deliverDue` reads. */
export type Requirements = LogoutStore | ApplicationStore | LogoutSender | KeyStore | Config | Entropy.Entropy

type Result = keyof Outcome

// A delivery's end: finished with its audit events (given up), or released for the next attempt
const settle = (d: Delivery, claim: string, sent: SendResult | null, backoff: Backoff) =>
  Effect.gen(function* () {
    const logout = yield* LogoutStore
    const who = { appKey: d.appKey, userId: d.userId, openId: d.sub }
    if (sent !== null && delivered(sent)) {
      const detail = `status ${sent.status}`
      yield* Audit.recordWith(logout.finish(d, claim), [["backchannel_logout_delivered", { ...who, detail }]])
      return "delivered" as Result
    }
    const next = nextAttempt(d.attempts, yield* nowSeconds, backoff)
    if (Option.isSome(next) && sent !== null) {
      yield* logout.retry(d, claim, next.value)
      return "retried" as Result
    }
    const why = sent === null ? "no back-channel logout URI" : `status ${sent.status ?? "none"}`
    const detail = `given up after ${d.attempts} attempts: ${why}`
    yield* Audit.recordWith(logout.finish(d, claim), [["backchannel_logout_failed", { ...who, detail }]])
    return "gaveUp" as Result
  })

// One delivery: the application's URI read now (an application that no longer has one is given up)
const deliverOne = (d: Delivery, claim: string, backoff: Backoff) =>
  Effect.gen(function* () {
    const app = yield* Effect.flatMap(ApplicationStore, (s) => s.find(d.appKey))
    const uri = Option.isSome(app) ? backchannelLogoutUri(app.value) : null
    if (uri === null) return yield* settle(d, claim, null, backoff)
    const { issuer } = yield* Config
    const token = yield* LogoutToken.mint(d, issuer, yield* issueTime, yield* Entropy.id())
    const sent = yield* Effect.flatMap(LogoutSender, (s) => s.send(uri, token))
    return yield* settle(d, claim, sent, backoff)
  })

/**
 * Claim the deliveries due now (at most `limit`, under a lease of `lease` seconds) and send each:
 * delivered, retried or given up. A delivery whose store write fails stays claimed and is tried
 * again when its lease ends; the failure is logged (without the token) and the others go on.
 */
export const deliverDue = (options: Options = {}): Effect.Effect<Outcome, StorageError, Requirements> =>
  Effect.gen(function* () {
    const { limit = 32, lease = 120, concurrency = 8, backoff = defaultBackoff } = options
    const now = yield* nowSeconds
    const claim = yield* Entropy.id()
    const due = yield* Effect.flatMap(LogoutStore, (s) => s.claim(now, limit, now + lease, claim))
    const results = yield* Effect.forEach(
      due,
      (d) =>
        deliverOne(d, claim, backoff).pipe(
          Effect.catchAll((e) =>
            Effect.as(
              Effect.logWarning("back-channel logout delivery failed").pipe(
                Effect.annotateLogs({ appKey: d.appKey, reason: e.message })
              ),
              null
            )
          )
        ),
      { concurrency }
    )
    const count = (r: Result) => results.filter((x) => x === r).length
    return { delivered: count("delivered"), retried: count("retried"), gaveUp: count("gaveUp") }
  })

/** The interval of `scheduled` when none is given. */
export const defaultInterval: Duration.Duration = Duration.seconds(5)

/**
 * Run `deliverDue` every `interval` (default 5 seconds, by the Clock), passing each run's outcome
 * to `observe` (a metric); a run that fails (the database unavailable) is logged and the next one
 * runs as planned. Fork it where it is interrupted at shutdown: a send in flight is abandoned and
 * its delivery tried again when its lease ends.
 */
export const scheduled = <R>(
  options: Options & { readonly interval?: Duration.DurationInput } = {},
  observe: (outcome: Outcome) => Effect.Effect<void, never, R> = () => Effect.void
): Effect.Effect<never, never, Requirements | R> => {
  const { interval = defaultInterval, ...bounds } = options
  const once = deliverDue(bounds).pipe(
    Effect.flatMap(observe),
    Effect.catchAll((e) =>
      Effect.logWarning("back-channel logout run failed").pipe(Effect.annotateLogs({ reason: e.message }))
    )
  )
  return Effect.forever(Effect.zipRight(Effect.sleep(interval), once))
}

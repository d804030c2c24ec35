/**
 * The sweep of what expired, over whichever stores are provided: every adapter's `sweep` is
 * this one, so they cannot differ in what they purge or how much at a time. `scheduled` and
 * `layer` run it on a schedule for a program that embeds the endpoints.
 */
import { Duration, Effect, Layer, Option } from "effect"
import { nowSeconds } from "../services/internal/time.js"
import { CodeStore } from "../storage/CodeStore.js"
import { DeviceStore } from "../storage/DeviceStore.js"
import { KeyStore } from "../storage/KeyStore.js"
import { OperatorStore } from "../storage/OperatorStore.js"
import { RegistrationStore } from "../storage/RegistrationStore.js"
import { SessionStore } from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { ThrottleStore } from "../storage/ThrottleStore.js"
import { TokenStore } from "../storage/TokenStore.js"
import { defaultPolicy, ThrottlePolicy } from "./Throttle.js"

/** Bounds of one sweep. */
export interface Options {
  /**
   * Most codes, most tokens, most sessions, most pending requests, most throttle counters, most
   * trusted devices and most initial access tokens deleted in one run (default 1000).
   */
  readonly limit?: number
  /** Throttle counters without a failure for this many seconds (and not locked) are deleted (default: the default policy's window). */
  readonly throttleWindow?: number
}

/** How many rows one sweep deleted. */
export interface Result {
  readonly codes: number
  readonly tokens: number
  /** Expired sessions plus expired pending requests (`SessionStore.purgeExpired`), plus expired console sessions (`OperatorStore.purgeExpired`). */
  readonly sessions: number
  /** Throttle counters past their window (`ThrottleStore.purgeExpired`). */
  readonly throttle: number
  /** Retired signing keys no longer published (`KeyStore.removeExpired`). */
  readonly keys: number
  /** Trusted devices whose cookie has expired (`DeviceStore.purgeExpired`). */
  readonly devices: number
  /** Initial access tokens spent or expired (`RegistrationStore.purgeTokens`). */
  readonly registrationTokens: number
}

/** The stores one sweep deletes from. */
export type Swept =
  | CodeStore
  | TokenStore
  | SessionStore
  | ThrottleStore
  | KeyStore
  | DeviceStore
  | RegistrationStore
  | OperatorStore

/**
 * Delete codes, tokens, sessions (the console's too), pending authorization requests, throttle
 * counters, trusted devices and initial access tokens whose expiry has passed by the Clock (or
 * spent, for the last), at most `limit` of each, and the retired signing keys no longer
 * published (there are few: one a rotation). Tombstones (used codes, rotated refresh tokens) stay
 * until their original expiry, so replays are still detected. `scheduled` and `layer` run it
 * every few minutes.
 *
 * Audit events are not swept here: purge them with `AuditStore.purgeBefore(now - retention,
 * limit)` on the same schedule. This sweep counts time by the Effect Clock, while an adapter may
 * enforce the retention by the database's clock, so an audit purge in it would fail the whole
 * sweep whenever the two disagree (a test clock ahead of the database's).
 */
export const expired = (options: Options = {}): Effect.Effect<Result, StorageError, Swept> =>
  Effect.gen(function* () {
    const limit = options.limit ?? 1000
    const now = yield* nowSeconds
    const codes = yield* (yield* CodeStore).purgeExpired(now, limit)
    const tokens = yield* (yield* TokenStore).purgeExpired(now, limit)
    const signIns = yield* (yield* SessionStore).purgeExpired(now, limit)
    const sessions = signIns + (yield* (yield* OperatorStore).purgeExpired(now, limit))
    const window = options.throttleWindow ?? defaultPolicy.window
    const throttle = yield* (yield* ThrottleStore).purgeExpired(now, window, limit)
    const keys = yield* (yield* KeyStore).removeExpired(now)
    const devices = yield* (yield* DeviceStore).purgeExpired(now, limit)
    const registrationTokens = yield* (yield* RegistrationStore).purgeTokens(now, limit)
    return { codes, tokens, sessions, throttle, keys, devices, registrationTokens }
  })

/** Options of `scheduled` and `layer`: the bounds of each sweep, and how often it runs. */
export interface ScheduleOptions extends Options {
  /** Time from the start to the first sweep, and from the end of one sweep to the next (default 5 minutes). */
  readonly interval?: Duration.DurationInput
}

/** The interval of `scheduled` when none is given. */
export const defaultInterval: Duration.Duration = Duration.minutes(5)

/**
 * One sweep (`expired`) with `options.throttleWindow`, else the window of the `ThrottlePolicy`
 * in force when one is provided, else the default policy's; logged at info when it
 * deleted anything (`swept expired rows`, with the counts) and at warning when it failed
 * (`sweep failed`, with the reason): a failure never fails the schedule.
 */
const once = (options: Options): Effect.Effect<void, never, Swept> =>
  Effect.gen(function* () {
    const policy = yield* Effect.serviceOption(ThrottlePolicy)
    const window = options.throttleWindow ?? Option.getOrUndefined(Option.map(policy, (p) => p.window))
    const result = yield* expired({ ...options, ...(window === undefined ? {} : { throttleWindow: window }) })
    if (Object.values(result).some((n) => n > 0)) {
      yield* Effect.logInfo("swept expired rows").pipe(Effect.annotateLogs({ ...result }))
    }
  }).pipe(
    Effect.catchAll((e) => Effect.logWarning("sweep failed").pipe(Effect.annotateLogs({ reason: e.message })))
  )

/**
 * Sweep every `interval` (default 5 minutes), the first one `interval` after the start, for as
 * long as it runs: fork it where it is interrupted at shutdown (or use `layer`, which does). A
 * sweep that fails (the database unavailable) is logged and the next one runs as planned.
 */
export const scheduled = (options: ScheduleOptions = {}): Effect.Effect<never, never, Swept> => {
  const { interval = defaultInterval, ...bounds } = options
  return Effect.forever(Effect.zipRight(Effect.sleep(interval), once(bounds)))
}

/**
 * A layer that runs `scheduled(options)` in the background while it is alive: built into a
 * `ManagedRuntime`, the sweeps start with the runtime and stop with `runtime.dispose()` (in a
 * scope, when the scope closes). It provides nothing; feed it the stores, e.g.
 * `ManagedRuntime.make(Sweep.layer().pipe(Layer.provideMerge(services)))`.
 */
export const layer = (options: ScheduleOptions = {}): Layer.Layer<never, never, Swept> =>
  Layer.scopedDiscard(Effect.forkScoped(scheduled(options)))

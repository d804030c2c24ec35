/**
 * The sweep of what expired, over whichever stores are provided: every adapter's `sweep` is
 * this one, so they cannot differ in what they purge or how much at a time.
 */
import { Effect } from "effect"
import { nowSeconds } from "../services/internal/time.js"
import { CodeStore } from "../storage/CodeStore.js"
import { KeyStore } from "../storage/KeyStore.js"
import { SessionStore } from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { ThrottleStore } from "../storage/ThrottleStore.js"
import { TokenStore } from "../storage/TokenStore.js"
import { defaultPolicy } from "./Throttle.js"

/** Bounds of one sweep. */
export interface Options {
  /** Most codes, most tokens, most sessions, most pending requests and most throttle counters deleted in one run (default 1000). */
  readonly limit?: number
  /** Throttle counters without a failure for this many seconds (and not locked) are deleted (default: the default policy's window). */
  readonly throttleWindow?: number
}

/** How many rows one sweep deleted. */
export interface Result {
  readonly codes: number
  readonly tokens: number
  /** Expired sessions plus expired pending requests (`SessionStore.purgeExpired`). */
  readonly sessions: number
  /** Throttle counters past their window (`ThrottleStore.purgeExpired`). */
  readonly throttle: number
  /** Retired signing keys no longer published (`KeyStore.removeExpired`). */
  readonly keys: number
}

/**
 * Delete codes, tokens, sessions, pending authorization requests and throttle counters whose
 * expiry has passed by the Clock, at most `limit` of each, and the retired signing keys no longer
 * published (there are few: one a rotation). Tombstones (used codes, rotated
 * refresh tokens) stay until their original expiry, so replays are still detected. Schedule it,
 * e.g. `expired().pipe(Effect.repeat(Schedule.spaced("5 minutes")))`.
 *
 * Audit events are not swept here: purge them with `AuditStore.purgeBefore(now - retention,
 * limit)` on the same schedule. This sweep counts time by the Effect Clock, while an adapter may
 * enforce the retention by the database's clock, so an audit purge in it would fail the whole
 * sweep whenever the two disagree (a test clock ahead of the database's).
 */
export const expired = (
  options: Options = {}
): Effect.Effect<Result, StorageError, CodeStore | TokenStore | SessionStore | ThrottleStore | KeyStore> =>
  Effect.gen(function* () {
    const limit = options.limit ?? 1000
    const now = yield* nowSeconds
    const codes = yield* (yield* CodeStore).purgeExpired(now, limit)
    const tokens = yield* (yield* TokenStore).purgeExpired(now, limit)
    const sessions = yield* (yield* SessionStore).purgeExpired(now, limit)
    const window = options.throttleWindow ?? defaultPolicy.window
    const throttle = yield* (yield* ThrottleStore).purgeExpired(now, window, limit)
    const keys = yield* (yield* KeyStore).removeExpired(now)
    return { codes, tokens, sessions, throttle, keys }
  })

/**
 * Storage of throttle counters. The rules (what a failure does to a counter, when a key
 * locks, how long an attempt is slowed) are the core's pure functions in `Throttle.ts`;
 * a store only keeps the entries and applies them atomically: every operation reads the
 * entries of its keys, computes with the core's functions and writes them back as one
 * step, across every process that shares the store.
 */
import { Context, type Effect } from "effect"
import type { StorageError } from "./StorageError.js"

/** Throttling policy. Durations in seconds. */
export interface Policy {
  /** Failures allowed per identifier key (a username or App Key, with an address or device) before lockouts start. */
  readonly freeFailures: number
  /** Failures allowed per source address before lockouts start (higher: addresses are shared). */
  readonly addressFreeFailures: number
  /** Failures allowed per username from any address before its attempts are slowed down (never locked). */
  readonly slowFreeFailures: number
  /** Lockout after the first failure past the free ones; doubles each time. */
  readonly baseLockout: number
  /** Longest lockout. */
  readonly maxLockout: number
  /**
   * Spacing between the checked attempts of a slowed username (1 s doubling up to it), and the
   * longest an attempt waits for its slot: one whose slot is further away is refused.
   */
  readonly maxDelay: number
  /** A key's failures are forgotten after this long without one. */
  readonly window: number
}

/** The state of one key. */
export interface Entry {
  readonly failures: number
  readonly lastFailure: number
  /** Until when the key is locked; of a `slow` key (which never locks), its next free slot. */
  readonly lockedUntil: number
}

/**
 * A throttled key, of one of three kinds:
 * - `identifier` (an App Key or username with an address, device or application): locks past
 *   `freeFailures`; a success clears it;
 * - `shared` (an address alone, which many honest clients may share): locks past
 *   `addressFreeFailures`; a success gives back only its own attempt;
 * - `slow` (a username from any address): never locks, so nobody can lock a user out from
 *   elsewhere; past `slowFreeFailures` its attempts are scheduled one after another (each
 *   takes the next free slot and waits for it: `Reservation.delay`), and one whose slot is
 *   more than `maxDelay` away is refused without being counted; a success gives back only
 *   its own attempt.
 */
export interface Key {
  readonly key: string
  readonly kind: "identifier" | "shared" | "slow"
}

/** What reserving an attempt answered. */
export interface Reservation {
  /**
   * When above 0 the attempt was refused and nothing was counted: seconds until the keys
   * unlock, or until the username's next free slot is within `maxDelay`.
   */
  readonly wait: number
  /** The attempt started a lockout or a slowdown of one of the keys (recorded once, not per refusal). */
  readonly started: boolean
  /** Seconds from `now` to the attempt's slot, when it may be checked (0 unless a `slow` key is past its free failures). */
  readonly delay: number
}

/** Storage of throttle counters; every operation is atomic over the keys it is given. */
export class ThrottleStore extends Context.Tag("@latchkey/core/ThrottleStore")<
  ThrottleStore,
  {
    /**
     * Optional: an opaque value naming where the counters are kept. An ApplicationStore keeping
     * them in the same place (the same value) may read them with an application
     * (`ApplicationStore.findForClient`).
     */
    readonly counters?: object
    /** Seconds until the last of `keys` is unlocked at `now`; 0 when none is locked. */
    readonly lockedFor: (keys: ReadonlyArray<Key>, now: number) => Effect.Effect<number, StorageError>
    /** Count a failure on every key; true when it started a lockout of one of them. */
    readonly fail: (
      keys: ReadonlyArray<Key>,
      now: number,
      policy: Policy
    ) => Effect.Effect<boolean, StorageError>
    /**
     * In one step (`Throttle.reserveAttempt`): when a key is locked or the slot is too far
     * away, answer the wait and count nothing; otherwise count the attempt as a failure on
     * every key (it may lock the attempts after it: `started`) and give it its slot.
     */
    readonly reserve: (
      keys: ReadonlyArray<Key>,
      now: number,
      policy: Policy
    ) => Effect.Effect<Reservation, StorageError>
    /** A reserved attempt succeeded: clear identifier keys, give back one attempt on the others. */
    readonly settle: (keys: ReadonlyArray<Key>, policy: Policy) => Effect.Effect<void, StorageError>
    /** Delete at most `limit` entries neither locked at `now` nor failed within `window` seconds before it; returns how many. */
    readonly purgeExpired: (now: number, window: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

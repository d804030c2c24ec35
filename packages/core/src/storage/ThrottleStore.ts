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
  /** Longest delay of a slowed attempt (the delay doubles from 1 s up to it). */
  readonly maxDelay: number
  /** A key's failures are forgotten after this long without one. */
  readonly window: number
}

/** The state of one key. */
export interface Entry {
  readonly failures: number
  readonly lastFailure: number
  readonly lockedUntil: number
}

/**
 * A throttled key, of one of three kinds:
 * - `identifier` (an App Key or username with an address, device or application): locks past
 *   `freeFailures`; a success clears it;
 * - `shared` (an address alone, which many honest clients may share): locks past
 *   `addressFreeFailures`; a success gives back only its own attempt;
 * - `slow` (a username from any address): never locks, so nobody can lock a user out from
 *   elsewhere; past `slowFreeFailures` each attempt waits (`Reservation.delay`); a success
 *   gives back only its own attempt.
 */
export interface Key {
  readonly key: string
  readonly kind: "identifier" | "shared" | "slow"
}

/** What reserving an attempt answered. */
export interface Reservation {
  /** Seconds until the keys unlock; when above 0 the attempt was refused and nothing was counted. */
  readonly wait: number
  /** The attempt started a lockout or a slowdown of one of the keys (recorded once, not per refusal). */
  readonly started: boolean
  /** Seconds the attempt must wait before it is checked (0 unless a `slow` key is past its free failures). */
  readonly delay: number
}

/** Storage of throttle counters; every operation is atomic over the keys it is given. */
export class ThrottleStore extends Context.Tag("@latchkey/core/ThrottleStore")<
  ThrottleStore,
  {
    /** Seconds until the last of `keys` is unlocked at `now`; 0 when none is locked. */
    readonly lockedFor: (keys: ReadonlyArray<Key>, now: number) => Effect.Effect<number, StorageError>
    /** Count a failure on every key; true when it started a lockout of one of them. */
    readonly fail: (
      keys: ReadonlyArray<Key>,
      now: number,
      policy: Policy
    ) => Effect.Effect<boolean, StorageError>
    /**
     * In one step: when a key is locked, answer the wait and count nothing; otherwise count
     * the attempt as a failure on every key (it may lock the attempts after it: `started`).
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

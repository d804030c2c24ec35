/**
 * Throttling of repeated failures (sign-in, password grant): after `freeFailures`
 * failures in a window, each further failure locks the key out for a doubling
 * period, capped. Success clears the key. The counter store is a service so
 * several instances can share one; the default keeps counters in memory.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { nowSeconds } from "./internal/time.js"
import { RateLimited } from "./OAuthError.js"
import type { StorageError } from "./storage/StorageError.js"
import {
  type Entry,
  type Key,
  type Policy,
  type Reservation,
  ThrottleStore
} from "./storage/ThrottleStore.js"

export { type Entry, type Key, type Policy, type Reservation, ThrottleStore }

/**
 * Default policy: 5 free failures per identifier (20 per address), then 30 s doubling up to
 * 15 minutes; a username's attempts from anywhere are slowed past 10 failures, by 1 s
 * doubling up to 5 s; forgotten after an hour.
 */
export const defaultPolicy: Policy = {
  freeFailures: 5,
  addressFreeFailures: 20,
  slowFreeFailures: 10,
  baseLockout: 30,
  maxLockout: 900,
  maxDelay: 5,
  window: 3600
}

const freeOf = (key: Key, policy: Policy) =>
  key.kind === "identifier"
    ? policy.freeFailures
    : key.kind === "shared"
      ? policy.addressFreeFailures
      : policy.slowFreeFailures

/** The entry of `key` after one more failure at `now` (a failure outside the window starts over). */
export const afterFailure = (prev: Entry | undefined, key: Key, now: number, policy: Policy): Entry => {
  const failures = prev !== undefined && now - prev.lastFailure < policy.window ? prev.failures + 1 : 1
  const over = failures - freeOf(key, policy)
  // a slow key never locks
  const lockout =
    over > 0 && key.kind !== "slow" ? Math.min(policy.maxLockout, policy.baseLockout * 2 ** (over - 1)) : 0
  return { failures, lastFailure: now, lockedUntil: lockout > 0 ? now + lockout : 0 }
}

/** Seconds an attempt on a slow key whose entry (this attempt counted) is `entry` waits. */
const slowDelay = (entry: Entry, key: Key, policy: Policy): number => {
  const over = entry.failures - freeOf(key, policy)
  return key.kind === "slow" && over > 0 ? Math.min(policy.maxDelay, 2 ** (over - 1)) : 0
}

/** The entry of a key after a success gives back the attempt it reserved (null: delete it). */
export const afterSuccess = (prev: Entry | undefined, key: Key, policy: Policy): Entry | null => {
  if (prev === undefined || key.kind === "identifier") return null
  const failures = Math.max(0, prev.failures - 1)
  return { ...prev, failures, lockedUntil: failures <= freeOf(key, policy) ? 0 : prev.lockedUntil }
}

/** Seconds until the last of `keys` (whose entries are `entries`, in order) unlocks at `now`. */
export const lockWait = (
  keys: ReadonlyArray<Key>,
  entries: ReadonlyArray<Entry | undefined>,
  now: number
): number => {
  let wait = 0
  keys.forEach((k, i) => {
    const e = entries[i]
    if (k.kind !== "slow" && e !== undefined && e.lockedUntil > now)
      wait = Math.max(wait, e.lockedUntil - now)
  })
  return wait
}

/** Failures counted on `keys`: their new entries, and whether a lockout or slowdown started. */
export const countFailure = (
  keys: ReadonlyArray<Key>,
  entries: ReadonlyArray<Entry | undefined>,
  now: number,
  policy: Policy
): { readonly next: ReadonlyArray<Entry>; readonly started: boolean; readonly delay: number } => {
  let started = false
  let delay = 0
  const next = keys.map((k, i) => {
    const prev = entries[i]
    const entry = afterFailure(prev, k, now, policy)
    const d = slowDelay(entry, k, policy)
    const was =
      prev !== undefined && (k.kind === "slow" ? slowDelay(prev, k, policy) > 0 : prev.lockedUntil > now)
    // a slowdown starts when the count first passes the free failures within the window
    if ((entry.lockedUntil > now || d > 0) && !(was && entry.failures > 1)) started = true
    delay = Math.max(delay, d)
    return entry
  })
  return { next, started, delay }
}

/**
 * Reserve an attempt on `keys` (entries in order): refused with the wait when one is locked
 * (`next` null: nothing to write), otherwise counted as a failure until it succeeds.
 */
export const reserveAttempt = (
  keys: ReadonlyArray<Key>,
  entries: ReadonlyArray<Entry | undefined>,
  now: number,
  policy: Policy
): { readonly reservation: Reservation; readonly next: ReadonlyArray<Entry> | null } => {
  const wait = lockWait(keys, entries, now)
  if (wait > 0) return { reservation: { wait, started: false, delay: 0 }, next: null }
  const { next, started, delay } = countFailure(keys, entries, now, policy)
  return { reservation: { wait: 0, started, delay }, next }
}

/** An entry a store may forget at `now`: not locked, and no failure within `window` seconds. */
export const isExpired = (entry: Entry, now: number, window: number): boolean =>
  entry.lockedUntil <= now && now - entry.lastFailure >= window

/** Counters in this process's memory, bounded to `maxKeys` (oldest dropped first). */
export const memoryStore = (maxKeys = 100_000): ThrottleStore["Type"] => {
  const entries = new Map<string, Entry>()
  const set = (key: string, entry: Entry | null) => {
    entries.delete(key)
    if (entry === null) return
    entries.set(key, entry)
    if (entries.size > maxKeys) {
      const oldest = entries.keys().next().value
      if (oldest !== undefined) entries.delete(oldest)
    }
  }
  const read = (keys: ReadonlyArray<Key>) => keys.map((k) => entries.get(k.key))
  const write = (keys: ReadonlyArray<Key>, next: ReadonlyArray<Entry | null>) => {
    for (const [i, k] of keys.entries()) set(k.key, next[i] ?? null)
  }
  return {
    lockedFor: (keys, now) => Effect.sync(() => lockWait(keys, read(keys), now)),
    fail: (keys, now, policy) =>
      Effect.sync(() => {
        const { next, started } = countFailure(keys, read(keys), now, policy)
        write(keys, next)
        return started
      }),
    reserve: (keys, now, policy) =>
      Effect.sync(() => {
        const { reservation, next } = reserveAttempt(keys, read(keys), now, policy)
        if (next !== null) write(keys, next)
        return reservation
      }),
    settle: (keys, policy) =>
      Effect.sync(() => {
        const prev = read(keys)
        write(
          keys,
          keys.map((k, i) => afterSuccess(prev[i], k, policy))
        )
      }),
    purgeExpired: (now, window, limit) =>
      Effect.sync(() => {
        let n = 0
        for (const [k, e] of entries) {
          if (n >= limit) break
          if (isExpired(e, now, window)) {
            entries.delete(k)
            n++
          }
        }
        return n
      })
  }
}

/** The throttle policy in force. */
export class ThrottlePolicy extends Context.Tag("@latchkey/core/ThrottlePolicy")<ThrottlePolicy, Policy>() {}

const limited = (wait: number) =>
  new RateLimited({ description: "too many failed attempts; try again later", retryAfter: wait })

/** Fail with `RateLimited` when any key is locked out now. */
export const check = (
  keys: ReadonlyArray<Key>
): Effect.Effect<void, RateLimited | StorageError, ThrottleStore> =>
  Effect.gen(function* () {
    const wait = yield* (yield* ThrottleStore).lockedFor(keys, yield* nowSeconds)
    if (wait > 0) return yield* Effect.fail(limited(wait))
  })

/** Record a failure for every key; true when it started a lockout (recorded once, not per refusal). */
export const failure = (
  keys: ReadonlyArray<Key>
): Effect.Effect<boolean, StorageError, ThrottleStore | ThrottlePolicy> =>
  Effect.gen(function* () {
    return yield* (yield* ThrottleStore).fail(keys, yield* nowSeconds, yield* ThrottlePolicy)
  })

/**
 * Count an attempt before it is checked: fail with `RateLimited` when a key is
 * locked; otherwise the attempt counts as a failure until `succeeded` says
 * otherwise. Attempts in flight at the same time are all counted, so parallel
 * guesses get no more than sequential ones. An attempt on a slowed-down key waits its
 * delay (on the Clock, so tests control it) before it returns.
 */
export const reserve = (
  keys: ReadonlyArray<Key>
): Effect.Effect<{ readonly started: boolean }, RateLimited | StorageError, ThrottleStore | ThrottlePolicy> =>
  Effect.gen(function* () {
    const r = yield* (yield* ThrottleStore).reserve(keys, yield* nowSeconds, yield* ThrottlePolicy)
    if (r.wait > 0) return yield* Effect.fail(limited(r.wait))
    if (r.delay > 0) yield* Effect.sleep(Duration.seconds(r.delay))
    return { started: r.started }
  })

/** A reserved attempt succeeded. */
export const succeeded = (
  keys: ReadonlyArray<Key>
): Effect.Effect<void, StorageError, ThrottleStore | ThrottlePolicy> =>
  Effect.gen(function* () {
    yield* (yield* ThrottleStore).settle(keys, yield* ThrottlePolicy)
  })

/**
 * Where a sign-in attempt comes from: the sign-in page, from a browser that holds
 * a trusted-device cookie for the username or not, or the password grant of an
 * application.
 */
export type SignInChannel =
  | { readonly _tag: "Page"; readonly device: string | null }
  | { readonly _tag: "Grant"; readonly appKey: string }

/**
 * The throttle keys of a sign-in attempt (docs/security.md, throttling).
 * - The sign-in page without a trusted device: a budget per username from this address
 *   and one per address, which lock; across addresses the username's attempts are only
 *   slowed down, so nobody who knows a username can make the owner's right password fail.
 * - A browser the user signed in with before: a budget of its own (and the address's), so
 *   nobody else's failures touch it.
 * - The password grant: a budget per username and application, without an address key
 *   (one application server sends every user's attempts from one address).
 * Without an address (an embedding that does not know it) the untrusted page's budget is
 * per username.
 */
export const signInKeys = (
  username: string,
  address: string | undefined,
  channel: SignInChannel = { _tag: "Page", device: null }
): ReadonlyArray<Key> => {
  if (channel._tag === "Grant")
    return [{ key: `signin:user:${username}:app:${channel.appKey}`, kind: "identifier" }]
  const from = address ?? "unknown"
  const byAddress: ReadonlyArray<Key> =
    address === undefined ? [] : [{ key: `signin:ip:${address}`, kind: "shared" }]
  if (channel.device !== null)
    return [{ key: `signin:user:${username}:device:${channel.device}`, kind: "identifier" }, ...byAddress]
  return [
    { key: `signin:user:${username}:ip:${from}`, kind: "identifier" },
    ...byAddress,
    { key: `signin:user:${username}`, kind: "slow" }
  ]
}

/**
 * The throttle keys of a client authentication attempt at the JSON endpoints: the
 * App Key from this address, and the address. There is no lock on an App Key
 * alone: App Keys are public, generated secrets cannot be guessed, and such a lock
 * would let anyone shut an application out.
 */
export const clientKeys = (appKey: string, address: string | undefined): ReadonlyArray<Key> =>
  address === undefined
    ? [{ key: `client:app:${appKey}`, kind: "identifier" }]
    : [
        { key: `client:app:${appKey}:ip:${address}`, kind: "identifier" },
        { key: `client:ip:${address}`, kind: "shared" }
      ]

/** The throttle policy alone, for a storage adapter that provides the `ThrottleStore`. */
export const policyLayer = (policy: Policy = defaultPolicy): Layer.Layer<ThrottlePolicy> =>
  Layer.succeed(ThrottlePolicy, policy)

/** Counters in this process's memory (`memoryStore`), with the policy. */
export const layer = (policy: Policy = defaultPolicy): Layer.Layer<ThrottleStore | ThrottlePolicy> =>
  Layer.merge(
    Layer.sync(ThrottleStore, () => memoryStore()),
    policyLayer(policy)
  )

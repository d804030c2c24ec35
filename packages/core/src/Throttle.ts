/**
 * Throttling of repeated failures (sign-in, password grant): after `freeFailures`
 * failures in a window, each further failure locks the key out for a doubling
 * period, capped. Success clears the key. The counter store is a service so
 * several instances can share one; the default keeps counters in memory.
 */
import { Context, Effect, Layer } from "effect"
import { nowSeconds } from "./internal/time.js"
import { RateLimited } from "./OAuthError.js"

/** Throttling policy. Durations in seconds. */
export interface Policy {
  /** Failures allowed per username or App Key before lockouts start. */
  readonly freeFailures: number
  /** Failures allowed per source address before lockouts start (higher: addresses are shared). */
  readonly addressFreeFailures: number
  /** Lockout after the first failure past the free ones; doubles each time. */
  readonly baseLockout: number
  /** Longest lockout. */
  readonly maxLockout: number
  /** A key's failures are forgotten after this long without one. */
  readonly window: number
}

/** Default policy: 5 free failures (20 per address), then 30 s doubling up to 15 minutes; forgotten after an hour. */
export const defaultPolicy: Policy = {
  freeFailures: 5,
  addressFreeFailures: 20,
  baseLockout: 30,
  maxLockout: 900,
  window: 3600
}

/** The state of one key. */
export interface Entry {
  readonly failures: number
  readonly lastFailure: number
  readonly lockedUntil: number
}

/**
 * A throttled key. Identifier keys (an App Key or username with an address) are
 * cleared by a success; shared keys (an address alone, which many honest clients
 * may share) allow `addressFreeFailures` and a success gives back only its own
 * attempt.
 */
export interface Key {
  readonly key: string
  readonly shared: boolean
}

/** The entry of `key` after one more failure at `now` (a failure outside the window starts over). */
export const afterFailure = (prev: Entry | undefined, key: Key, now: number, policy: Policy): Entry => {
  const failures = prev !== undefined && now - prev.lastFailure < policy.window ? prev.failures + 1 : 1
  const over = failures - (key.shared ? policy.addressFreeFailures : policy.freeFailures)
  const lockout = over > 0 ? Math.min(policy.maxLockout, policy.baseLockout * 2 ** (over - 1)) : 0
  return { failures, lastFailure: now, lockedUntil: lockout > 0 ? now + lockout : 0 }
}

/** The entry of a shared key after a success gives back the attempt it reserved. */
export const afterGiveBack = (prev: Entry, key: Key, policy: Policy): Entry => {
  const failures = Math.max(0, prev.failures - 1)
  const free = key.shared ? policy.addressFreeFailures : policy.freeFailures
  return { ...prev, failures, lockedUntil: failures <= free ? 0 : prev.lockedUntil }
}

/** Storage of throttle counters; every operation is atomic over the keys it is given. */
export class ThrottleStore extends Context.Tag("@latchkey/core/ThrottleStore")<
  ThrottleStore,
  {
    /** Seconds until the last of `keys` is unlocked at `now`; 0 when none is locked. */
    readonly lockedFor: (keys: ReadonlyArray<Key>, now: number) => Effect.Effect<number>
    /** Count a failure on every key; true when it started a lockout of one of them. */
    readonly fail: (keys: ReadonlyArray<Key>, now: number, policy: Policy) => Effect.Effect<boolean>
    /**
     * In one step: when a key is locked, answer the wait and count nothing; otherwise count
     * the attempt as a failure on every key (it may lock the attempts after it: `started`).
     */
    readonly reserve: (
      keys: ReadonlyArray<Key>,
      now: number,
      policy: Policy
    ) => Effect.Effect<{ readonly wait: number; readonly started: boolean }>
    /** A reserved attempt succeeded: clear identifier keys, give back one attempt on shared keys. */
    readonly settle: (keys: ReadonlyArray<Key>, policy: Policy) => Effect.Effect<void>
  }
>() {}

/** Counters in this process's memory, bounded to `maxKeys` (oldest dropped first). */
export const memoryStore = (maxKeys = 100_000): Layer.Layer<ThrottleStore> =>
  Layer.sync(ThrottleStore, () => {
    const entries = new Map<string, Entry>()
    const set = (key: string, entry: Entry) => {
      entries.delete(key)
      entries.set(key, entry)
      if (entries.size > maxKeys) {
        const oldest = entries.keys().next().value
        if (oldest !== undefined) entries.delete(oldest)
      }
    }
    const lockedFor = (keys: ReadonlyArray<Key>, now: number) => {
      let wait = 0
      for (const k of keys) {
        const e = entries.get(k.key)
        if (e !== undefined && e.lockedUntil > now) wait = Math.max(wait, e.lockedUntil - now)
      }
      return wait
    }
    const fail = (keys: ReadonlyArray<Key>, now: number, policy: Policy): boolean => {
      let started = false
      for (const k of keys) {
        const prev = entries.get(k.key)
        const next = afterFailure(prev, k, now, policy)
        if (next.lockedUntil > now && !(prev !== undefined && prev.lockedUntil > now)) started = true
        set(k.key, next)
      }
      return started
    }
    return {
      lockedFor: (keys, now) => Effect.sync(() => lockedFor(keys, now)),
      fail: (keys, now, policy) => Effect.sync(() => fail(keys, now, policy)),
      reserve: (keys, now, policy) =>
        Effect.sync(() => {
          const wait = lockedFor(keys, now)
          return { wait, started: wait === 0 && fail(keys, now, policy) }
        }),
      settle: (keys, policy) =>
        Effect.sync(() => {
          for (const k of keys) {
            const e = entries.get(k.key)
            if (!k.shared) entries.delete(k.key)
            else if (e !== undefined) set(k.key, afterGiveBack(e, k, policy))
          }
        })
    }
  })

/** The throttle policy in force. */
export class ThrottlePolicy extends Context.Tag("@latchkey/core/ThrottlePolicy")<ThrottlePolicy, Policy>() {}

const limited = (wait: number) =>
  new RateLimited({ description: "too many failed attempts; try again later", retryAfter: wait })

/** Fail with `RateLimited` when any key is locked out now. */
export const check = (keys: ReadonlyArray<Key>): Effect.Effect<void, RateLimited, ThrottleStore> =>
  Effect.gen(function* () {
    const wait = yield* (yield* ThrottleStore).lockedFor(keys, yield* nowSeconds)
    if (wait > 0) return yield* Effect.fail(limited(wait))
  })

/** Record a failure for every key; true when it started a lockout (recorded once, not per refusal). */
export const failure = (
  keys: ReadonlyArray<Key>
): Effect.Effect<boolean, never, ThrottleStore | ThrottlePolicy> =>
  Effect.gen(function* () {
    return yield* (yield* ThrottleStore).fail(keys, yield* nowSeconds, yield* ThrottlePolicy)
  })

/**
 * Count an attempt before it is checked: fail with `RateLimited` when a key is
 * locked; otherwise the attempt counts as a failure until `succeeded` says
 * otherwise. Attempts in flight at the same time are all counted, so parallel
 * guesses get no more than sequential ones.
 */
export const reserve = (
  keys: ReadonlyArray<Key>
): Effect.Effect<{ readonly started: boolean }, RateLimited, ThrottleStore | ThrottlePolicy> =>
  Effect.gen(function* () {
    const r = yield* (yield* ThrottleStore).reserve(keys, yield* nowSeconds, yield* ThrottlePolicy)
    if (r.wait > 0) return yield* Effect.fail(limited(r.wait))
    return { started: r.started }
  })

/** A reserved attempt succeeded. */
export const succeeded = (
  keys: ReadonlyArray<Key>
): Effect.Effect<void, never, ThrottleStore | ThrottlePolicy> =>
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
 * The throttle keys of a sign-in attempt. The sign-in page without a trusted
 * device shares one budget per username (any address) and one per address; a
 * browser the user signed in with before has its own budget, so nobody else's
 * failures lock it out; the password grant has a budget per username and
 * application, without an address key (one application server sends every
 * user's attempts from one address).
 */
export const signInKeys = (
  username: string,
  address: string | undefined,
  channel: SignInChannel = { _tag: "Page", device: null }
): ReadonlyArray<Key> => {
  if (channel._tag === "Grant")
    return [{ key: `signin:user:${username}:app:${channel.appKey}`, shared: false }]
  const identifier: Key =
    channel.device === null
      ? { key: `signin:user:${username}`, shared: false }
      : { key: `signin:user:${username}:device:${channel.device}`, shared: false }
  return address === undefined ? [identifier] : [identifier, { key: `signin:ip:${address}`, shared: true }]
}

/**
 * The throttle keys of a client authentication attempt at the JSON endpoints: the
 * App Key from this address, and the address. There is no lock on an App Key
 * alone: App Keys are public, generated secrets cannot be guessed, and such a lock
 * would let anyone shut an application out.
 */
export const clientKeys = (appKey: string, address: string | undefined): ReadonlyArray<Key> =>
  address === undefined
    ? [{ key: `client:app:${appKey}`, shared: false }]
    : [
        { key: `client:app:${appKey}:ip:${address}`, shared: false },
        { key: `client:ip:${address}`, shared: true }
      ]

/** In-memory counters with the default policy. */
export const layer = (policy: Policy = defaultPolicy): Layer.Layer<ThrottleStore | ThrottlePolicy> =>
  Layer.merge(memoryStore(), Layer.succeed(ThrottlePolicy, policy))

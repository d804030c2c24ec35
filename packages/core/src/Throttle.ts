/**
 * Throttling of repeated failures (sign-in, password grant): after `freeFailures`
 * failures in a window, each further failure locks the key out for a doubling
 * period, capped. Success clears the key. The counter store is a service so
 * several instances can share one; the default keeps counters in memory.
 */
import { Context, Effect, Layer, Option } from "effect"
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

/** Storage of throttle counters. */
export class ThrottleStore extends Context.Tag("@latchkey/core/ThrottleStore")<
  ThrottleStore,
  {
    readonly get: (key: string) => Effect.Effect<Option.Option<Entry>>
    readonly set: (key: string, entry: Entry) => Effect.Effect<void>
    readonly delete: (key: string) => Effect.Effect<void>
  }
>() {}

/** Counters in this process's memory, bounded to `maxKeys` (oldest dropped first). */
export const memoryStore = (maxKeys = 100_000): Layer.Layer<ThrottleStore> =>
  Layer.sync(ThrottleStore, () => {
    const entries = new Map<string, Entry>()
    return {
      get: (key) => Effect.sync(() => Option.fromNullable(entries.get(key))),
      set: (key, entry) =>
        Effect.sync(() => {
          entries.delete(key)
          entries.set(key, entry)
          if (entries.size > maxKeys) {
            const oldest = entries.keys().next().value
            if (oldest !== undefined) entries.delete(oldest)
          }
        }),
      delete: (key) => Effect.sync(() => void entries.delete(key))
    }
  })

/** The throttle policy in force. */
export class ThrottlePolicy extends Context.Tag("@latchkey/core/ThrottlePolicy")<ThrottlePolicy, Policy>() {}

/** Fail with `RateLimited` when any key is locked out now. */
export const check = (keys: ReadonlyArray<string>): Effect.Effect<void, RateLimited, ThrottleStore> =>
  Effect.gen(function* () {
    const store = yield* ThrottleStore
    const t = yield* nowSeconds
    let wait = 0
    for (const key of keys) {
      const e = yield* store.get(key)
      if (Option.isSome(e) && e.value.lockedUntil > t) wait = Math.max(wait, e.value.lockedUntil - t)
    }
    if (wait > 0) {
      return yield* Effect.fail(
        new RateLimited({ description: "too many failed attempts; try again later", retryAfter: wait })
      )
    }
  })

/** Record a failure for every key. */
export const failure = (
  keys: ReadonlyArray<string>
): Effect.Effect<void, never, ThrottleStore | ThrottlePolicy> =>
  Effect.gen(function* () {
    const store = yield* ThrottleStore
    const policy = yield* ThrottlePolicy
    const t = yield* nowSeconds
    for (const key of keys) {
      const prev = Option.getOrUndefined(yield* store.get(key))
      const failures = prev !== undefined && t - prev.lastFailure < policy.window ? prev.failures + 1 : 1
      const free = key.includes(":ip:") ? policy.addressFreeFailures : policy.freeFailures
      const over = failures - free
      const lockout = over > 0 ? Math.min(policy.maxLockout, policy.baseLockout * 2 ** (over - 1)) : 0
      yield* store.set(key, { failures, lastFailure: t, lockedUntil: lockout > 0 ? t + lockout : 0 })
    }
  })

/** Forget the failures of every key (after a success). */
export const success = (keys: ReadonlyArray<string>): Effect.Effect<void, never, ThrottleStore> =>
  Effect.flatMap(ThrottleStore, (store) => Effect.forEach(keys, store.delete, { discard: true }))

/** The throttle keys of a sign-in attempt (sign-in page and password grant share them). */
export const signInKeys = (username: string, address: string | undefined): ReadonlyArray<string> =>
  address === undefined ? [`signin:user:${username}`] : [`signin:user:${username}`, `signin:ip:${address}`]

/** The throttle keys of a client authentication attempt at the JSON endpoints. */
export const clientKeys = (appKey: string, address: string | undefined): ReadonlyArray<string> =>
  address === undefined ? [`client:app:${appKey}`] : [`client:app:${appKey}`, `client:ip:${address}`]

/** In-memory counters with the default policy. */
export const layer = (policy: Policy = defaultPolicy): Layer.Layer<ThrottleStore | ThrottlePolicy> =>
  Layer.merge(memoryStore(), Layer.succeed(ThrottlePolicy, policy))

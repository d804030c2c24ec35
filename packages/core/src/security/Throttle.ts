/**
 * Throttling of repeated failures (sign-in, password grant): after `freeFailures`
 * failures in a window, each further failure locks the key out for a doubling
 * period, capped. Success clears the key. The counter store is a service so
 * several instances can share one; the default keeps counters in memory.
 */
import { type Clock, Context, Duration, Effect, Layer } from "effect"
import { RateLimited } from "../model/OAuthError.js"
import type { StorageError } from "../storage/StorageError.js"
import {
  type Entry,
  type Key,
  type Policy,
  type Reservation,
  ThrottleStore
} from "../storage/ThrottleStore.js"
import { atomically } from "../storage/Transaction.js"
import * as PasswordChecks from "./PasswordChecks.js"

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

/** Seconds between two checked attempts on a slow key `over` failures past its free ones: 1 s doubling, capped. */
const spacing = (over: number, policy: Policy): number => Math.min(policy.maxDelay, 2 ** (over - 1))

/**
 * The schedule of a slow key, whose entry's `lockedUntil` holds its next free slot (a slow key
 * never locks): past its free failures an attempt takes the slot `max(now, next slot)` and
 * moves the next slot `spacing` after it, so parallel attempts wait one after another.
 */
const scheduled = (
  prev: Entry | undefined,
  failures: number,
  now: number,
  policy: Policy
): { readonly delay: number; readonly nextSlot: number } => {
  const over = failures - policy.slowFreeFailures
  if (over <= 0) return { delay: 0, nextSlot: 0 }
  const slot = Math.max(now, prev !== undefined && failures > 1 ? prev.lockedUntil : 0)
  return { delay: slot - now, nextSlot: slot + spacing(over, policy) }
}

/** The entry of `key` after one more failure at `now` (a failure outside the window starts over). */
export const afterFailure = (prev: Entry | undefined, key: Key, now: number, policy: Policy): Entry => {
  const failures = prev !== undefined && now - prev.lastFailure < policy.window ? prev.failures + 1 : 1
  // a slow key never locks: its lockedUntil is its next free slot
  if (key.kind === "slow")
    return { failures, lastFailure: now, lockedUntil: scheduled(prev, failures, now, policy).nextSlot }
  const over = failures - freeOf(key, policy)
  const lockout = over > 0 ? Math.min(policy.maxLockout, policy.baseLockout * 2 ** (over - 1)) : 0
  return { failures, lastFailure: now, lockedUntil: lockout > 0 ? now + lockout : 0 }
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

/**
 * Failures counted on `keys`: their new entries, whether a lockout or slowdown started, and
 * the seconds from `now` to the attempt's slot on its slow keys (0 without one).
 */
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
    const slow = k.kind === "slow"
    const over = entry.failures - freeOf(k, policy)
    const was = prev !== undefined && (slow ? prev.failures > freeOf(k, policy) : prev.lockedUntil > now)
    // a slowdown starts when the count first passes the free failures within the window
    if ((entry.lockedUntil > now || (slow && over > 0)) && !(was && entry.failures > 1)) started = true
    if (slow) delay = Math.max(delay, scheduled(prev, entry.failures, now, policy).delay)
    return entry
  })
  return { next, started, delay }
}

/**
 * Reserve an attempt on `keys` (entries in order): refused with the wait when one is locked,
 * or when its slot on a slow key is more than `maxDelay` away (`next` null: nothing counted,
 * no slot taken); otherwise counted as a failure until it succeeds, and scheduled.
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
  // docs/security.md, throttling: a slot too far away refuses this request only, locking nothing
  if (delay > policy.maxDelay)
    return { reservation: { wait: delay - policy.maxDelay, started: false, delay: 0 }, next: null }
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

// The wait is a whole number of seconds the code computed: the error's fields need no validation
const limited = (wait: number) =>
  new RateLimited({ description: "too many failed attempts; try again later", retryAfter: wait }, true)

/**
 * Count an attempt before it is checked: fail with `RateLimited` when a key is locked or
 * the username's schedule is full; otherwise the attempt counts as a failure until
 * `succeeded` says otherwise. Attempts in flight at the same time are all counted, so
 * parallel guesses get no more than sequential ones. An attempt on a slowed-down key waits
 * until its slot (on the Clock, so tests control it) before it returns. `before` (store calls,
 * e.g. taking the form the attempt came with) commits in the same transaction, first: when it
 * fails nothing is counted.
 *
 * @public
 */
export const reserve = <E = never, R = never>(
  keys: ReadonlyArray<Key>,
  before?: Effect.Effect<void, E, R>
): Effect.Effect<
  { readonly started: boolean },
  RateLimited | StorageError | E,
  ThrottleStore | ThrottlePolicy | R
> =>
  Effect.flatMap(ThrottleStore, (store) =>
    Effect.flatMap(ThrottlePolicy, (policy) =>
      Effect.flatMap(Effect.clock, (clock) => reserveWith({ store, policy, clock }, keys, before))
    )
  )

/** The services `reserveWith` uses, given by the caller (a request's, read once). */
export interface Counting {
  readonly store: ThrottleStore["Type"]
  readonly policy: Policy
  readonly clock: Clock.Clock
}

/** `reserve` with its services given: the time read as a plain call when it runs, the store's reservation its one step. */
export const reserveWith = <E = never, R = never>(
  counting: Counting,
  keys: ReadonlyArray<Key>,
  before?: Effect.Effect<void, E, R>
): Effect.Effect<{ readonly started: boolean }, RateLimited | StorageError | E, R> =>
  Effect.suspend(() => {
    const { store, policy, clock } = counting
    const now = Math.floor(clock.unsafeCurrentTimeMillis() / 1000)
    // Alone, the store's own transaction (its locks taken before it begins) is the one
    const reserved =
      before === undefined
        ? store.reserve(keys, now, policy)
        : atomically(Effect.zipRight(before, store.reserve(keys, now, policy)))
    return Effect.flatMap(reserved, (r): Effect.Effect<{ readonly started: boolean }, RateLimited> => {
      if (r.wait > 0) return Effect.fail(limited(r.wait))
      // until the slot itself, however long the store took to answer
      const wait = r.delay > 0 ? (now + r.delay) * 1000 - clock.unsafeCurrentTimeMillis() : 0
      const answer = { started: r.started }
      return wait > 0 ? Effect.as(Effect.sleep(Duration.millis(wait)), answer) : Effect.succeed(answer)
    })
  })

/**
 * A reserved attempt succeeded.
 *
 * @public
 */
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
 * The throttle keys of a sign-in to the operator console, in a key space of their own
 * (`console:`): the rules of the sign-in page without a trusted device. A budget per operator name
 * from this address and one per address lock; across addresses the name's attempts are only
 * slowed down, so nobody elsewhere can lock an operator out by guessing.
 */
export const consoleKeys = (name: string, address: string | undefined): ReadonlyArray<Key> => {
  const from = address ?? "unknown"
  return [
    { key: `console:name:${name}:ip:${from}`, kind: "identifier" },
    ...(address === undefined ? [] : [{ key: `console:ip:${address}`, kind: "shared" } as const]),
    { key: `console:name:${name}`, kind: "slow" }
  ]
}

/**
 * The throttle keys of a second-factor code (or recovery code) of a user, in a key space of their
 * own (`factor:`), apart from passwords': one budget per user, which locks, so codes cannot be
 * guessed from many addresses; a browser trusted for the user has its own, so nobody else's
 * wrong codes lock out the owner's trusted device (a passkey is never counted here).
 */
export const factorKeys = (userId: string, device: string | null = null): ReadonlyArray<Key> =>
  device === null
    ? [{ key: `factor:user:${userId}`, kind: "identifier" }]
    : [{ key: `factor:user:${userId}:device:${device}`, kind: "identifier" }]

/**
 * How a sign-in attempt waits for its password check (`PasswordChecks`): a browser with a
 * trusted-device cookie for the username in the first lane, at most a few at once per
 * username (only the user's own browsers hold such a cookie); the untrusted page at most a
 * few at once per address; the password grant only within its lane's cap (every user of an
 * application comes from the application server's address).
 */
export const signInTicket = (
  username: string,
  address: string | undefined,
  channel: SignInChannel = { _tag: "Page", device: null }
): PasswordChecks.Ticket => {
  if (channel._tag === "Page" && channel.device !== null)
    return { lane: "trusted", sources: [`user:${username}`] }
  return {
    lane: "other",
    sources: channel._tag === "Page" && address !== undefined ? [`address:${address}`] : []
  }
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

/**
 * The throttle policy and the admission of password checks (`PasswordChecks`), for a storage
 * adapter that provides the `ThrottleStore`.
 */
export const policyLayer = (
  policy: Policy = defaultPolicy,
  checks: PasswordChecks.Limits = PasswordChecks.defaultLimits
): Layer.Layer<ThrottlePolicy | PasswordChecks.PasswordChecks> =>
  Layer.merge(Layer.succeed(ThrottlePolicy, policy), PasswordChecks.layer(checks))

/** Counters in this process's memory (`memoryStore`), with the policy and the admission of password checks. */
export const layer = (
  policy: Policy = defaultPolicy,
  checks: PasswordChecks.Limits = PasswordChecks.defaultLimits
): Layer.Layer<ThrottleStore | ThrottlePolicy | PasswordChecks.PasswordChecks> =>
  Layer.merge(
    Layer.sync(ThrottleStore, () => memoryStore()),
    policyLayer(policy, checks)
  )

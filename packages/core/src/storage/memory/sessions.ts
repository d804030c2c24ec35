/**
 * The memory store of sessions and pending requests; the user store ends a user's sessions
 * through it in the same synchronous step as the change that ends them. What it evicts is
 * decided by the core's `Eviction` rules.
 */
import { Effect, Option } from "effect"
import type { User } from "../../model/User.js"
import * as Eviction from "../Eviction.js"
import {
  type PendingRecord,
  type SessionLimits,
  type SessionRecord,
  type SessionStore,
  stillAsChecked
} from "../SessionStore.js"

/** The first `n` values of `values`. */
function* first<A>(values: Iterable<A>, n: number): Generator<A> {
  if (n <= 0) return
  let taken = 0
  for (const value of values) {
    yield value
    if (++taken >= n) return
  }
}

/** The session store, and the deletion of one user's sessions that the user store runs. */
export interface MemorySessions {
  readonly store: SessionStore["Type"]
  /** Delete every session of `userId` (but `keep`, an id hash) and the requests pending in them; how many. */
  readonly endSessionsOf: (userId: string, keep?: string) => number
  /** Whether a session with this id hash is stored. */
  readonly has: (idHash: string) => boolean
}

/**
 * What the session store holds. Each session map is in save order, and a save moves its entry
 * to the end, so the first entries are the least recently used; each session's pending requests
 * are in the order they were added. The characters of all pending queries are counted.
 */
interface Held {
  readonly anonymous: Map<string, SessionRecord>
  readonly signedIn: Map<string, SessionRecord>
  readonly pending: Map<string, Map<string, PendingRecord>>
  pendingBytes: number
  /** The back-channel logout store's: a session was deleted (in the same synchronous step). */
  readonly ended: (idHash: string) => void
}

const dropPending = (h: Held, sessionHash: string, txn: string): boolean => {
  const of = h.pending.get(sessionHash)
  const p = of?.get(txn)
  if (of === undefined || p === undefined) return false
  of.delete(txn)
  h.pendingBytes -= p.rawQuery.length
  if (of.size === 0) h.pending.delete(sessionHash)
  return true
}

const remove = (h: Held, idHash: string): void => {
  h.anonymous.delete(idHash)
  h.signedIn.delete(idHash)
  h.ended(idHash)
  for (const txn of [...(h.pending.get(idHash)?.keys() ?? [])]) dropPending(h, idHash, txn)
}

// Stored (again) at the end of its map: the most recently used
const put = (h: Held, session: SessionRecord): true => {
  h.anonymous.delete(session.idHash)
  h.signedIn.delete(session.idHash)
  ;(session.userId === null ? h.anonymous : h.signedIn).set(session.idHash, { ...session })
  return true
}

// Stored, then sessions beyond maxSessions evicted (Eviction.sessionsToEvict)
const save = (h: Held, limits: SessionLimits, session: SessionRecord): void => {
  put(h, session)
  const excess = Eviction.sessionExcess(h.anonymous.size + h.signedIn.size, limits)
  if (excess === 0) return
  // One more than needed: the session saved is among them when it is one of the oldest
  const anonymous = [...first(h.anonymous.keys(), excess + 1)]
  const needed = Eviction.signedInNeeded(excess, session, anonymous)
  const signedIn = needed > 0 ? [...first(h.signedIn.keys(), needed + 1)] : []
  for (const idHash of Eviction.sessionsToEvict(excess, session, { anonymous, signedIn })) remove(h, idHash)
}

// The oldest pending requests of an eviction pass, at most `limit`
const oldestPending = (h: Held, pass: Eviction.PendingPass, limit: number) => {
  const found: Array<Eviction.PendingCandidate> = []
  for (const [sessionHash, of] of h.pending) {
    if (pass === "anonymous" && h.signedIn.has(sessionHash)) continue
    for (const [txn, p] of of) {
      if (found.length >= limit) return found
      found.push({ sessionHash, txn, chars: p.rawQuery.length })
    }
  }
  return found
}

// Added at the end of its session; past maxPending the session's oldest go, past
// maxPendingBytes the store's (Eviction)
const addPending = (h: Held, limits: SessionLimits, p: PendingRecord): void => {
  dropPending(h, p.sessionHash, p.txn)
  const of = h.pending.get(p.sessionHash) ?? new Map<string, PendingRecord>()
  of.set(p.txn, { ...p })
  h.pending.set(p.sessionHash, of)
  h.pendingBytes += p.rawQuery.length
  for (const txn of Eviction.pendingToTrim([...of.keys()], limits)) dropPending(h, p.sessionHash, txn)
  let state = Eviction.startPendingEviction(h.pendingBytes, limits)
  while (state !== null) {
    const step = Eviction.stepPendingEviction(state, oldestPending(h, state.pass, Eviction.candidateBatch))
    for (const r of step.evict) dropPending(h, r.sessionHash, r.txn)
    state = step.next
  }
}

// At most `limit` expired sessions and at most `limit` expired requests, in map order
const purgeExpired = (h: Held, now: number, limit: number): number => {
  let n = 0
  for (const m of [h.anonymous, h.signedIn]) {
    for (const [id, s] of m) {
      if (n >= limit) break
      if (s.expiresAt <= now) {
        remove(h, id)
        n++
      }
    }
  }
  let p = 0
  for (const [sessionHash, of] of [...h.pending]) {
    for (const [txn, r] of [...of]) {
      if (p >= limit) break
      if (r.expiresAt <= now) {
        dropPending(h, sessionHash, txn)
        p++
      }
    }
  }
  return n + p
}

/** The order of `SessionStore.listOf`: the latest sign-in first, then the latest expiry. */
const latestFirst = (a: SessionRecord, b: SessionRecord): number =>
  (b.authenticatedAt ?? 0) - (a.authenticatedAt ?? 0) || b.expiresAt - a.expiresAt

/**
 * Sessions in this process's memory, bounded by `limits` whatever anonymous requests carry.
 * `userOf` reads the user store's users; `ended` is called for each session deleted.
 */
export const sessionStore = (
  limits: SessionLimits,
  userOf: (userId: string) => User | undefined,
  ended: (idHash: string) => void = () => {}
): MemorySessions => {
  const h: Held = { anonymous: new Map(), signedIn: new Map(), pending: new Map(), pendingBytes: 0, ended }
  const endSessionsOf = (userId: string, keep?: string): number => {
    let n = 0
    for (const [idHash, s] of [...h.signedIn]) {
      if (s.userId === userId && idHash !== keep) {
        remove(h, idHash)
        n++
      }
    }
    return n
  }
  const store: SessionStore["Type"] = {
    find: (idHash, now) =>
      Effect.sync(() => {
        const s = h.signedIn.get(idHash) ?? h.anonymous.get(idHash)
        return s !== undefined && s.expiresAt > now ? Option.some({ ...s }) : Option.none()
      }),
    renew: (session) =>
      Effect.sync(() =>
        h.anonymous.has(session.idHash) || h.signedIn.has(session.idHash) ? put(h, session) : false
      ),
    save: (session) => Effect.sync(() => save(h, limits, session)),
    // D16: the user is read in the same synchronous step that stores the session
    signIn: (session, checked) =>
      Effect.sync(() => {
        if (!stillAsChecked(checked, userOf(checked.userId))) return false
        save(h, limits, session)
        return true
      }),
    remove: (idHash) => Effect.sync(() => remove(h, idHash)),
    listOf: (userId, now) =>
      Effect.sync(() =>
        [...h.signedIn.values()]
          .filter((s) => s.userId === userId && s.expiresAt > now)
          .sort(latestFirst)
          .map((s) => ({ ...s }))
      ),
    endOf: (userId, idHash) =>
      Effect.sync(() => {
        if (h.signedIn.get(idHash)?.userId !== userId) return false
        remove(h, idHash)
        return true
      }),
    endOthersOf: (userId, keep) => Effect.sync(() => endSessionsOf(userId, keep)),
    addPending: (p) => Effect.sync(() => addPending(h, limits, p)),
    findPending: (sessionHash, txn, now) =>
      Effect.sync(() => {
        const p = h.pending.get(sessionHash)?.get(txn)
        return p !== undefined && p.expiresAt > now ? Option.some({ ...p }) : Option.none()
      }),
    takePending: (sessionHash, txn) => Effect.sync(() => dropPending(h, sessionHash, txn)),
    purgeExpired: (now, limit) => Effect.sync(() => purgeExpired(h, now, limit)),
    stats: () =>
      Effect.sync(() => ({ sessions: h.anonymous.size + h.signedIn.size, pendingBytes: h.pendingBytes }))
  }
  return { store, endSessionsOf, has: (idHash) => h.signedIn.has(idHash) || h.anonymous.has(idHash) }
}

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
  /** Delete every session of `userId` and the requests pending in them. */
  readonly endSessionsOf: (userId: string) => void
}

/**
 * Sessions in this process's memory. Each map is in save order, and a save moves
 * its entry to the end, so the first entries are the least recently used. The
 * characters of all pending queries are counted, so the store's size is bounded
 * by its limits whatever anonymous requests carry. `userOf` reads the user store's users.
 */
export const sessionStore = (
  limits: SessionLimits,
  userOf: (userId: string) => User | undefined
): MemorySessions => {
  const anonymous = new Map<string, SessionRecord>()
  const signedIn = new Map<string, SessionRecord>()
  const pending = new Map<string, Map<string, PendingRecord>>()
  let pendingBytes = 0
  const dropPending = (sessionHash: string, txn: string): boolean => {
    const of = pending.get(sessionHash)
    const p = of?.get(txn)
    if (of === undefined || p === undefined) return false
    of.delete(txn)
    pendingBytes -= p.rawQuery.length
    if (of.size === 0) pending.delete(sessionHash)
    return true
  }
  const dropAllPending = (sessionHash: string) => {
    for (const txn of [...(pending.get(sessionHash)?.keys() ?? [])]) dropPending(sessionHash, txn)
  }
  const remove = (idHash: string) => {
    anonymous.delete(idHash)
    signedIn.delete(idHash)
    dropAllPending(idHash)
  }
  // Stored (again) at the end of its map: the most recently used
  const put = (session: SessionRecord): true => {
    anonymous.delete(session.idHash)
    signedIn.delete(session.idHash)
    ;(session.userId === null ? anonymous : signedIn).set(session.idHash, { ...session })
    return true
  }
  // Stored, then sessions beyond maxSessions evicted (Eviction.sessionsToEvict)
  const save = (session: SessionRecord) => {
    put(session)
    const excess = Eviction.sessionExcess(anonymous.size + signedIn.size, limits)
    if (excess === 0) return
    const oldest = (m: Map<string, SessionRecord>) => [...first(m.keys(), excess + 1)]
    const others = { anonymous: oldest(anonymous), signedIn: oldest(signedIn) }
    for (const idHash of Eviction.sessionsToEvict(excess, session, others)) remove(idHash)
  }
  // The oldest pending requests of an eviction pass, at most `limit`
  const oldestPending = (pass: Eviction.PendingPass, limit: number) => {
    const found: Array<Eviction.PendingCandidate> = []
    for (const [sessionHash, of] of pending) {
      if (pass === "anonymous" && signedIn.has(sessionHash)) continue
      for (const [txn, p] of of) {
        if (found.length >= limit) return found
        found.push({ sessionHash, txn, chars: p.rawQuery.length })
      }
    }
    return found
  }
  // Past maxPending the session's oldest go, past maxPendingBytes the store's (Eviction)
  const evictPending = (of: Map<string, PendingRecord>, sessionHash: string) => {
    for (const txn of Eviction.pendingToTrim([...of.keys()], limits)) dropPending(sessionHash, txn)
    let state = Eviction.startPendingEviction(pendingBytes, limits)
    while (state !== null) {
      const step = Eviction.stepPendingEviction(state, oldestPending(state.pass, Eviction.candidateBatch))
      for (const p of step.evict) dropPending(p.sessionHash, p.txn)
      state = step.next
    }
  }
  const store: SessionStore["Type"] = {
    find: (idHash, now) =>
      Effect.sync(() => {
        const s = signedIn.get(idHash) ?? anonymous.get(idHash)
        return s !== undefined && s.expiresAt > now ? Option.some({ ...s }) : Option.none()
      }),
    renew: (session) =>
      Effect.sync(() =>
        anonymous.has(session.idHash) || signedIn.has(session.idHash) ? put(session) : false
      ),
    save: (session) => Effect.sync(() => save(session)),
    // D16: the user is read in the same synchronous step that stores the session
    signIn: (session, checked) =>
      Effect.sync(() => {
        if (!stillAsChecked(checked, userOf(checked.userId))) return false
        save(session)
        return true
      }),
    remove: (idHash) => Effect.sync(() => remove(idHash)),
    addPending: (p) =>
      Effect.sync(() => {
        dropPending(p.sessionHash, p.txn)
        const of = pending.get(p.sessionHash) ?? new Map<string, PendingRecord>()
        of.set(p.txn, { ...p })
        pending.set(p.sessionHash, of)
        pendingBytes += p.rawQuery.length
        evictPending(of, p.sessionHash)
      }),
    findPending: (sessionHash, txn, now) =>
      Effect.sync(() => {
        const p = pending.get(sessionHash)?.get(txn)
        return p !== undefined && p.expiresAt > now ? Option.some({ ...p }) : Option.none()
      }),
    takePending: (sessionHash, txn) => Effect.sync(() => dropPending(sessionHash, txn)),
    purgeExpired: (now, limit) =>
      Effect.sync(() => {
        let n = 0
        for (const m of [anonymous, signedIn]) {
          for (const [id, s] of m) {
            if (n >= limit) break
            if (s.expiresAt <= now) {
              remove(id)
              n++
            }
          }
        }
        let p = 0
        for (const [sessionHash, of] of [...pending]) {
          for (const [txn, r] of [...of]) {
            if (p >= limit) break
            if (r.expiresAt <= now) {
              dropPending(sessionHash, txn)
              p++
            }
          }
        }
        return n + p
      }),
    stats: () => Effect.sync(() => ({ sessions: anonymous.size + signedIn.size, pendingBytes }))
  }
  return {
    store,
    endSessionsOf: (userId) => {
      for (const [idHash, s] of [...signedIn]) if (s.userId === userId) remove(idHash)
    }
  }
}

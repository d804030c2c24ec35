/**
 * The memory store's sessions, apart from `storage/Memory.ts` so that its user store can end
 * a user's sessions in the same synchronous step as the change that ends them.
 */
import { Effect, Option } from "effect"
import type { User } from "../../model/User.js"
import {
  type PendingRecord,
  type SessionLimits,
  type SessionRecord,
  type SessionStore,
  stillAsChecked
} from "../SessionStore.js"

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
  // Stored, then sessions beyond maxSessions evicted: anonymous ones first
  const save = (session: SessionRecord) => {
    put(session)
    while (anonymous.size + signedIn.size > limits.maxSessions) {
      const pool = anonymous.size > 0 ? anonymous : signedIn
      const oldest = pool.keys().next().value
      if (oldest === undefined) break
      remove(oldest)
    }
  }
  // The oldest pending request, of a session nobody signed in to when there is one
  const oldestPending = (): readonly [string, string] | undefined => {
    let fallback: readonly [string, string] | undefined
    for (const [sessionHash, of] of pending) {
      const txn = of.keys().next().value
      if (txn === undefined) continue
      if (!signedIn.has(sessionHash)) return [sessionHash, txn]
      fallback ??= [sessionHash, txn]
    }
    return fallback
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
        while (of.size > limits.maxPending) {
          const oldest = of.keys().next().value
          if (oldest === undefined) break
          dropPending(p.sessionHash, oldest)
        }
        while (pendingBytes > limits.maxPendingBytes) {
          const oldest = oldestPending()
          if (oldest === undefined) break
          dropPending(oldest[0], oldest[1])
        }
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

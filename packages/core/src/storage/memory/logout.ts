/**
 * The memory store of back-channel logout: sessions' clients and the outbox. The session store
 * calls `ended` in the same synchronous step that deletes a session.
 */
import { Effect } from "effect"
import { type Delivery, type LogoutStore, maxClientsPerSession, type SessionClient } from "../LogoutStore.js"

/** A delivery with the claim that holds it, if any. */
interface Held extends Delivery {
  readonly claim: string | null
  readonly leaseUntil: number
}

/** What the logout store holds, and the move of an ended session's clients into the outbox. */
export interface MemoryLogout {
  /** Sessions' clients, by session id hash, then App Key. */
  readonly clients: Map<string, Map<string, SessionClient>>
  /** The outbox, by `sid` and App Key. */
  readonly deliveries: Map<string, Held>
  /** The session `idHash` was deleted: one delivery for each of its clients. */
  readonly ended: (idHash: string) => void
}

const keyOf = (d: { readonly sid: string; readonly appKey: string }): string => `${d.sid}\u0000${d.appKey}`

/** An empty logout state. */
export const logoutState = (): MemoryLogout => {
  const clients = new Map<string, Map<string, SessionClient>>()
  const deliveries = new Map<string, Held>()
  const ended = (idHash: string): void => {
    for (const c of clients.get(idHash)?.values() ?? []) {
      if (!deliveries.has(keyOf(c))) {
        deliveries.set(keyOf(c), { ...c, attempts: 0, nextAttemptAt: 0, claim: null, leaseUntil: 0 })
      }
    }
    clients.delete(idHash)
  }
  return { clients, deliveries, ended }
}

/** The logout store over `logout`; `stored` tells whether a session is stored. */
export const logoutStore = (
  logout: MemoryLogout,
  stored: (idHash: string) => boolean
): LogoutStore["Type"] => {
  const { clients, deliveries } = logout
  const held = (key: { readonly sid: string; readonly appKey: string }, claim: string) => {
    const d = deliveries.get(keyOf(key))
    return d !== undefined && d.claim === claim ? d : undefined
  }
  return {
    record: (sessionHash, client) =>
      Effect.sync(() => {
        if (!stored(sessionHash)) return
        const of = clients.get(sessionHash) ?? new Map<string, SessionClient>()
        if (of.has(client.appKey) || of.size >= maxClientsPerSession) return
        of.set(client.appKey, { ...client })
        clients.set(sessionHash, of)
      }),
    claim: (now, limit, leaseUntil, claim) =>
      Effect.sync(() => {
        const due = [...deliveries.values()]
          .filter((d) => d.nextAttemptAt <= now && d.leaseUntil <= now)
          .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
          .slice(0, limit)
        return due.map(({ claim: _c, leaseUntil: _l, ...d }) => {
          const attempts = d.attempts + 1
          deliveries.set(keyOf(d), { ...d, attempts, claim, leaseUntil })
          return { ...d, attempts }
        })
      }),
    finish: (key, claim) =>
      Effect.sync(() => held(key, claim) !== undefined && deliveries.delete(keyOf(key))),
    retry: (key, claim, at) =>
      Effect.sync(() => {
        const d = held(key, claim)
        if (d === undefined) return false
        deliveries.set(keyOf(key), { ...d, nextAttemptAt: at, claim: null, leaseUntil: 0 })
        return true
      }),
    pending: () => Effect.sync(() => deliveries.size)
  }
}

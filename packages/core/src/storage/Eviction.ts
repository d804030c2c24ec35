/**
 * What a session store evicts to stay within its `SessionLimits`: pure rules over the rows a
 * store reads, applied by every store (memory, SQLite, PostgreSQL), which reads the candidates
 * oldest first (in its own order of age) and deletes what these rules answer. A flood of
 * anonymous sessions or requests cannot sign anybody out or drop a signed-in user's requests:
 * what belongs to sessions nobody signed in to always goes first.
 */
import type { SessionLimits } from "./SessionStore.js"

/** How many sessions a store holds past `maxSessions` (0 when it is within it). */
export const sessionExcess = (count: number, limits: Pick<SessionLimits, "maxSessions">): number =>
  Math.max(0, count - limits.maxSessions)

/** The stored sessions other than the one just saved, by kind, each oldest first. */
export interface SessionCandidates {
  /** Id hashes of sessions nobody signed in to. */
  readonly anonymous: ReadonlyArray<string>
  /** Id hashes of signed-in sessions. */
  readonly signedIn: ReadonlyArray<string>
}

/**
 * The id hashes of the sessions to delete when the store holds `excess` sessions too many after
 * the session `saved` was inserted: the oldest anonymous sessions first, then `saved` itself if it
 * is anonymous, and signed-in sessions only when no anonymous one is left. `others` needs at most
 * the `excess` oldest of each kind.
 */
export const sessionsToEvict = (
  excess: number,
  saved: { readonly idHash: string; readonly userId: string | null },
  others: SessionCandidates
): ReadonlyArray<string> => {
  const order = [
    ...others.anonymous.filter((idHash) => idHash !== saved.idHash),
    ...(saved.userId === null ? [saved.idHash] : []),
    ...others.signedIn.filter((idHash) => idHash !== saved.idHash)
  ]
  return order.slice(0, Math.max(0, excess))
}

/**
 * How many signed-in sessions a store must read for `sessionsToEvict`, once it read `anonymous`
 * (the oldest anonymous sessions, at most `excess`): those that the anonymous ones and `saved`
 * itself, if it is anonymous, do not cover. None need reading (or locking) when they do.
 */
export const signedInNeeded = (
  excess: number,
  saved: { readonly idHash: string; readonly userId: string | null },
  anonymous: ReadonlyArray<string>
): number => {
  const others = anonymous.filter((idHash) => idHash !== saved.idHash).length
  return Math.max(0, excess - others - (saved.userId === null ? 1 : 0))
}

/**
 * The requests of one session to drop past `maxPending`, of `txns` (its requests, oldest first):
 * all but the newest `maxPending`.
 */
export const pendingToTrim = (
  txns: ReadonlyArray<string>,
  limits: Pick<SessionLimits, "maxPending">
): ReadonlyArray<string> => txns.slice(0, Math.max(0, txns.length - limits.maxPending))

/** A pending request as eviction sees it: its keys and the characters of its stored query. */
export interface PendingCandidate {
  readonly sessionHash: string
  readonly txn: string
  readonly chars: number
}

/**
 * Which pending requests a pass reads: first only those of sessions nobody signed in to (no session,
 * or one whose user is null), then all of them.
 */
export type PendingPass = "anonymous" | "all"

/** How many candidates a store reads at a time, so that one add evicting many does not read the whole table. */
export const candidateBatch = 16

/** Where an eviction of pending requests stands: the characters still too many, and the pass to read next. */
export interface PendingEviction {
  readonly excess: number
  readonly pass: PendingPass
}

/**
 * The start of the eviction of pending requests once they hold `pendingChars` characters in all,
 * or null when they are within `maxPendingBytes`.
 */
export const startPendingEviction = (
  pendingChars: number,
  limits: Pick<SessionLimits, "maxPendingBytes">
): PendingEviction | null => {
  const excess = pendingChars - limits.maxPendingBytes
  return excess > 0 ? { excess, pass: "anonymous" } : null
}

/**
 * One step of an eviction: of `batch` (at most `candidateBatch` requests the store read for
 * `state.pass`, oldest first), the requests to delete, and the next state (null: done). The
 * oldest go until the excess is gone; a batch shorter than `candidateBatch` ends its pass.
 */
export const stepPendingEviction = (
  state: PendingEviction,
  batch: ReadonlyArray<PendingCandidate>
): { readonly evict: ReadonlyArray<PendingCandidate>; readonly next: PendingEviction | null } => {
  const evict: Array<PendingCandidate> = []
  let excess = state.excess
  for (const candidate of batch) {
    if (excess <= 0) break
    evict.push(candidate)
    excess -= candidate.chars
  }
  if (excess <= 0) return { evict, next: null }
  if (batch.length >= candidateBatch) return { evict, next: { excess, pass: state.pass } }
  return { evict, next: state.pass === "anonymous" ? { excess, pass: "all" } : null }
}

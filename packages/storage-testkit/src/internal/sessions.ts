/**
 * Lookups the session cases share: whether sessions and pending requests are stored, looked up at a
 * time before any expiry the cases use unless `now` says otherwise.
 */
import { SessionStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import * as F from "../Fixtures.js"

/** The session store's tag. */
export const Sessions = SessionStore.SessionStore

/** Whether each session is stored (looked up at a time before any expiry the tests use). */
export const stored = (sessions: ReadonlyArray<SessionStore.SessionRecord>, now = F.baseTime) =>
  Effect.flatMap(Sessions, (s) =>
    Effect.forEach(sessions, (x) => Effect.map(s.find(x.idHash, now), Option.isSome))
  )

/** Whether the request is pending (looked up at a time before any expiry the tests use). */
export const isPending = (p: SessionStore.PendingRecord, now = F.baseTime) =>
  Effect.flatMap(Sessions, (s) => Effect.map(s.findPending(p.sessionHash, p.txn, now), Option.isSome))

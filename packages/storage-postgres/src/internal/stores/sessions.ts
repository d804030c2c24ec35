/**
 * The PostgreSQL store of sessions and pending requests. What it evicts past its limits is
 * decided by the core's `Eviction` rules; the statements read the candidates, oldest first, and
 * delete what the rules answer, under the session lock.
 */
import { Eviction, SessionStore, Tables } from "@latchkey/core"
import { Effect, Option } from "effect"
import type { Tx } from "../database.js"
import { attemptSync } from "../errors.js"
import { all, bound, changed, count, first, insertSql, params, purgeSql, selectFrom } from "../rows.js"
import { dropPendingOf, endSessionsOf, idHashes, type Over, sessionLock } from "./shared.js"

const updateSql =
  "UPDATE sessions SET user_id = $2, username = $3, authenticated_at = $4, expires_at = $5, sign_in_method = $6 WHERE id_hash = $1"

// The oldest sessions are those whose lifetime ends first; seq breaks ties. Locked, as a delete would.
const oldestSql = (signedIn: boolean) => `SELECT id_hash FROM sessions
  WHERE user_id IS ${signedIn ? "NOT " : ""}NULL AND id_hash <> $1 ORDER BY expires_at, seq LIMIT $2 FOR UPDATE`

const candidates = "SELECT session_hash, txn, length(raw_query) AS chars FROM pending_authorizations AS p"
// The oldest requests; in the first pass only of sessions nobody signed in to (no session, or user_id NULL).
const oldestPendingSql: Record<Eviction.PendingPass, string> = {
  anonymous: `${candidates} WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id_hash = p.session_hash
    AND user_id IS NOT NULL) ORDER BY created_at, seq, session_hash, txn LIMIT $1`,
  all: `${candidates} ORDER BY created_at, seq, session_hash, txn LIMIT $1`
}

// A txn added again moves to the end of its session (a new seq), as in the memory store.
const addPendingSql = `${insertSql(Tables.pending)} ON CONFLICT (session_hash, txn) DO UPDATE SET seq = excluded.seq,
  raw_query = excluded.raw_query, csrf_hash = excluded.csrf_hash, step = excluded.step,
  created_at = excluded.created_at, expires_at = excluded.expires_at`

// Past maxPendingBytes the oldest go, those of anonymous sessions first, read a batch at a time.
const evictPending = (tx: Tx, limits: SessionStore.SessionLimits) =>
  Effect.gen(function* () {
    const total = yield* tx.query("SELECT chars FROM pending_totals WHERE id = 1")
    let state = Eviction.startPendingEviction(yield* attemptSync(() => count(total.rows[0]?.chars)), limits)
    while (state !== null) {
      const found = yield* tx.query(oldestPendingSql[state.pass], [Eviction.candidateBatch])
      const batch = yield* attemptSync(() =>
        found.rows.map((row) => ({
          sessionHash: String(row.session_hash),
          txn: String(row.txn),
          chars: count(row.chars)
        }))
      )
      const step = Eviction.stepPendingEviction(state, batch)
      for (const r of step.evict) {
        yield* tx.query("DELETE FROM pending_authorizations WHERE session_hash = $1 AND txn = $2", [
          r.sessionHash,
          r.txn
        ])
      }
      state = step.next
    }
  })

// Past maxSessions: Eviction.sessionsToEvict over the oldest of each kind.
const insertSession = (tx: Tx, s: SessionStore.SessionRecord, limits: SessionStore.SessionLimits) =>
  Effect.gen(function* () {
    if (changed(yield* tx.query(updateSql, params(Tables.sessions, s))) > 0) return
    yield* tx.query(insertSql(Tables.sessions), params(Tables.sessions, s))
    const counted = yield* tx.query("SELECT count(*) AS n FROM sessions")
    const excess = Eviction.sessionExcess(yield* attemptSync(() => count(counted.rows[0]?.n)), limits)
    if (excess === 0) return
    const oldest = (signedIn: boolean, n: number) =>
      Effect.map(tx.query(oldestSql(signedIn), [s.idHash, n]), idHashes)
    const anonymous = yield* oldest(false, excess)
    const needed = Eviction.signedInNeeded(excess, s, anonymous)
    const others = { anonymous, signedIn: needed > 0 ? yield* oldest(true, needed) : [] }
    const evicted = Eviction.sessionsToEvict(excess, s, others)
    yield* tx.query("DELETE FROM sessions WHERE id_hash = ANY($1::text[])", [evicted])
    yield* dropPendingOf(tx, evicted)
  })

// D16 (docs/security.md): the user's row locked FOR SHARE first, as token writes lock it (lockUsers):
// a disable, delete or new password (each changes that row first) either committed before, and the
// lock reads the row as it left it, or waits for this write to commit and then ends its session.
const signIn = (
  tx: Tx,
  s: SessionStore.SessionRecord,
  checked: SessionStore.SignedInAs,
  limits: SessionStore.SessionLimits
) =>
  Effect.gen(function* () {
    const found = yield* tx.query(selectFrom(Tables.users, "WHERE user_id = $1 FOR SHARE"), [checked.userId])
    const user = yield* first(Tables.users, found.rows)
    if (!SessionStore.stillAsChecked(checked, Option.getOrUndefined(user))) return false
    yield* insertSession(tx, s, limits)
    return true
  })

// Past maxPending the session's oldest go, past maxPendingBytes the store's (Eviction).
const addPending = (tx: Tx, p: SessionStore.PendingRecord, limits: SessionStore.SessionLimits) =>
  Effect.gen(function* () {
    yield* tx.query(addPendingSql, params(Tables.pending, p))
    const of = yield* tx.query(
      "SELECT txn FROM pending_authorizations WHERE session_hash = $1 ORDER BY created_at, seq",
      [p.sessionHash]
    )
    const trim = Eviction.pendingToTrim(
      of.rows.map((row) => String(row.txn)),
      limits
    )
    if (trim.length > 0) {
      yield* tx.query(
        "DELETE FROM pending_authorizations WHERE session_hash = $1 AND txn = ANY($2::text[])",
        [p.sessionHash, trim]
      )
    }
    yield* evictPending(tx, limits)
  })

const purge = (tx: Tx, now: number, limit: number) =>
  Effect.gen(function* () {
    const sessions = yield* tx.query(`${purgeSql("sessions", ["id_hash"])} RETURNING id_hash`, [
      now,
      bound(limit)
    ])
    const n = yield* dropPendingOf(tx, idHashes(sessions))
    const pending = yield* tx.query(purgeSql("pending_authorizations", ["session_hash", "txn"]), [
      now,
      bound(limit)
    ])
    return n + changed(pending)
  })

// sessions_by_user: the user's live sessions, the latest sign-in first
const listOf = (db: Over["db"], userId: string, now: number) =>
  Effect.flatMap(
    db.lookup(
      selectFrom(
        Tables.sessions,
        "WHERE user_id = $1 AND expires_at > $2 ORDER BY authenticated_at DESC, expires_at DESC, seq DESC"
      ),
      [userId, now]
    ),
    (r) => all(Tables.sessions, r.rows)
  )

// The session's row deleted only if it is the user's, its pending requests with it
const endOf = (tx: Tx, userId: string, idHash: string) =>
  Effect.flatMap(
    tx.query("DELETE FROM sessions WHERE id_hash = $1 AND user_id = $2 RETURNING id_hash", [idHash, userId]),
    (r) => Effect.map(dropPendingOf(tx, idHashes(r)), (n) => n > 0)
  )

/** Sessions and pending requests in their tables, bounded by `limits`. */
export const sessionStore = ({ db, limits }: Over): SessionStore.SessionStore["Type"] => {
  const renew = (s: SessionStore.SessionRecord) => db.write(updateSql, params(Tables.sessions, s))
  return {
    find: (idHash, now) =>
      Effect.flatMap(
        db.lookup(selectFrom(Tables.sessions, "WHERE id_hash = $1 AND expires_at > $2"), [idHash, now]),
        (r) => first(Tables.sessions, r.rows)
      ),
    // Saving a stored session (its sliding expiry, on every request) is one UPDATE that
    // takes no lock; only a new session, which may evict others, runs under the session lock.
    save: (s) =>
      Effect.flatMap(db.eventsAttached, (withEvents) =>
        withEvents
          ? db.transaction((tx) => insertSession(tx, s, limits), { locks: sessionLock })
          : Effect.flatMap(renew(s), (r) =>
              changed(r) > 0
                ? Effect.void
                : db.transaction((tx) => insertSession(tx, s, limits), { locks: sessionLock })
            )
      ),
    signIn: (s, checked) => db.transaction((tx) => signIn(tx, s, checked, limits), { locks: sessionLock }),
    // One conditional update: a session deleted since it was read stays deleted.
    renew: (s) => Effect.map(renew(s), (r) => changed(r) > 0),
    remove: (idHash) =>
      db.transaction((tx) =>
        Effect.zipRight(
          tx.query("DELETE FROM sessions WHERE id_hash = $1", [idHash]),
          Effect.asVoid(dropPendingOf(tx, [idHash]))
        )
      ),
    listOf: (userId, now) => listOf(db, userId, now),
    endOf: (userId, idHash) => db.transaction((tx) => endOf(tx, userId, idHash)),
    endOthersOf: (userId, keep) => db.transaction((tx) => endSessionsOf(tx, userId, keep)),
    addPending: (p) => db.transaction((tx) => addPending(tx, p, limits), { locks: sessionLock }),
    findPending: (sessionHash, txn, now) =>
      Effect.flatMap(
        db.lookup(selectFrom(Tables.pending, "WHERE session_hash = $1 AND txn = $2 AND expires_at > $3"), [
          sessionHash,
          txn,
          now
        ]),
        (r) => first(Tables.pending, r.rows)
      ),
    // One conditional delete: of any number of racing callers, in any instance, one deletes the row.
    takePending: (sessionHash, txn) =>
      Effect.map(
        db.write("DELETE FROM pending_authorizations WHERE session_hash = $1 AND txn = $2", [
          sessionHash,
          txn
        ]),
        (r) => changed(r) === 1
      ),
    purgeExpired: (now, limit) => db.transaction((tx) => purge(tx, now, limit)),
    // One statement: the count and the total are of the same snapshot.
    stats: () =>
      Effect.flatMap(
        db.query(`SELECT (SELECT count(*) FROM sessions) AS sessions,
          (SELECT chars FROM pending_totals WHERE id = 1) AS "pendingBytes"`),
        (r) =>
          attemptSync(() => ({
            sessions: count(r.rows[0]?.sessions),
            pendingBytes: count(r.rows[0]?.pendingBytes)
          }))
      )
  }
}

/**
 * The SQLite store of sessions and pending requests. What it evicts past its limits is decided
 * by the core's `Eviction` rules; the statements read the candidates, oldest first, and delete
 * what the rules answer.
 */
import { Eviction, SessionStore, Tables } from "@latchkey/core"
import { Option } from "effect"
import { attempt } from "../database.js"
import { all, bound, insertSql, optional, params, purgeSql, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

// The oldest sessions are those whose sliding lifetime ends first; the rowid breaks ties.
const oldestSessions = (signedIn: boolean) => `SELECT id_hash FROM sessions
  WHERE user_id IS ${signedIn ? "NOT " : ""}NULL AND id_hash <> ? ORDER BY expires_at, rowid LIMIT ?`

const candidates =
  "SELECT session_hash AS sessionHash, txn, length(raw_query) AS chars FROM pending_authorizations"

const prepare = ({ db }: Over) => ({
  find: db.prepare(selectFrom(Tables.sessions, "WHERE id_hash = ? AND expires_at > ?")),
  // An update keeps the row (and its rowid); only an insert can take the store past maxSessions.
  update: db.prepare(
    "UPDATE sessions SET user_id = @userId, username = @username, authenticated_at = @authenticatedAt, expires_at = @expiresAt, sign_in_method = @method WHERE id_hash = @idHash"
  ),
  insert: db.prepare(insertSql(Tables.sessions)),
  count: db.prepare("SELECT count(*) FROM sessions").pluck(),
  oldestAnonymous: db.prepare(oldestSessions(false)).pluck(),
  oldestSignedIn: db.prepare(oldestSessions(true)).pluck(),
  remove: db.prepare("DELETE FROM sessions WHERE id_hash = ?"),
  // sessions_by_user (migration 10)
  listOf: db.prepare(
    selectFrom(
      Tables.sessions,
      "WHERE user_id = ? AND expires_at > ? ORDER BY authenticated_at DESC, expires_at DESC, rowid DESC"
    )
  ),
  removeOf: db.prepare("DELETE FROM sessions WHERE id_hash = ? AND user_id = ?"),
  purge: db.prepare(`${purgeSql("sessions")} RETURNING id_hash`).pluck(),
  // A txn added again moves to the end of its session (a new seq), as in the memory store.
  addPending:
    db.prepare(`INSERT INTO pending_authorizations (session_hash, txn, seq, raw_query, csrf_hash, step,
    created_at, expires_at) VALUES (@sessionHash, @txn,
      (SELECT coalesce(max(seq), 0) + 1 FROM pending_authorizations WHERE session_hash = @sessionHash),
      @rawQuery, @csrfHash, @step, @createdAt, @expiresAt)
    ON CONFLICT (session_hash, txn) DO UPDATE SET seq = excluded.seq, raw_query = excluded.raw_query,
      csrf_hash = excluded.csrf_hash, step = excluded.step, created_at = excluded.created_at,
      expires_at = excluded.expires_at`),
  pendingOf: db
    .prepare("SELECT txn FROM pending_authorizations WHERE session_hash = ? ORDER BY created_at, seq")
    .pluck(),
  findPending: db.prepare(
    selectFrom(Tables.pending, "WHERE session_hash = ? AND txn = ? AND expires_at > ?")
  ),
  takePending: db.prepare("DELETE FROM pending_authorizations WHERE session_hash = ? AND txn = ?"),
  // Kept by the triggers of migration 4.
  pendingChars: db.prepare("SELECT chars FROM pending_totals WHERE id = 1").pluck(),
  // The oldest requests (pending_authorizations_by_created_at) of sessions nobody signed in to:
  // no session row, or one whose user_id is NULL.
  oldestPending: {
    anonymous: db.prepare(`${candidates} AS p WHERE NOT EXISTS (SELECT 1 FROM sessions
      WHERE id_hash = p.session_hash AND user_id IS NOT NULL)
      ORDER BY created_at, seq, session_hash, txn LIMIT ?`),
    all: db.prepare(`${candidates} ORDER BY created_at, seq, session_hash, txn LIMIT ?`)
  },
  stats: db.prepare(`SELECT (SELECT count(*) FROM sessions) AS sessions,
    (SELECT chars FROM pending_totals WHERE id = 1) AS pendingBytes`),
  purgePending: db.prepare(`DELETE FROM pending_authorizations WHERE (session_hash, txn) IN
    (SELECT session_hash, txn FROM pending_authorizations WHERE expires_at <= ? LIMIT ?)`)
})

/** Sessions and pending requests in their tables, bounded by `limits`. */
export const sessionStore = (over: Over): SessionStore.SessionStore["Type"] => {
  const { db, write, shared, limits } = over
  const q = prepare(over)
  const renew = (s: SessionStore.SessionRecord): boolean =>
    q.update.run({ ...s, method: s.method ?? null }).changes > 0
  const tx = {
    // Past maxSessions: Eviction.sessionsToEvict over the oldest of each kind.
    save: db.transaction((s: SessionStore.SessionRecord): void => {
      if (renew(s)) return
      q.insert.run(params(Tables.sessions, s))
      const excess = Eviction.sessionExcess(q.count.get() as number, limits)
      if (excess === 0) return
      const anonymous = q.oldestAnonymous.all(s.idHash, excess) as Array<string>
      const needed = Eviction.signedInNeeded(excess, s, anonymous)
      const signedIn = needed > 0 ? (q.oldestSignedIn.all(s.idHash, needed) as Array<string>) : []
      const evicted = Eviction.sessionsToEvict(excess, s, { anonymous, signedIn })
      for (const idHash of evicted) q.remove.run(idHash)
      shared.dropPendingOf(evicted)
    }),
    // D16 (docs/security.md): the user is read in the transaction (one writer) that stores the
    // session, so a disable, delete or new password either committed before it or ends the session.
    signIn: db.transaction((s: SessionStore.SessionRecord, checked: SessionStore.SignedInAs): boolean => {
      const user = Option.getOrUndefined(shared.findUser(checked.userId))
      if (!SessionStore.stillAsChecked(checked, user)) return false
      tx.save(s)
      return true
    }),
    remove: db.transaction((idHash: string): void => {
      q.remove.run(idHash)
      shared.dropPendingOf([idHash])
    }),
    endOf: db.transaction((userId: string, idHash: string): boolean => {
      if (q.removeOf.run(idHash, userId).changes === 0) return false
      shared.dropPendingOf([idHash])
      return true
    }),
    // Past maxPending the session's oldest go, past maxPendingBytes the store's (Eviction).
    addPending: db.transaction((p: SessionStore.PendingRecord): void => {
      q.addPending.run(p)
      const txns = q.pendingOf.all(p.sessionHash) as Array<string>
      for (const txn of Eviction.pendingToTrim(txns, limits)) q.takePending.run(p.sessionHash, txn)
      let state = Eviction.startPendingEviction(q.pendingChars.get() as number, limits)
      while (state !== null) {
        const batch = q.oldestPending[state.pass].all(
          Eviction.candidateBatch
        ) as Array<Eviction.PendingCandidate>
        const step = Eviction.stepPendingEviction(state, batch)
        for (const r of step.evict) q.takePending.run(r.sessionHash, r.txn)
        state = step.next
      }
    }),
    purge: db.transaction((now: number, limit: number): number => {
      const sessions = shared.dropPendingOf(q.purge.all(now, bound(limit)) as Array<string>)
      return sessions + q.purgePending.run(now, bound(limit)).changes
    })
  }
  return {
    find: (idHash, now) => attempt(() => optional(Tables.sessions, q.find.get(idHash, now))),
    save: (session) => write(() => tx.save(session)),
    signIn: (session, checked) => write(() => tx.signIn(session, checked)),
    // One conditional update: a session deleted since it was read stays deleted.
    renew: (s) => write(() => renew(s)),
    remove: (idHash) => write(() => tx.remove(idHash)),
    listOf: (userId, now) => attempt(() => all(Tables.sessions, q.listOf.all(userId, now))),
    endOf: (userId, idHash) => write(() => tx.endOf(userId, idHash)),
    endOthersOf: (userId, keep) => write(() => shared.endSessionsOf(userId, keep)),
    addPending: (pending) => write(() => tx.addPending(pending)),
    findPending: (sessionHash, txn, now) =>
      attempt(() => optional(Tables.pending, q.findPending.get(sessionHash, txn, now))),
    // One conditional delete: of any number of racing callers, one sees changes === 1.
    takePending: (sessionHash, txn) => write(() => q.takePending.run(sessionHash, txn).changes === 1),
    purgeExpired: (now, limit) => write(() => tx.purge(now, limit)),
    // One statement: the count and the total are of the same snapshot.
    stats: () =>
      attempt(() => {
        const row = q.stats.get() as { sessions: number; pendingBytes: number }
        return { sessions: row.sessions, pendingBytes: row.pendingBytes }
      })
  }
}

/**
 * The SQLite store of back-channel logout (migration 16): sessions' clients, and the outbox the
 * session writes fill (`shared.dropPendingOf`) in the transaction that deletes a session.
 */
import { LogoutStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, bound } from "../rows.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  // Only while the session is stored, at most maxClientsPerSession a session
  record: db.prepare(`INSERT INTO session_clients (session_hash, app_key, user_id, sub, sid)
    SELECT @sessionHash, @appKey, @userId, @sub, @sid
    WHERE EXISTS (SELECT 1 FROM sessions WHERE id_hash = @sessionHash)
      AND (SELECT count(*) FROM session_clients WHERE session_hash = @sessionHash) < @max
    ON CONFLICT (session_hash, app_key) DO NOTHING`),
  // One statement (one writer): a row under a live lease is never claimed twice
  claim: db.prepare(`UPDATE logout_deliveries SET attempts = attempts + 1, claim = @claim,
    lease_until = @leaseUntil WHERE (sid, app_key) IN (SELECT sid, app_key FROM logout_deliveries
      WHERE next_attempt_at <= @now AND lease_until <= @now ORDER BY next_attempt_at LIMIT @limit)
    RETURNING ${Tables.selectList(Tables.logoutDeliveries)}`),
  finish: db.prepare("DELETE FROM logout_deliveries WHERE sid = ? AND app_key = ? AND claim = ?"),
  retry: db.prepare(`UPDATE logout_deliveries SET next_attempt_at = ?, claim = NULL, lease_until = 0
    WHERE sid = ? AND app_key = ? AND claim = ?`),
  pending: db.prepare("SELECT count(*) FROM logout_deliveries").pluck()
})

/** Sessions' clients and the outbox of logout tokens in their tables. */
export const logoutStore = (over: Over): LogoutStore.LogoutStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    record: (sessionHash, c) =>
      write(() => {
        q.record.run({ ...c, sessionHash, max: LogoutStore.maxClientsPerSession })
      }),
    claim: (now, limit, leaseUntil, claim) =>
      write(() => all(Tables.logoutDeliveries, q.claim.all({ now, limit: bound(limit), leaseUntil, claim }))),
    finish: (key, claim) => write(() => q.finish.run(key.sid, key.appKey, claim).changes === 1),
    retry: (key, claim, at) => write(() => q.retry.run(at, key.sid, key.appKey, claim).changes === 1),
    pending: () => attempt(() => q.pending.get() as number)
  }
}

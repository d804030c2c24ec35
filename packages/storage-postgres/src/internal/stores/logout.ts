/**
 * The PostgreSQL store of back-channel logout (migration 9): sessions' clients, and the outbox the
 * session writes fill (`dropPendingOf`) in the transaction that deletes a session.
 */
import { LogoutStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, bound, changed, count } from "../rows.js"
import type { Over } from "./shared.js"

// The session's row locked first: a delete of the session either committed before (nothing is
// recorded) or waits for this write and then moves what it recorded; records of one session queue.
const recordSql = `INSERT INTO session_clients (session_hash, app_key, user_id, sub, sid)
  SELECT $1, $2, $3, $4, $5
  WHERE (SELECT count(*) FROM session_clients WHERE session_hash = $1) < $6
  ON CONFLICT (session_hash, app_key) DO NOTHING`

// SKIP LOCKED: instances claiming at once take different rows; the outer WHERE is checked again
// on the row as another claim left it (READ COMMITTED), so a live lease is never claimed twice
const claimSql = `UPDATE logout_deliveries SET attempts = attempts + 1, claim = $4, lease_until = $3
  WHERE (sid, app_key) IN (SELECT sid, app_key FROM logout_deliveries
    WHERE next_attempt_at <= $1 AND lease_until <= $1 ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
  AND next_attempt_at <= $1 AND lease_until <= $1
  RETURNING ${Tables.selectList(Tables.logoutDeliveries)}`

/** Sessions' clients and the outbox of logout tokens in their tables. */
export const logoutStore = ({ db }: Over): LogoutStore.LogoutStore["Type"] => ({
  record: (sessionHash, c) =>
    db.transaction((tx) =>
      Effect.flatMap(
        tx.query("SELECT 1 FROM sessions WHERE id_hash = $1 FOR UPDATE", [sessionHash]),
        (found) =>
          found.rows.length === 0
            ? Effect.void
            : Effect.asVoid(
                tx.query(recordSql, [
                  sessionHash,
                  c.appKey,
                  c.userId,
                  c.sub,
                  c.sid,
                  LogoutStore.maxClientsPerSession
                ])
              )
      )
    ),
  claim: (now, limit, leaseUntil, claim) =>
    Effect.flatMap(db.write(claimSql, [now, bound(limit), leaseUntil, claim]), (r) =>
      all(Tables.logoutDeliveries, r.rows)
    ),
  finish: (key, claim) =>
    Effect.map(
      db.write("DELETE FROM logout_deliveries WHERE sid = $1 AND app_key = $2 AND claim = $3", [
        key.sid,
        key.appKey,
        claim
      ]),
      (r) => changed(r) === 1
    ),
  retry: (key, claim, at) =>
    Effect.map(
      db.write(
        `UPDATE logout_deliveries SET next_attempt_at = $1, claim = NULL, lease_until = 0
          WHERE sid = $2 AND app_key = $3 AND claim = $4`,
        [at, key.sid, key.appKey, claim]
      ),
      (r) => changed(r) === 1
    ),
  pending: () =>
    Effect.flatMap(db.query("SELECT count(*) AS n FROM logout_deliveries"), (r) =>
      Effect.sync(() => count(r.rows[0]?.n))
    )
})

/**
 * What the stores of one pool are built over, and the writes several of them share: ending a
 * user's sessions with the requests pending in them (users, sessions). Token writes are in
 * `tokenWrites.ts`.
 */
import type { SessionStore, StorageError, Tables } from "@latchkey/core"
import { Effect } from "effect"
import type { Database, Tx } from "../database.js"
import { changed, insertSql, params } from "../rows.js"

/** The pool and the session store's bounds. */
export interface Over {
  readonly db: Database
  readonly limits: SessionStore.SessionLimits
}

/** The advisory lock every session write that may evict holds (see Database.TransactionOptions.locks). */
export const sessionLock = ["sessions"]

/** The id hashes a `... RETURNING id_hash` answered. */
export const idHashes = (r: {
  readonly rows: ReadonlyArray<Record<string, unknown>>
}): ReadonlyArray<string> => r.rows.map((row) => String(row.id_hash))

// Back-channel logout (migration 9): an ended session's clients become its deliveries, one statement
const oweSql = `WITH ended AS (DELETE FROM session_clients WHERE session_hash = ANY($1::text[])
    RETURNING sid, app_key, user_id, sub)
  INSERT INTO logout_deliveries (sid, app_key, user_id, sub, attempts, next_attempt_at)
  SELECT sid, app_key, user_id, sub, 0, 0 FROM ended ON CONFLICT (sid, app_key) DO NOTHING`

/**
 * Requests pending in deleted sessions go in the same transaction (there is no foreign key), and
 * their back-channel logout clients become deliveries (LogoutStore); how many sessions.
 */
export const dropPendingOf = (tx: Tx, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(0)
    : Effect.as(
        Effect.zipRight(
          tx.query("DELETE FROM pending_authorizations WHERE session_hash = ANY($1::text[])", [ids]),
          tx.query(oweSql, [ids])
        ),
        ids.length
      )

/**
 * Every session of the user (but `keep`, an id hash) goes, with the requests pending in them
 * (sessions_by_user); how many.
 */
export const endSessionsOf = (tx: Tx, userId: string, keep = "") =>
  Effect.flatMap(
    tx.query("DELETE FROM sessions WHERE user_id = $1 AND id_hash <> $2 RETURNING id_hash", [userId, keep]),
    (r) => dropPendingOf(tx, idHashes(r))
  )

/** Revoke the active tokens of one user (in a transaction that disables or removes the user). */
export const revokeUserSql = "UPDATE tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL"

/**
 * Insert `record` into `t` unless a row holds its unique key `conflict` already: then nothing is
 * written and it fails with `taken()`.
 */
export const insertNew = <A, E>(
  db: Database,
  t: Tables.Table<A>,
  conflict: string,
  record: A,
  taken: () => E
): Effect.Effect<void, E | StorageError.StorageError> =>
  Effect.flatMap(db.write(`${insertSql(t)} ON CONFLICT (${conflict}) DO NOTHING`, params(t, record)), (r) =>
    changed(r) === 1 ? Effect.void : Effect.fail(taken())
  )

/**
 * What the stores of one database are built over, and the writes several of them share: a token
 * write's checks and insert (codes and tokens), and the revocations and session ends of a user
 * (users, consents). Each runs inside the writer's transaction.
 */
import {
  ConsentStore,
  type Scope,
  type SessionStore,
  type StorageError,
  Tables,
  type Token,
  UserStore
} from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import { insertSql, optional, params, selectFrom, tokenParams } from "../rows.js"
import { refuse, type Writer } from "../writer.js"

/** The database, its writer, the shared writes every store may use, and the session bounds. */
export interface Over {
  readonly db: BetterSqlite3.Database
  readonly write: Writer["write"]
  readonly shared: Shared
  /** The bounds the session store keeps. */
  readonly limits: SessionStore.SessionLimits
}

/**
 * Insert `record` into `t` with `statement` (an insert of `t` ending ON CONFLICT DO NOTHING); when
 * a row held its unique key already, nothing is written and it fails with `taken()`.
 */
export const insertNew = <A, E>(
  over: Over,
  statement: BetterSqlite3.Statement,
  t: Tables.Table<A>,
  record: A,
  taken: () => E
): Effect.Effect<void, E | StorageError.StorageError> =>
  Effect.flatMap(
    over.write(() => statement.run(params(t, record)).changes),
    (changes) => (changes === 1 ? Effect.void : Effect.fail(taken()))
  )

/** The writes several stores share. */
export type Shared = ReturnType<typeof sharedWrites>

// The statements of the shared writes
const statements = (db: BetterSqlite3.Database) => ({
  findUser: db.prepare(selectFrom(Tables.users, "WHERE user_id = ?")),
  userActive: db.prepare("SELECT 1 FROM users WHERE user_id = ? AND disabled_at IS NULL").pluck(),
  findConsent: db.prepare("SELECT scope FROM consents WHERE user_id = ? AND app_key = ?").pluck(),
  insertToken: db.prepare(insertSql(Tables.tokens)),
  // A token set (an access token and its refresh token): one statement, not two
  insertTokenPair: db.prepare(insertSql(Tables.tokens, 2)),
  revokeByAppUser: db.prepare(
    "UPDATE tokens SET revoked_at = ? WHERE app_key = ? AND user_id = ? AND revoked_at IS NULL"
  ),
  revokeByUser: db.prepare("UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL"),
  // A code is retired by deleting it: redeemed later, it is unknown (nothing issued, nothing revoked).
  retireCodesOfUser: db.prepare("DELETE FROM authorization_codes WHERE user_id = ? AND used_at IS NULL"),
  // sessions_by_user (migration 10)
  deleteSessionsOfUser: db
    .prepare("DELETE FROM sessions WHERE user_id = ? AND id_hash <> ? RETURNING id_hash")
    .pluck(),
  deletePendingOf: db.prepare("DELETE FROM pending_authorizations WHERE session_hash = ?"),
  // Back-channel logout (migration 16): an ended session's clients become its deliveries
  owe: db.prepare(`INSERT INTO logout_deliveries (sid, app_key, user_id, sub, attempts, next_attempt_at)
      SELECT sid, app_key, user_id, sub, 0, 0 FROM session_clients WHERE session_hash = ?
      ON CONFLICT (sid, app_key) DO NOTHING`),
  deleteClientsOf: db.prepare("DELETE FROM session_clients WHERE session_hash = ?")
})

/** Prepare the shared statements over `db`. */
export const sharedWrites = (db: BetterSqlite3.Database) => {
  const q = statements(db)

  /** The scopes a user consented to for an application, if any. */
  const findConsent = (userId: string, appKey: string): Scope.ScopeSet | undefined => {
    const found = q.findConsent.get(userId, appKey) as string | undefined
    return found === undefined ? undefined : Tables.scopeOf(found)
  }

  /**
   * D13 (docs/security.md): read inside the write's BEGIN IMMEDIATE transaction, so a disable or
   * delete either committed before (and refuses the write) or runs after it (and revokes its tokens).
   * D15: the consent a code or implicit token is issued under, read in the same transaction, so a
   * withdrawal either committed before (and refuses the write) or runs after it (and revokes it).
   */
  const insertTokens = (tokens: ReadonlyArray<Token.Token>, under?: ConsentStore.Under): void => {
    const refused =
      UserStore.refusal(tokens, (userId) => q.userActive.get(userId) !== undefined) ??
      (under === undefined ? undefined : ConsentStore.refusal(under, findConsent(under.userId, under.appKey)))
    if (refused !== undefined) refuse(refused)
    const [first, second] = tokens
    if (tokens.length === 2 && first !== undefined && second !== undefined)
      q.insertTokenPair.run([...tokenParams(first), ...tokenParams(second)])
    else for (const t of tokens) q.insertToken.run(tokenParams(t))
  }

  /**
   * Requests pending in deleted sessions go in the same transaction (there is no foreign key, see
   * migration 3), and their back-channel logout clients become deliveries (LogoutStore).
   */
  const dropPendingOf = (idHashes: ReadonlyArray<string>): number => {
    for (const idHash of idHashes) {
      q.deletePendingOf.run(idHash)
      q.owe.run(idHash)
      q.deleteClientsOf.run(idHash)
    }
    return idHashes.length
  }

  /** A disabled or removed user's tokens are revoked, and unused codes retired, in its transaction. */
  const revokeUser = (userId: string, now: number): void => {
    q.revokeByUser.run(now, userId)
    q.retireCodesOfUser.run(userId)
  }

  return {
    findConsent,
    /** The user with this id, if any. */
    findUser: (userId: string) => optional(Tables.users, q.findUser.get(userId)),
    /** Revoke the active tokens of one user issued to one application; how many. */
    revokeAppUser: (appKey: string, userId: string, now: number): number =>
      q.revokeByAppUser.run(now, appKey, userId).changes,
    insertTokens,
    dropPendingOf,
    revokeUser,
    /** Every session of the user (but `keep`, an id hash) goes, with the requests pending in them; how many. */
    endSessionsOf: (userId: string, keep = ""): number =>
      dropPendingOf(q.deleteSessionsOfUser.all(userId, keep) as Array<string>)
  }
}

/**
 * Token writes: inserting a token set, locking the users it names (D13, docs/security.md) and
 * reading the consent it is issued under (D15) in the transaction of the write.
 */
import { ConsentStore, type StorageError, Tables, type Token, UserStore } from "@latchkey/core"
import { Effect } from "effect"
import type { Tx } from "./database.js"
import { attemptSync } from "./errors.js"
import { insertSql, tokenParams } from "./rows.js"

/** The statement inserting `n` tokens, with `tokenParams` of each in order. */
export const insertTokensSql = (n: number): string => insertSql(Tables.tokens, n)
export { tokenParams }

/**
 * Insert `tokens` with one statement of `tx` that also carries the transaction's audit events
 * (`Tx.writeWithEvents`): the last write of a transaction, so the events need no statement of
 * their own. Nothing when there are no tokens.
 */
export const insertTokens = (
  tx: Tx,
  tokens: ReadonlyArray<Token.Token>
): Effect.Effect<void, StorageError.StorageError> =>
  tokens.length === 0
    ? Effect.void
    : tx.writeWithEvents(insertTokensSql(tokens.length), tokens.flatMap(tokenParams))

/**
 * D13 (docs/security.md): lock the users `tokens` name FOR SHARE in the write's transaction, before
 * anything else it writes, and answer the refusal of the write if one of them is disabled or gone.
 * FOR SHARE conflicts with the row lock of setDisabled's UPDATE (FOR NO KEY UPDATE; FOR KEY SHARE
 * would not, disabled_at being no key) and of remove's DELETE (FOR UPDATE), which both change the
 * user's row first. So either the write locked first, and the disable waits for it to commit and then
 * revokes its tokens (at READ COMMITTED its next statement sees them; under SERIALIZABLE the read of
 * tokens it missed is a conflict, and it runs again); or the disable changed the row first, and the
 * lock waits for its commit and then reads the row disabled or gone (READ COMMITTED reads the newest
 * version; SERIALIZABLE fails with a serialization failure and the rerun reads it).
 */
export const lockUsers = (
  tx: Tx,
  tokens: ReadonlyArray<Token.Token>
): Effect.Effect<UserStore.UserInactive | undefined, StorageError.StorageError> => {
  const userIds = UserStore.usersOf(tokens)
  if (userIds.length === 0) return Effect.succeed(undefined)
  return Effect.map(
    tx.query(
      `SELECT user_id FROM users WHERE user_id = ANY($1::text[]) AND disabled_at IS NULL
        ORDER BY user_id FOR SHARE`,
      [userIds]
    ),
    (r) => {
      const active = new Set(r.rows.map((row) => String(row.user_id)))
      return UserStore.refusal(tokens, (userId) => active.has(userId))
    }
  )
}

/**
 * D15 (docs/security.md): the refusal of a write `under` a consent, read after `lockUsers` locked its
 * user FOR SHARE (the tokens name that user): withdraw locks the same row FOR NO KEY UPDATE before it
 * deletes the consent, so either it committed first and this read (a new statement at READ
 * COMMITTED; SERIALIZABLE fails the write with a serialization failure and the rerun reads it) finds
 * the consent gone, or it waits for this write's commit and then revokes its tokens.
 */
export const consentRefusal = (
  tx: Tx,
  under: ConsentStore.Under
): Effect.Effect<ConsentStore.ConsentWithdrawn | undefined, StorageError.StorageError> =>
  Effect.flatMap(
    tx.query("SELECT scope FROM consents WHERE user_id = $1 AND app_key = $2", [under.userId, under.appKey]),
    (r) =>
      attemptSync(() => {
        const row = r.rows[0]
        return ConsentStore.refusal(under, row === undefined ? undefined : Tables.scopeOf(row.scope))
      })
  )

/** Retire a user's unused codes by deleting them: redeemed later, one is unknown (nothing issued, nothing revoked). */
export const retireCodesOfUser = "DELETE FROM authorization_codes WHERE user_id = $1 AND used_at IS NULL"

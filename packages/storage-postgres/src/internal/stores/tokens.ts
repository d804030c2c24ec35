/** The PostgreSQL store of access and refresh tokens. */
import {
  type ConsentStore,
  type StorageError,
  Tables,
  type Token,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Effect } from "effect"
import type { Database, Tx } from "../database.js"
import { bound, changed, first, purgeSql, selectFrom } from "../rows.js"
import { consentRefusal, insertTokens, insertTokensSql, lockUsers, tokenParams } from "../tokenWrites.js"
import type { Over } from "./shared.js"

// Tokens of no user (an application's own) are one statement; a user's lock the user first.
const insert = (db: Database, tokens: ReadonlyArray<Token.Token>) =>
  UserStore.usersOf(tokens).length > 0
    ? db.transaction<void, UserStore.UserInactive>((tx) =>
        Effect.flatMap(
          lockUsers(tx, tokens),
          (refused): Effect.Effect<void, UserStore.UserInactive | StorageError.StorageError> =>
            refused === undefined ? insertTokens(tx, tokens) : Effect.fail(refused)
        )
      )
    : tokens.length > 0
      ? // One statement with the audit events attached to it: no BEGIN or COMMIT round trip
        db.writeWithEvents(insertTokensSql(tokens.length), tokens.flatMap(tokenParams))
      : // Nothing to insert: still a write, so audit events attached to it are stored.
        Effect.flatMap(db.eventsAttached, (attached) =>
          attached ? db.transaction(() => Effect.void) : Effect.void
        )

// The grace window is the only time rule; otherwise rotated_at IS NULL decides.
const rotate = (
  tx: Tx,
  refreshHash: string,
  now: number,
  grace: number,
  tokens: ReadonlyArray<Token.Token>
) =>
  Effect.gen(function* () {
    const refused = yield* lockUsers(tx, tokens)
    const rotated = yield* tx.query(
      `UPDATE tokens SET rotated_at = coalesce(rotated_at, $2::bigint)
        WHERE kind = 'refresh' AND token_hash = $1 AND revoked_at IS NULL AND expires_at > $2::bigint
          AND (rotated_at IS NULL OR ($3::bigint > 0 AND rotated_at >= $2::bigint - $3::bigint))
        RETURNING family_id`,
      [refreshHash, now, grace]
    )
    if (rotated.rows.length === 0) {
      const state = yield* tx.query(
        `SELECT revoked_at IS NULL AND expires_at > $2::bigint AS active, family_id FROM tokens
          WHERE kind = 'refresh' AND token_hash = $1`,
        [refreshHash, now]
      )
      const row = state.rows[0]
      return yield* row === undefined || row.active !== true
        ? Effect.fail(new TokenStore.TokenInactive())
        : Effect.fail(new TokenStore.RefreshAlreadyRotated({ familyId: String(row.family_id) }))
    }
    if (refused !== undefined) return yield* Effect.fail(refused)
    yield* insertTokens(tx, tokens)
  })

/** Tokens in the `tokens` table, by kind and hash. */
export const tokenStore = ({ db }: Over): TokenStore.TokenStore["Type"] => ({
  insert: (tokens) => insert(db, tokens),
  insertUnderConsent: (tokens, under) =>
    db.transaction<void, UserStore.UserInactive | ConsentStore.ConsentWithdrawn>((tx) =>
      Effect.gen(function* () {
        const refused = (yield* lockUsers(tx, tokens)) ?? (yield* consentRefusal(tx, under))
        if (refused !== undefined) return yield* Effect.fail(refused)
        yield* insertTokens(tx, tokens)
      })
    ),
  find: (kind, tokenHash) =>
    Effect.flatMap(
      db.lookup(selectFrom(Tables.tokens, "WHERE kind = $1 AND token_hash = $2"), [kind, tokenHash]),
      (r) => first(Tables.tokens, r.rows)
    ),
  rotate: (refreshHash, now, grace, tokens) =>
    db.transaction<
      void,
      TokenStore.TokenInactive | TokenStore.RefreshAlreadyRotated | UserStore.UserInactive
    >((tx) => rotate(tx, refreshHash, now, grace, tokens)),
  // One statement, committed before the caller fails the request.
  revokeFamily: (familyId, now) =>
    Effect.map(
      db.write("UPDATE tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL", [
        familyId,
        now
      ]),
      changed
    ),
  // One statement (tokens_by_app_open_id, or tokens_by_user).
  revokeSubject: (subject, now) =>
    Effect.map(
      "openId" in subject
        ? db.write(
            "UPDATE tokens SET revoked_at = $3 WHERE app_key = $1 AND open_id = $2 AND revoked_at IS NULL",
            [subject.appKey, subject.openId, now]
          )
        : db.write(
            "UPDATE tokens SET revoked_at = $3 WHERE app_key = $1 AND user_id = $2 AND revoked_at IS NULL",
            [subject.appKey, subject.userId, now]
          ),
      changed
    ),
  revoke: (kind, tokenHash, now) =>
    Effect.map(
      db.write(
        "UPDATE tokens SET revoked_at = $3 WHERE kind = $1 AND token_hash = $2 AND revoked_at IS NULL",
        [kind, tokenHash, now]
      ),
      (r) => changed(r) > 0
    ),
  purgeExpired: (now, limit) =>
    Effect.map(db.write(purgeSql("tokens", ["kind", "token_hash"]), [now, bound(limit)]), changed)
})

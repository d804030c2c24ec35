/** The PostgreSQL store of initial access tokens and client registrations. */
import { type RegistrationStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, bound, changed, first, insertSql, params, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

/** Initial access tokens in `initial_access_tokens`; registrations in `client_registrations`, deleted with their application. */
export const registrationStore = ({ db }: Over): RegistrationStore.RegistrationStore["Type"] => ({
  insertToken: (token) =>
    Effect.asVoid(db.write(insertSql(Tables.initialAccessTokens), params(Tables.initialAccessTokens, token))),
  // The latest expiry first; digests by code point (collation "C"), whatever the database's collation
  listTokens: (now) =>
    Effect.flatMap(
      db.lookup(
        selectFrom(
          Tables.initialAccessTokens,
          'WHERE uses_left > 0 AND expires_at > $1 ORDER BY expires_at DESC, token_hash COLLATE "C"'
        ),
        [now]
      ),
      (r) => all(Tables.initialAccessTokens, r.rows)
    ),
  findToken: (tokenHash, now) =>
    Effect.flatMap(
      db.lookup(
        selectFrom(Tables.initialAccessTokens, "WHERE token_hash = $1 AND uses_left > 0 AND expires_at > $2"),
        [tokenHash, now]
      ),
      (r) => first(Tables.initialAccessTokens, r.rows)
    ),
  spendToken: (tokenHash, now) =>
    Effect.map(
      db.write(
        "UPDATE initial_access_tokens SET uses_left = uses_left - 1 WHERE token_hash = $1 AND uses_left > 0 AND expires_at > $2",
        [tokenHash, now]
      ),
      (r) => changed(r) === 1
    ),
  revokeToken: (tokenHash) =>
    Effect.map(
      db.write("DELETE FROM initial_access_tokens WHERE token_hash = $1", [tokenHash]),
      (r) => changed(r) === 1
    ),
  purgeTokens: (now, limit) =>
    Effect.map(
      db.write(
        `DELETE FROM initial_access_tokens WHERE token_hash IN (SELECT token_hash FROM initial_access_tokens
          WHERE uses_left <= 0 OR expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [now, bound(limit)]
      ),
      changed
    ),
  insertClient: (client) =>
    Effect.asVoid(
      db.write(insertSql(Tables.clientRegistrations), params(Tables.clientRegistrations, client))
    ),
  findClient: (appKey) =>
    Effect.flatMap(db.lookup(selectFrom(Tables.clientRegistrations, "WHERE app_key = $1"), [appKey]), (r) =>
      first(Tables.clientRegistrations, r.rows)
    )
})

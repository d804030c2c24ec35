/** The SQLite store of initial access tokens and client registrations. */
import { type RegistrationStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, bound, insertSql, optional, params, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  insertToken: db.prepare(insertSql(Tables.initialAccessTokens)),
  // The latest expiry first; digests in BINARY collation (code units, as the memory store sorts)
  listTokens: db.prepare(
    selectFrom(
      Tables.initialAccessTokens,
      "WHERE uses_left > 0 AND expires_at > ? ORDER BY expires_at DESC, token_hash"
    )
  ),
  findToken: db.prepare(
    selectFrom(Tables.initialAccessTokens, "WHERE token_hash = ? AND uses_left > 0 AND expires_at > ?")
  ),
  spendToken: db.prepare(
    "UPDATE initial_access_tokens SET uses_left = uses_left - 1 WHERE token_hash = ? AND uses_left > 0 AND expires_at > ?"
  ),
  revokeToken: db.prepare("DELETE FROM initial_access_tokens WHERE token_hash = ?"),
  purgeTokens: db.prepare(
    `DELETE FROM initial_access_tokens WHERE token_hash IN
      (SELECT token_hash FROM initial_access_tokens WHERE uses_left <= 0 OR expires_at <= ? LIMIT ?)`
  ),
  insertClient: db.prepare(insertSql(Tables.clientRegistrations)),
  findClient: db.prepare(selectFrom(Tables.clientRegistrations, "WHERE app_key = ?"))
})

/** Initial access tokens in `initial_access_tokens`; registrations in `client_registrations`, deleted with their application. */
export const registrationStore = (over: Over): RegistrationStore.RegistrationStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    insertToken: (token) => write(() => void q.insertToken.run(params(Tables.initialAccessTokens, token))),
    listTokens: (now) => attempt(() => all(Tables.initialAccessTokens, q.listTokens.all(now))),
    findToken: (tokenHash, now) =>
      attempt(() => optional(Tables.initialAccessTokens, q.findToken.get(tokenHash, now))),
    spendToken: (tokenHash, now) => write(() => q.spendToken.run(tokenHash, now).changes === 1),
    revokeToken: (tokenHash) => write(() => q.revokeToken.run(tokenHash).changes === 1),
    purgeTokens: (now, limit) => write(() => q.purgeTokens.run(now, bound(limit)).changes),
    insertClient: (client) =>
      write(() => void q.insertClient.run(params(Tables.clientRegistrations, client))),
    findClient: (appKey) => attempt(() => optional(Tables.clientRegistrations, q.findClient.get(appKey)))
  }
}

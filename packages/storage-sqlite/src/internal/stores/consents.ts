/** The SQLite store of remembered consents. */
import { type ConsentStore, Scope, Tables } from "@latchkey/core"
import { Option } from "effect"
import { attempt } from "../database.js"
import { all, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  upsert: db.prepare(`INSERT INTO consents (user_id, app_key, scope, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (user_id, app_key) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`),
  // In primary-key order: by App Key, BINARY collation (code units, as the memory store sorts).
  list: db.prepare(selectFrom(Tables.consents, "WHERE user_id = ? ORDER BY app_key")),
  remove: db.prepare("DELETE FROM consents WHERE user_id = ? AND app_key = ?"),
  retireCodesOfAppUser: db.prepare(
    "DELETE FROM authorization_codes WHERE user_id = ? AND app_key = ? AND used_at IS NULL"
  )
})

/** Consents in the `consents` table; a withdrawal retires codes and revokes tokens in its transaction. */
export const consentStore = (over: Over): ConsentStore.ConsentStore["Type"] => {
  const { db, write, shared } = over
  const q = prepare(over)
  const tx = {
    grant: db.transaction((userId: string, appKey: string, scope: Scope.ScopeSet, now: number): void => {
      const found = shared.findConsent(userId, appKey)
      const merged = found === undefined ? scope : Scope.union(found, scope)
      q.upsert.run(userId, appKey, JSON.stringify(merged), now)
    }),
    // The application's tokens of the user are revoked, and its unused codes for the user retired,
    // in the transaction that forgets the consent.
    withdraw: db.transaction((userId: string, appKey: string, now: number): boolean => {
      if (q.remove.run(userId, appKey).changes === 0) return false
      q.retireCodesOfAppUser.run(userId, appKey)
      shared.revokeAppUser(appKey, userId, now)
      return true
    })
  }
  return {
    find: (userId, appKey) => attempt(() => Option.fromNullable(shared.findConsent(userId, appKey))),
    grant: (userId, appKey, scope, now) => write(() => tx.grant(userId, appKey, scope, now)),
    list: (userId) => attempt(() => all(Tables.consents, q.list.all(userId))),
    withdraw: (userId, appKey, now) => write(() => tx.withdraw(userId, appKey, now))
  }
}

/** The SQLite store of passkeys. */
import { PasskeyStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, insertSql, optional, selectFrom } from "../rows.js"
import { insertNew, type Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  insert: db.prepare(`${insertSql(Tables.passkeys)} ON CONFLICT (credential_id) DO NOTHING`),
  find: db.prepare(selectFrom(Tables.passkeys, "WHERE credential_id = ?")),
  // Oldest first; credential ids in BINARY collation (code units, as the memory store sorts)
  list: db.prepare(selectFrom(Tables.passkeys, "WHERE user_id = ? ORDER BY created_at, credential_id")),
  // One conditional statement: one winner among sign-ins that read the same counter
  recordUse: db.prepare(
    "UPDATE passkeys SET counter = ?, backed_up = ?, last_used_at = ? WHERE credential_id = ? AND counter = ?"
  ),
  rename: db.prepare("UPDATE passkeys SET name = ? WHERE user_id = ? AND credential_id = ?"),
  remove: db.prepare("DELETE FROM passkeys WHERE user_id = ? AND credential_id = ?")
})

/** Passkeys in the `passkeys` table, by credential id. */
export const passkeyStore = (over: Over): PasskeyStore.PasskeyStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    insert: (passkey) =>
      insertNew(
        over,
        q.insert,
        Tables.passkeys,
        passkey,
        () => new PasskeyStore.CredentialTaken({ credentialId: passkey.credentialId })
      ),
    find: (credentialId) => attempt(() => optional(Tables.passkeys, q.find.get(credentialId))),
    listByUser: (userId) => attempt(() => all(Tables.passkeys, q.list.all(userId))),
    recordUse: (credentialId, use) =>
      write(
        () =>
          q.recordUse.run(use.counter, use.backedUp ? 1 : 0, use.at, credentialId, use.expected).changes === 1
      ),
    rename: (userId, credentialId, name) =>
      write(() => q.rename.run(name, userId, credentialId).changes === 1),
    remove: (userId, credentialId) => write(() => q.remove.run(userId, credentialId).changes === 1)
  }
}

/** The PostgreSQL store of passkeys. */
import { PasskeyStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, changed, first, selectFrom } from "../rows.js"
import { insertNew, type Over } from "./shared.js"

/** Passkeys in the `passkeys` table, by credential id. */
export const passkeyStore = ({ db }: Over): PasskeyStore.PasskeyStore["Type"] => ({
  insert: (p) =>
    insertNew(
      db,
      Tables.passkeys,
      "credential_id",
      p,
      () => new PasskeyStore.CredentialTaken({ credentialId: p.credentialId })
    ),
  find: (credentialId) =>
    Effect.flatMap(db.lookup(selectFrom(Tables.passkeys, "WHERE credential_id = $1"), [credentialId]), (r) =>
      first(Tables.passkeys, r.rows)
    ),
  // Oldest first; credential ids by code point (collation "C"), whatever the database's collation
  listByUser: (userId) =>
    Effect.flatMap(
      db.lookup(
        selectFrom(Tables.passkeys, 'WHERE user_id = $1 ORDER BY created_at, credential_id COLLATE "C"'),
        [userId]
      ),
      (r) => all(Tables.passkeys, r.rows)
    ),
  // One conditional statement: one winner among sign-ins that read the same counter, at any isolation level
  recordUse: (credentialId, use) =>
    Effect.map(
      db.write(
        `UPDATE passkeys SET counter = $2, backed_up = $3, last_used_at = $4
          WHERE credential_id = $1 AND counter = $5`,
        [credentialId, use.counter, use.backedUp, use.at, use.expected]
      ),
      (r) => changed(r) === 1
    ),
  rename: (userId, credentialId, name) =>
    Effect.map(
      db.write("UPDATE passkeys SET name = $3 WHERE user_id = $1 AND credential_id = $2", [
        userId,
        credentialId,
        name
      ]),
      (r) => changed(r) === 1
    ),
  remove: (userId, credentialId) =>
    Effect.map(
      db.write("DELETE FROM passkeys WHERE user_id = $1 AND credential_id = $2", [userId, credentialId]),
      (r) => changed(r) === 1
    )
})

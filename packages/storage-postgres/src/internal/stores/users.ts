/** The PostgreSQL store of platform users. */
import { Tables, UserStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import { all, changed, first, selectFrom } from "../rows.js"
import { retireCodesOfUser } from "../tokenWrites.js"
import { endSessionsOf, insertNew, type Over, revokeUserSql } from "./shared.js"

// What a removed user owns goes with them: consents, the second factor (migration 6), passkeys
// (migration 8) and trusted devices (migration 13)
const ownedByUser = [
  "consents",
  "recovery_codes",
  "totp_factors",
  "passkeys",
  "trusted_devices",
  "application_owners"
]

/** Users in the `users` table; a disable or removal revokes and ends what the user holds in its transaction. */
export const userStore = ({ db }: Over): UserStore.UserStore["Type"] => ({
  insert: (u) =>
    insertNew(db, Tables.users, "username", u, () => new UserStore.UsernameTaken({ username: u.username })),
  findByUsername: (username) =>
    Effect.flatMap(db.lookup(selectFrom(Tables.users, "WHERE username = $1"), [username]), (r) =>
      first(Tables.users, r.rows)
    ),
  findById: (userId) =>
    Effect.flatMap(db.lookup(selectFrom(Tables.users, "WHERE user_id = $1"), [userId]), (r) =>
      first(Tables.users, r.rows)
    ),
  deviceGeneration: (userId) =>
    Effect.map(db.lookup("SELECT device_generation FROM users WHERE user_id = $1", [userId]), (r) =>
      Number(r.rows[0]?.device_generation ?? 0)
    ),
  forgetDevices: (userId) =>
    Effect.map(
      db.write(
        "UPDATE users SET device_generation = device_generation + 1 WHERE user_id = $1 RETURNING device_generation",
        [userId]
      ),
      (r) => Option.map(Option.fromNullable(r.rows[0]?.device_generation), Number)
    ),
  list: () =>
    Effect.flatMap(db.query(selectFrom(Tables.users, "ORDER BY created_at, seq")), (r) =>
      all(Tables.users, r.rows)
    ),
  // ASVS V3.3.3: the user's sessions end in the transaction that sets the new password, unless kept.
  setPasswordHash: (userId, passwordHash, options) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const set = yield* tx.query("UPDATE users SET password_hash = $2 WHERE user_id = $1", [
          userId,
          passwordHash
        ])
        if (changed(set) === 0) return false
        if (options?.keepSessions !== true) yield* endSessionsOf(tx, userId, options?.keepSession)
        // Trusted devices (migration 13): bound to the password hash, they go with it
        yield* tx.query("DELETE FROM trusted_devices WHERE user_id = $1", [userId])
        return true
      })
    ),
  // Disabling locks the user's row first (lockUsers), keeps the first disabled_at, retires the
  // unused codes, revokes and ends the user's sessions in the same transaction; enabling is one
  // statement and brings nothing back.
  setDisabled: (userId, disabled, now) =>
    disabled
      ? db.transaction((tx) =>
          Effect.gen(function* () {
            const marked = yield* tx.query(
              "UPDATE users SET disabled_at = coalesce(disabled_at, $2::bigint) WHERE user_id = $1",
              [userId, now]
            )
            if (changed(marked) === 0) return false
            yield* tx.query(retireCodesOfUser, [userId])
            yield* tx.query(revokeUserSql, [userId, now])
            yield* endSessionsOf(tx, userId)
            return true
          })
        )
      : Effect.map(
          db.write("UPDATE users SET disabled_at = NULL WHERE user_id = $1", [userId]),
          (r) => changed(r) > 0
        ),
  // The user's row goes first: its lock orders the delete with token writes (lockUsers).
  remove: (userId, now) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const deleted = yield* tx.query("DELETE FROM users WHERE user_id = $1", [userId])
        for (const table of ownedByUser) yield* tx.query(`DELETE FROM ${table} WHERE user_id = $1`, [userId])
        yield* tx.query(retireCodesOfUser, [userId])
        yield* tx.query(revokeUserSql, [userId, now])
        if (changed(deleted) === 0) return false
        yield* endSessionsOf(tx, userId)
        return true
      })
    )
})

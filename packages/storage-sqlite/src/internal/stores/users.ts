/** The SQLite store of platform users. */
import { Tables, UserStore } from "@latchkey/core"
import { Option } from "effect"
import { attempt } from "../database.js"
import { all, insertSql, optional, selectFrom } from "../rows.js"
import { insertNew, type Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  insert: db.prepare(`${insertSql(Tables.users)} ON CONFLICT (username) DO NOTHING`),
  findByName: db.prepare(selectFrom(Tables.users, "WHERE username = ?")),
  list: db.prepare(selectFrom(Tables.users, "ORDER BY created_at, rowid")),
  remove: db.prepare("DELETE FROM users WHERE user_id = ?"),
  deviceGeneration: db.prepare("SELECT device_generation FROM users WHERE user_id = ?").pluck(),
  forgetDevices: db
    .prepare(
      "UPDATE users SET device_generation = device_generation + 1 WHERE user_id = ? RETURNING device_generation"
    )
    .pluck(),
  setPasswordHash: db.prepare("UPDATE users SET password_hash = ? WHERE user_id = ?"),
  // Disabling an account already disabled keeps the first time.
  disable: db.prepare("UPDATE users SET disabled_at = coalesce(disabled_at, ?) WHERE user_id = ?"),
  enable: db.prepare("UPDATE users SET disabled_at = NULL WHERE user_id = ?"),
  deleteConsentsOf: db.prepare("DELETE FROM consents WHERE user_id = ?"),
  // A removed user's second factor goes with them (migration 14).
  deleteFactorOf: db.prepare("DELETE FROM totp_factors WHERE user_id = ?"),
  deleteRecoveryCodesOf: db.prepare("DELETE FROM recovery_codes WHERE user_id = ?"),
  deletePasskeysOf: db.prepare("DELETE FROM passkeys WHERE user_id = ?"),
  // Trusted devices (migration 20): bound to the password hash, they go with it and with the user
  deleteDevicesOf: db.prepare("DELETE FROM trusted_devices WHERE user_id = ?"),
  // A removed user owns no application any more (migration 22)
  deleteOwnershipsOf: db.prepare("DELETE FROM application_owners WHERE user_id = ?")
})

/** Users in the `users` table; a disable or removal revokes and ends what the user holds in its transaction. */
export const userStore = (over: Over): UserStore.UserStore["Type"] => {
  const { db, write, shared } = over
  const q = prepare(over)
  // Each runs inside the writer's transaction (better-sqlite3 nests them as savepoints).
  const tx = {
    remove: db.transaction((userId: string, now: number): boolean => {
      shared.revokeUser(userId, now)
      q.deleteConsentsOf.run(userId)
      q.deleteFactorOf.run(userId)
      q.deleteRecoveryCodesOf.run(userId)
      if (q.remove.run(userId).changes === 0) return false
      q.deletePasskeysOf.run(userId)
      q.deleteDevicesOf.run(userId)
      q.deleteOwnershipsOf.run(userId)
      shared.endSessionsOf(userId)
      return true
    }),
    // A user's tokens are revoked and sessions ended in the transaction that disables the account.
    setDisabled: db.transaction((userId: string, disabled: boolean, now: number): boolean => {
      if (!disabled) return q.enable.run(userId).changes > 0
      if (q.disable.run(now, userId).changes === 0) return false
      shared.revokeUser(userId, now)
      shared.endSessionsOf(userId)
      return true
    }),
    // ASVS V3.3.3: the user's sessions end in the transaction that sets the new password, unless kept.
    setPasswordHash: db.transaction(
      (userId: string, passwordHash: string, options: UserStore.PasswordOptions): boolean => {
        if (q.setPasswordHash.run(passwordHash, userId).changes === 0) return false
        if (options.keepSessions !== true) shared.endSessionsOf(userId, options.keepSession)
        q.deleteDevicesOf.run(userId)
        return true
      }
    )
  }
  return {
    insert: (user) =>
      insertNew(
        over,
        q.insert,
        Tables.users,
        user,
        () => new UserStore.UsernameTaken({ username: user.username })
      ),
    findByUsername: (username) => attempt(() => optional(Tables.users, q.findByName.get(username))),
    findById: (userId) => attempt(() => shared.findUser(userId)),
    list: () => attempt(() => all(Tables.users, q.list.all())),
    setPasswordHash: (userId, passwordHash, options) =>
      write(() => tx.setPasswordHash(userId, passwordHash, options ?? {})),
    setDisabled: (userId, disabled, now) => write(() => tx.setDisabled(userId, disabled, now)),
    deviceGeneration: (userId) => attempt(() => Number(q.deviceGeneration.get(userId) ?? 0)),
    forgetDevices: (userId) =>
      write(() => Option.map(Option.fromNullable(q.forgetDevices.get(userId)), Number)),
    remove: (userId, now) => write(() => tx.remove(userId, now))
  }
}

/** The SQLite store of trusted devices. */
import { type DeviceStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, bound, insertSql, optional, params, purgeSql, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  insert: db.prepare(insertSql(Tables.trustedDevices)),
  find: db.prepare(selectFrom(Tables.trustedDevices, "WHERE id_hash = ? AND expires_at > ?")),
  // The latest sign-in first; id hashes in BINARY collation (code units, as the memory store sorts)
  list: db.prepare(
    selectFrom(
      Tables.trustedDevices,
      "WHERE user_id = ? AND expires_at > ? ORDER BY last_sign_in_at DESC, id_hash"
    )
  ),
  recordSignIn: db.prepare(
    "UPDATE trusted_devices SET last_sign_in_at = ? WHERE user_id = ? AND id_hash = ?"
  ),
  forget: db.prepare("DELETE FROM trusted_devices WHERE user_id = ? AND id_hash = ?"),
  forgetOthers: db.prepare("DELETE FROM trusted_devices WHERE user_id = ? AND id_hash <> ?"),
  purge: db.prepare(purgeSql("trusted_devices"))
})

/** Trusted devices in the `trusted_devices` table, by id digest. */
export const deviceStore = (over: Over): DeviceStore.DeviceStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    insert: (device) => write(() => void q.insert.run(params(Tables.trustedDevices, device))),
    find: (idHash, now) => attempt(() => optional(Tables.trustedDevices, q.find.get(idHash, now))),
    listOf: (userId, now) => attempt(() => all(Tables.trustedDevices, q.list.all(userId, now))),
    recordSignIn: (userId, idHash, at) => write(() => q.recordSignIn.run(at, userId, idHash).changes === 1),
    forget: (userId, idHash) => write(() => q.forget.run(userId, idHash).changes === 1),
    // No id hash is empty: "" keeps none
    forgetOthers: (userId, keep) => write(() => q.forgetOthers.run(userId, keep ?? "").changes),
    purgeExpired: (now, limit) => write(() => q.purge.run(now, bound(limit)).changes)
  }
}

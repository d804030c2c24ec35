/** The PostgreSQL store of trusted devices. */
import { type DeviceStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, bound, changed, first, insertSql, params, purgeSql, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

/** Trusted devices in the `trusted_devices` table, by id digest. */
export const deviceStore = ({ db }: Over): DeviceStore.DeviceStore["Type"] => ({
  insert: (device) =>
    Effect.asVoid(db.write(insertSql(Tables.trustedDevices), params(Tables.trustedDevices, device))),
  find: (idHash, now) =>
    Effect.flatMap(
      db.lookup(selectFrom(Tables.trustedDevices, "WHERE id_hash = $1 AND expires_at > $2"), [idHash, now]),
      (r) => first(Tables.trustedDevices, r.rows)
    ),
  // The latest sign-in first; id hashes by code point (collation "C"), whatever the database's collation
  listOf: (userId, now) =>
    Effect.flatMap(
      db.lookup(
        selectFrom(
          Tables.trustedDevices,
          'WHERE user_id = $1 AND expires_at > $2 ORDER BY last_sign_in_at DESC, id_hash COLLATE "C"'
        ),
        [userId, now]
      ),
      (r) => all(Tables.trustedDevices, r.rows)
    ),
  recordSignIn: (userId, idHash, at) =>
    Effect.map(
      db.write("UPDATE trusted_devices SET last_sign_in_at = $3 WHERE user_id = $1 AND id_hash = $2", [
        userId,
        idHash,
        at
      ]),
      (r) => changed(r) === 1
    ),
  forget: (userId, idHash) =>
    Effect.map(
      db.write("DELETE FROM trusted_devices WHERE user_id = $1 AND id_hash = $2", [userId, idHash]),
      (r) => changed(r) === 1
    ),
  // No id hash is empty: "" keeps none
  forgetOthers: (userId, keep) =>
    Effect.map(
      db.write("DELETE FROM trusted_devices WHERE user_id = $1 AND id_hash <> $2", [userId, keep ?? ""]),
      changed
    ),
  purgeExpired: (now, limit) =>
    Effect.map(db.write(purgeSql("trusted_devices", ["id_hash"]), [now, bound(limit)]), changed)
})

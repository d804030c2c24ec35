/** The PostgreSQL store of signing keys. */
import { type KeyStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, changed, insertSql, params, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

/**
 * The advisory lock every write of a signing key holds (see Database.TransactionOptions.locks):
 * taken before the transaction begins, so concurrent rotations queue and each one, at any
 * isolation level, reads the signing key the one before it stored.
 */
const keyLock = ["signing_keys"]

// signing_keys_one_signing (migration 4) admits one row with retired_at NULL: with one there
// already, the candidate is dropped.
const initializeSql = `${insertSql(Tables.signingKeys)} ON CONFLICT DO NOTHING`
const retireSql = "UPDATE signing_keys SET retired_at = $1, publish_until = $2 WHERE retired_at IS NULL"

/** Signing keys in the `signing_keys` table; every write is one transaction under `keyLock`. */
export const keyStore = ({ db }: Over): KeyStore.KeyStore["Type"] => ({
  // Newest first; seq orders keys created in the same second.
  list: () =>
    Effect.flatMap(db.query(selectFrom(Tables.signingKeys, "ORDER BY created_at DESC, seq DESC")), (r) =>
      all(Tables.signingKeys, r.rows)
    ),
  initialize: (candidate) =>
    db.transaction((tx) => Effect.asVoid(tx.query(initializeSql, params(Tables.signingKeys, candidate))), {
      locks: keyLock
    }),
  rotate: (next, now, publishUntil) =>
    db.transaction(
      (tx) =>
        Effect.zipRight(
          tx.query(retireSql, [now, publishUntil]),
          Effect.asVoid(tx.query(insertSql(Tables.signingKeys), params(Tables.signingKeys, next)))
        ),
      { locks: keyLock }
    ),
  removeExpired: (now) =>
    Effect.map(
      db.write("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND publish_until <= $1", [now]),
      changed
    )
})

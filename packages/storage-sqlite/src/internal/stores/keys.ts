/** The SQLite store of signing keys. */
import { type KeyStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, insertSql, params, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  // Newest first; rowid orders keys created in the same second.
  list: db.prepare(selectFrom(Tables.signingKeys, "ORDER BY created_at DESC, rowid DESC")),
  // signing_keys_one_signing (migration 11) admits one row with retired_at NULL: with one there
  // already, the candidate is dropped.
  initialize: db.prepare(`${insertSql(Tables.signingKeys)} ON CONFLICT DO NOTHING`),
  insert: db.prepare(insertSql(Tables.signingKeys)),
  retire: db.prepare("UPDATE signing_keys SET retired_at = ?, publish_until = ? WHERE retired_at IS NULL"),
  removeExpired: db.prepare("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND publish_until <= ?")
})

/**
 * Signing keys in the `signing_keys` table. Every write goes through the writer (BEGIN IMMEDIATE),
 * so a rotation's retirement and insert commit together, and writers of other processes on the
 * file wait for it: each rotation retires the key the one before it stored.
 */
export const keyStore = (over: Over): KeyStore.KeyStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    list: () => attempt(() => all(Tables.signingKeys, q.list.all())),
    initialize: (candidate) =>
      write(() => {
        q.initialize.run(params(Tables.signingKeys, candidate))
      }),
    rotate: (next, now, publishUntil) =>
      write(() => {
        q.retire.run(now, publishUntil)
        q.insert.run(params(Tables.signingKeys, next))
      }),
    removeExpired: (now) => write(() => q.removeExpired.run(now).changes)
  }
}

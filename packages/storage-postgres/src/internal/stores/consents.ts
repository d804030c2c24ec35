/** The PostgreSQL store of remembered consents. */
import { type ConsentStore, Scope, Tables } from "@latchkey/core"
import { Effect, Option } from "effect"
import type { Tx } from "../database.js"
import { attemptSync } from "../errors.js"
import { all, changed, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const findSql = "SELECT scope FROM consents WHERE user_id = $1 AND app_key = $2"
const upsertSql = `INSERT INTO consents (user_id, app_key, scope, updated_at) VALUES ($1, $2, $3::jsonb, $4)
  ON CONFLICT (user_id, app_key)`

// The first grant inserts; a later one locks the row and stores the union (Scope.union).
// A grant racing the first waits for its insert and then merges into it.
const grant = (tx: Tx, userId: string, appKey: string, scope: Scope.ScopeSet, now: number) =>
  Effect.gen(function* () {
    const inserted = yield* tx.query(`${upsertSql} DO NOTHING`, [userId, appKey, JSON.stringify(scope), now])
    if (changed(inserted) === 1) return
    const found = yield* tx.query(`${findSql} FOR UPDATE`, [userId, appKey])
    const merged = yield* attemptSync(() => {
      const row = found.rows[0]
      return row === undefined ? scope : Scope.union(Tables.scopeOf(row.scope), scope)
    })
    yield* tx.query(`${upsertSql} DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`, [
      userId,
      appKey,
      JSON.stringify(merged),
      now
    ])
  })

// The delete locks the consent: a grant racing it waits, then inserts a new consent.
const withdraw = (tx: Tx, userId: string, appKey: string, now: number) =>
  Effect.gen(function* () {
    // D13: the user's row first, locked against token writes (lockUsers holds it FOR SHARE):
    // a write that locked it first has committed before the statements below, which then see
    // its tokens; one that comes second waits for this commit and finds the consent's codes
    // gone and its tokens revoked. Then the consent, the codes and the tokens, in the order
    // of remove, so the two never wait for each other in a cycle.
    yield* tx.query("SELECT 1 FROM users WHERE user_id = $1 FOR NO KEY UPDATE", [userId])
    const deleted = yield* tx.query("DELETE FROM consents WHERE user_id = $1 AND app_key = $2", [
      userId,
      appKey
    ])
    if (changed(deleted) === 0) return false
    yield* tx.query(
      "DELETE FROM authorization_codes WHERE user_id = $1 AND app_key = $2 AND used_at IS NULL",
      [userId, appKey]
    )
    yield* tx.query(
      "UPDATE tokens SET revoked_at = $3 WHERE app_key = $2 AND user_id = $1 AND revoked_at IS NULL",
      [userId, appKey, now]
    )
    return true
  })

/** Consents in the `consents` table; a withdrawal retires codes and revokes tokens in its transaction. */
export const consentStore = ({ db }: Over): ConsentStore.ConsentStore["Type"] => ({
  find: (userId, appKey) =>
    Effect.flatMap(db.lookup(findSql, [userId, appKey]), (r) =>
      attemptSync(() => Option.map(Option.fromNullable(r.rows[0]), (row) => Tables.scopeOf(row.scope)))
    ),
  grant: (userId, appKey, scope, now) => db.transaction((tx) => grant(tx, userId, appKey, scope, now)),
  // By code point (collation "C"), whatever the database's collation.
  list: (userId) =>
    Effect.flatMap(
      db.lookup(selectFrom(Tables.consents, 'WHERE user_id = $1 ORDER BY app_key COLLATE "C"'), [userId]),
      (r) => all(Tables.consents, r.rows)
    ),
  withdraw: (userId, appKey, now) => db.transaction((tx) => withdraw(tx, userId, appKey, now))
})

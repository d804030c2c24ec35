/** The PostgreSQL store of operators and their console sessions. */
import { OperatorStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, bound, changed, first, insertSql, params, purgeSql, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const endSessionsOf = "DELETE FROM console_sessions WHERE operator = $1"

/** Operators in the `operators` table by name, sessions in `console_sessions` by id digest. */
export const operatorStore = ({ db }: Over): OperatorStore.OperatorStore["Type"] => ({
  // A failed transaction stores nothing, the audit events attached to it included
  insert: (operator) =>
    db.transaction((tx) =>
      Effect.flatMap(
        tx.query(
          `${insertSql(Tables.operators)} ON CONFLICT (name) DO NOTHING`,
          params(Tables.operators, operator)
        ),
        (r) =>
          changed(r) === 1
            ? Effect.void
            : Effect.fail(new OperatorStore.OperatorNameTaken({ name: operator.name }))
      )
    ),
  find: (name) =>
    Effect.flatMap(db.lookup(selectFrom(Tables.operators, "WHERE name = $1"), [name]), (r) =>
      first(Tables.operators, r.rows)
    ),
  // Names by code point (collation "C"), whatever the database's collation
  list: () =>
    Effect.flatMap(db.lookup(selectFrom(Tables.operators, 'ORDER BY name COLLATE "C"'), []), (r) =>
      all(Tables.operators, r.rows)
    ),
  setRole: (name, role) =>
    Effect.map(
      db.write("UPDATE operators SET role = $2 WHERE name = $1", [name, role]),
      (r) => changed(r) === 1
    ),
  setPasswordHash: (name, passwordHash) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const set = yield* tx.query("UPDATE operators SET password_hash = $2 WHERE name = $1", [
          name,
          passwordHash
        ])
        if (changed(set) === 0) return false
        yield* tx.query(endSessionsOf, [name])
        return true
      })
    ),
  remove: (name) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const removed = yield* tx.query("DELETE FROM operators WHERE name = $1", [name])
        if (changed(removed) === 0) return false
        yield* tx.query(endSessionsOf, [name])
        return true
      })
    ),
  // The operator's row is updated first: a deletion in between waits for it, or leaves nothing to update
  startSession: (session) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const signedIn = yield* tx.query("UPDATE operators SET last_sign_in_at = $2 WHERE name = $1", [
          session.operator,
          session.createdAt
        ])
        if (changed(signedIn) === 0) return false
        yield* tx.query(insertSql(Tables.consoleSessions), params(Tables.consoleSessions, session))
        return true
      })
    ),
  findSession: (idHash, now) =>
    Effect.flatMap(
      db.lookup(selectFrom(Tables.consoleSessions, "WHERE id_hash = $1 AND expires_at > $2"), [idHash, now]),
      (r) => first(Tables.consoleSessions, r.rows)
    ),
  endSession: (idHash) =>
    Effect.map(
      db.write("DELETE FROM console_sessions WHERE id_hash = $1", [idHash]),
      (r) => changed(r) === 1
    ),
  purgeExpired: (now, limit) =>
    Effect.map(db.write(purgeSql("console_sessions", ["id_hash"]), [now, bound(limit)]), changed)
})

/** The SQLite store of operators and their console sessions. */
import { OperatorStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, bound, insertSql, optional, params, purgeSql, selectFrom } from "../rows.js"
import { refuse } from "../writer.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  insert: db.prepare(`${insertSql(Tables.operators)} ON CONFLICT (name) DO NOTHING`),
  find: db.prepare(selectFrom(Tables.operators, "WHERE name = ?")),
  // Names in BINARY collation (code units, as the memory store sorts)
  list: db.prepare(selectFrom(Tables.operators, "ORDER BY name")),
  setRole: db.prepare("UPDATE operators SET role = ? WHERE name = ?"),
  setPasswordHash: db.prepare("UPDATE operators SET password_hash = ? WHERE name = ?"),
  remove: db.prepare("DELETE FROM operators WHERE name = ?"),
  endSessionsOf: db.prepare("DELETE FROM console_sessions WHERE operator = ?"),
  signedIn: db.prepare("UPDATE operators SET last_sign_in_at = ? WHERE name = ?"),
  insertSession: db.prepare(insertSql(Tables.consoleSessions)),
  findSession: db.prepare(selectFrom(Tables.consoleSessions, "WHERE id_hash = ? AND expires_at > ?")),
  endSession: db.prepare("DELETE FROM console_sessions WHERE id_hash = ?"),
  purge: db.prepare(purgeSql("console_sessions"))
})

/** Operators in the `operators` table by name, sessions in `console_sessions` by id digest. */
export const operatorStore = (over: Over): OperatorStore.OperatorStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    // Refused inside the write: its savepoint, audit events included, is rolled back
    insert: (operator) =>
      write<void, OperatorStore.OperatorNameTaken>(() => {
        if (q.insert.run(params(Tables.operators, operator)).changes !== 1)
          refuse(new OperatorStore.OperatorNameTaken({ name: operator.name }))
      }),
    find: (name) => attempt(() => optional(Tables.operators, q.find.get(name))),
    list: () => attempt(() => all(Tables.operators, q.list.all())),
    setRole: (name, role) => write(() => q.setRole.run(role, name).changes === 1),
    setPasswordHash: (name, passwordHash) =>
      write(() => {
        if (q.setPasswordHash.run(passwordHash, name).changes !== 1) return false
        q.endSessionsOf.run(name)
        return true
      }),
    remove: (name) =>
      write(() => {
        if (q.remove.run(name).changes !== 1) return false
        q.endSessionsOf.run(name)
        return true
      }),
    startSession: (session) =>
      write(() => {
        if (q.signedIn.run(session.createdAt, session.operator).changes !== 1) return false
        q.insertSession.run(params(Tables.consoleSessions, session))
        return true
      }),
    findSession: (idHash, now) =>
      attempt(() => optional(Tables.consoleSessions, q.findSession.get(idHash, now))),
    endSession: (idHash) => write(() => q.endSession.run(idHash).changes === 1),
    purgeExpired: (now, limit) => write(() => q.purge.run(now, bound(limit)).changes)
  }
}

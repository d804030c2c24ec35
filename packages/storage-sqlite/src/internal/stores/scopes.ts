/** The SQLite store of the scope catalogue. */
import { ScopeStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { all, insertSql, optional, params, selectFrom } from "../rows.js"
import { refuse } from "../writer.js"
import type { Over } from "./shared.js"

const t = Tables.scopeCatalogue

const prepare = ({ db }: Over) => ({
  insert: db.prepare(`${insertSql(t)} ON CONFLICT (name) DO NOTHING`),
  find: db.prepare(selectFrom(t, "WHERE name = ?")),
  // Names in BINARY collation (code units, as the memory store sorts)
  list: db.prepare(selectFrom(t, "ORDER BY name")),
  update: db.prepare(`UPDATE scope_catalogue SET descriptions = coalesce(?, descriptions),
      developer_requestable = coalesce(?, developer_requestable), needs_review = coalesce(?, needs_review),
      updated_at = ? WHERE name = ? RETURNING ${Tables.selectList(t)}`),
  remove: db.prepare("DELETE FROM scope_catalogue WHERE name = ?")
})

const flag = (value: boolean | undefined): number | null => (value === undefined ? null : value ? 1 : 0)

/** The scope catalogue in the `scope_catalogue` table, by name. */
export const scopeStore = (over: Over): ScopeStore.ScopeStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    // Refused inside the job, so its savepoint and the events attached to it are rolled back
    insert: (entry) =>
      write<void, ScopeStore.ScopeTaken>(() => {
        if (q.insert.run(params(t, entry)).changes !== 1)
          refuse(new ScopeStore.ScopeTaken({ name: entry.name }))
      }),
    find: (name) => attempt(() => optional(t, q.find.get(name))),
    list: () => attempt(() => all(t, q.list.all())),
    update: (name, changes, now) =>
      write(() =>
        optional(
          t,
          q.update.get(
            changes.descriptions === undefined ? null : JSON.stringify(changes.descriptions),
            flag(changes.developerRequestable),
            flag(changes.needsReview),
            now,
            name
          )
        )
      ),
    remove: (name) => write(() => q.remove.run(name).changes === 1)
  }
}

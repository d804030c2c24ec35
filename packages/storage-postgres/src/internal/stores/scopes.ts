/** The PostgreSQL store of the scope catalogue. */
import { ScopeStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { all, changed, first, selectFrom } from "../rows.js"
import { insertNew, type Over } from "./shared.js"

const t = Tables.scopeCatalogue

const updateSql = `UPDATE scope_catalogue SET descriptions = coalesce($1, descriptions),
  developer_requestable = coalesce($2, developer_requestable), needs_review = coalesce($3, needs_review),
  updated_at = $4 WHERE name = $5 RETURNING ${Tables.selectList(t)}`

/** The scope catalogue in the `scope_catalogue` table, by name. */
export const scopeStore = ({ db }: Over): ScopeStore.ScopeStore["Type"] => ({
  insert: (entry) => insertNew(db, t, "name", entry, () => new ScopeStore.ScopeTaken({ name: entry.name })),
  find: (name) =>
    Effect.flatMap(db.lookup(selectFrom(t, "WHERE name = $1"), [name]), (r) => first(t, r.rows)),
  // Names by code point (collation "C"), whatever the database's collation
  list: () =>
    Effect.flatMap(db.lookup(selectFrom(t, 'ORDER BY name COLLATE "C"'), []), (r) => all(t, r.rows)),
  update: (name, changes, now) =>
    Effect.flatMap(
      db.write(updateSql, [
        changes.descriptions === undefined ? null : JSON.stringify(changes.descriptions),
        changes.developerRequestable ?? null,
        changes.needsReview ?? null,
        now,
        name
      ]),
      (r) => first(t, r.rows)
    ),
  remove: (name) =>
    Effect.map(db.write("DELETE FROM scope_catalogue WHERE name = $1", [name]), (r) => changed(r) === 1)
})

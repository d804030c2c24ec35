/** The memory store of the scope catalogue. */
import { Effect, Option } from "effect"
import * as ScopeCatalogue from "../../model/ScopeCatalogue.js"
import { type ScopeStore, ScopeTaken } from "../ScopeStore.js"
import type { State } from "./state.js"

/** The scope catalogue in `state.scopes`, by name. */
export const scopeStore = ({ scopes }: State): ScopeStore["Type"] => ({
  insert: (entry) =>
    Effect.suspend(() => {
      if (scopes.has(entry.name)) return Effect.fail(new ScopeTaken({ name: entry.name }))
      scopes.set(entry.name, entry)
      return Effect.void
    }),
  find: (name) => Effect.sync(() => Option.fromNullable(scopes.get(name))),
  list: () => Effect.sync(() => [...scopes.values()].sort(ScopeCatalogue.byName)),
  update: (name, changes, now) =>
    Effect.sync(() => {
      const found = scopes.get(name)
      if (found === undefined) return Option.none()
      const updated = ScopeCatalogue.apply(found, changes, now)
      scopes.set(name, updated)
      return Option.some(updated)
    }),
  remove: (name) => Effect.sync(() => scopes.delete(name))
})

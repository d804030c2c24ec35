/**
 * The scope catalogue's entries (`ScopeCatalogue.Entry`), by name. Only the admin operations, the
 * consent and consents pages, the metadata document and the seed at start read it; no token
 * request does.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type * as ScopeCatalogue from "../model/ScopeCatalogue.js"
import type { StorageError } from "./StorageError.js"

/** The catalogue holds a scope of this name already. */
export class ScopeTaken extends Schema.TaggedError<ScopeTaken>()("ScopeTaken", {
  name: Schema.String
}) {}

/** The scope catalogue, by scope name. */
export class ScopeStore extends Context.Tag("@latchkey/core/ScopeStore")<
  ScopeStore,
  {
    /** Add a scope; `ScopeTaken`, and nothing written, when one of its name exists. */
    readonly insert: (entry: ScopeCatalogue.Entry) => Effect.Effect<void, ScopeTaken | StorageError>
    /** The scope of this name, if any. */
    readonly find: (name: string) => Effect.Effect<Option.Option<ScopeCatalogue.Entry>, StorageError>
    /** Every scope, by name in ascending code-unit order. */
    readonly list: () => Effect.Effect<ReadonlyArray<ScopeCatalogue.Entry>, StorageError>
    /** Change a scope at `now`: the entry as it is now, or none (nothing written) when there is no such scope. */
    readonly update: (
      name: string,
      changes: ScopeCatalogue.Changes,
      now: number
    ) => Effect.Effect<Option.Option<ScopeCatalogue.Entry>, StorageError>
    /** Remove a scope; false, and nothing changed, when there was none. */
    readonly remove: (name: string) => Effect.Effect<boolean, StorageError>
  }
>() {}

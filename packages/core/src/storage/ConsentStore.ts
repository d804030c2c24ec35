/**
 * Remembered consents: which scopes a user has allowed an application.
 */
import { Context, type Effect, type Option } from "effect"
import type { ScopeSet } from "../Scope.js"
import type { StorageError } from "./StorageError.js"

/** Consents by (user, application). */
export class ConsentStore extends Context.Tag("@latchkey/core/ConsentStore")<
  ConsentStore,
  {
    /** The scopes the user has allowed the application, if any. */
    readonly find: (userId: string, appKey: string) => Effect.Effect<Option.Option<ScopeSet>, StorageError>
    /** Add scopes to what the user has allowed the application. */
    readonly grant: (
      userId: string,
      appKey: string,
      scope: ScopeSet,
      now: number
    ) => Effect.Effect<void, StorageError>
  }
>() {}

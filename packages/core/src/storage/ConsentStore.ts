/**
 * Remembered consents: which scopes a user has allowed an application.
 */
import { Context, type Effect, type Option } from "effect"
import type { ScopeSet } from "../Scope.js"
import type { StorageError } from "./StorageError.js"

/** One remembered consent of a user. */
export interface Consent {
  readonly appKey: string
  readonly scope: ScopeSet
  /** Epoch seconds of the last grant that added to it. */
  readonly updatedAt: number
}

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
    /** Every consent the user has given, by App Key (ascending). */
    readonly list: (userId: string) => Effect.Effect<ReadonlyArray<Consent>, StorageError>
    /**
     * Forget the user's consent to the application, delete the unused authorization codes the
     * application holds for the user and revoke every token of that application for the user, in
     * one transaction; false (and nothing revoked) when there was no consent.
     */
    readonly withdraw: (userId: string, appKey: string, now: number) => Effect.Effect<boolean, StorageError>
  }
>() {}

/**
 * Remembered consents: which scopes a user has allowed an application.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { isSubset, type ScopeSet } from "../model/Scope.js"
import type { StorageError } from "./StorageError.js"

/** One remembered consent of a user. */
export interface Consent {
  readonly appKey: string
  readonly scope: ScopeSet
  /** Epoch seconds of the last grant that added to it. */
  readonly updatedAt: number
}

/** The consent a write is issued under: the user's consent to the application must cover `scope`. */
export interface Under {
  readonly userId: string
  readonly appKey: string
  readonly scope: ScopeSet
}

/**
 * A code redemption or token write issued under a consent that is withdrawn (or no longer covers its
 * scope): nothing was written. Checked inside the write's transaction, so no code redeems and no
 * implicit token is saved after a withdrawal that committed first.
 */
export class ConsentWithdrawn extends Schema.TaggedError<ConsentWithdrawn>()("ConsentWithdrawn", {
  userId: Schema.String,
  appKey: Schema.String
}) {}

/**
 * D15 (docs/security.md): the refusal of a write `under` a consent when the scopes `given` (the
 * consent as the store reads it inside the write's transaction; undefined when there is none) do not
 * cover its scope; undefined when they do. A consent granted again after a withdrawal counts.
 */
export const refusal = (under: Under, given: ScopeSet | undefined): ConsentWithdrawn | undefined =>
  given !== undefined && isSubset(under.scope, given)
    ? undefined
    : new ConsentWithdrawn({ userId: under.userId, appKey: under.appKey })

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

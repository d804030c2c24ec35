/**
 * Storage of registered applications.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Application } from "../model/Application.js"
import type { StatusChange } from "../model/Review.js"
import type { StorageError } from "./StorageError.js"
import type { Entry, Key } from "./ThrottleStore.js"

/** An application with this App Key exists already. */
export class AppKeyTaken extends Schema.TaggedError<AppKeyTaken>()("AppKeyTaken", {
  appKey: Schema.String
}) {}

/**
 * `markPreviousSecretUsed` found nothing to mark: the previous secret's use is marked
 * already, or the digest is no longer the application's previous secret.
 */
export class PreviousSecretMarked extends Schema.TaggedError<PreviousSecretMarked>()("PreviousSecretMarked", {
  appKey: Schema.String
}) {}

/**
 * `setStatus` found the application in another status than the change's `from` (another change
 * came first): nothing was written.
 */
export class StatusChanged extends Schema.TaggedError<StatusChanged>()("StatusChanged", {
  appKey: Schema.String,
  status: Schema.String
}) {}

/**
 * What `update` may change of a registration; a field left out keeps its value. The values
 * are validated by the caller (`Admin.updateApplication`). A `secretDigest` replaces the App
 * Secret's digest and drops any previous secret (the empty string for a public client): it is
 * given together with `public` when an application turns public (no secret) or confidential
 * (a new secret), so the two change in one write.
 */
export type ApplicationChanges = Partial<
  Pick<
    Application,
    | "name"
    | "redirectUris"
    | "scopes"
    | "grantTypes"
    | "requirePkce"
    | "accessTokenTtl"
    | "refreshTokenTtl"
    | "public"
    | "accessTokenFormat"
    | "accessTokenAudience"
    | "webOrigins"
    | "tokenEndpointAuthMethod"
    | "scopeDelimiter"
    | "postLogoutRedirectUris"
    | "backchannelLogoutUri"
    | "backchannelLogoutSessionRequired"
    | "requireMfa"
    | "secretDigest"
  >
>

/** What `ApplicationStore.findForClient` read: the application and, when it could, the throttle entries. */
export interface ClientRead {
  /** The application with the App Key, if any. */
  readonly app: Option.Option<Application>
  /** The entries of the keys, in order (undefined: no entry); null when they were not read. */
  readonly entries: ReadonlyArray<Entry | undefined> | null
}

/**
 * Whether `update` with `changes` ends the refresh token families of an application that is
 * `wasPublic`: when it turns public, refresh tokens obtained with its App Secret must not go on
 * working with the App Key alone (RFC 6749 §10.4), so every refresh token of the application
 * and every access token of the same families are revoked.
 */
export const endsRefreshFamilies = (wasPublic: boolean, changes: ApplicationChanges): boolean =>
  changes.public === true && !wasPublic

/** Applications by App Key. */
export class ApplicationStore extends Context.Tag("@latchkey/core/ApplicationStore")<
  ApplicationStore,
  {
    /** Register a new application. */
    readonly insert: (app: Application) => Effect.Effect<void, AppKeyTaken | StorageError>
    /** The application with this App Key, if any. */
    readonly find: (appKey: string) => Effect.Effect<Option.Option<Application>, StorageError>
    /**
     * Optional: the application with this App Key and, in the same read, the throttle entries of
     * `keys` when this store keeps the counters of the ThrottleStore in use (its `counters` is
     * `counters`); `entries` is null otherwise. The rules stay the caller's (`Throttle.lockWait`).
     */
    readonly findForClient?: (
      appKey: string,
      keys: ReadonlyArray<Key>,
      counters: object
    ) => Effect.Effect<ClientRead, StorageError>
    /**
     * Whether some application registered exactly this web origin (`Application.webOrigins`),
     * compared as the exact string: what answers a CORS preflight, which names no application.
     */
    readonly webOriginRegistered: (origin: string) => Effect.Effect<boolean, StorageError>
    /** Every application, oldest first. */
    readonly list: () => Effect.Effect<ReadonlyArray<Application>, StorageError>
    /**
     * Replace the secret digest, in one atomic write. With `keepPreviousUntil` (epoch seconds)
     * the digest being replaced becomes the previous secret (`previousSecretDigest`), accepted
     * until then, and any earlier previous secret is dropped; with null no previous secret is
     * kept. Either way `previousSecretUsedAt` is cleared. False when there is no such
     * application.
     */
    readonly updateSecret: (
      appKey: string,
      secretDigest: string,
      keepPreviousUntil: number | null
    ) => Effect.Effect<boolean, StorageError>
    /**
     * Set `previousSecretUsedAt` to `now` if `previousSecretDigest` is still the application's
     * previous secret and its use is not marked yet: one atomic conditional write, so of
     * concurrent callers exactly one succeeds. Fails with `PreviousSecretMarked` otherwise
     * (also for an unknown App Key), writing nothing, so an audit event recorded with it
     * (`Audit.recordWith`) is kept once per rotation.
     */
    readonly markPreviousSecretUsed: (
      appKey: string,
      previousSecretDigest: string,
      now: number
    ) => Effect.Effect<void, PreviousSecretMarked | StorageError>
    /**
     * Change the registration (never the App Key or `createdAt`; the secret only as `ApplicationChanges` says) in one atomic
     * write; the application as it is afterwards, or none when there is no such application.
     * Tokens issued before keep working until they expire or are revoked, except that a change
     * making a confidential application public (`public: true`) revokes at `now`, in the same
     * write, every refresh token family it holds (`endsRefreshFamilies`).
     */
    readonly update: (
      appKey: string,
      changes: ApplicationChanges,
      now: number
    ) => Effect.Effect<Option.Option<Application>, StorageError>
    /**
     * Move the application from `change.from` to `change.to` with the reason, in one conditional
     * write; when `Review.endsIssued(change.to)`, the same write revokes every token of the
     * application at `now` and deletes its unused codes. The application as it is afterwards,
     * none when there is no such application; `StatusChanged` (nothing written) when its status
     * is not `change.from`.
     */
    readonly setStatus: (
      appKey: string,
      change: StatusChange,
      now: number
    ) => Effect.Effect<Option.Option<Application>, StatusChanged | StorageError>
    /** The user ids of the application's owners, in the order they were added (none for an unknown App Key). */
    readonly owners: (appKey: string) => Effect.Effect<ReadonlyArray<string>, StorageError>
    /**
     * Record `userId` as an owner of the application; false, writing nothing, when they are one
     * already or the application or the user does not exist (checked in the same write).
     */
    readonly addOwner: (appKey: string, userId: string, now: number) => Effect.Effect<boolean, StorageError>
    /** Remove `userId` from the application's owners; false when they were not one. */
    readonly removeOwner: (appKey: string, userId: string) => Effect.Effect<boolean, StorageError>
    /** The applications `userId` owns, oldest first. */
    readonly ownedBy: (userId: string) => Effect.Effect<ReadonlyArray<Application>, StorageError>
    /** Delete the application (its owners with it) and revoke everything issued to it; false when there was none. */
    readonly remove: (appKey: string, now: number) => Effect.Effect<boolean, StorageError>
  }
>() {}

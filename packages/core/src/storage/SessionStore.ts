/**
 * Sign-in sessions of the authorize pages and the authorization requests pending
 * in them, kept by the storage adapter so that several server instances can share
 * a sign-in. Sessions and pending requests are keyed by digests: a store never
 * holds a value that would let its reader act as the browser.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { SignInMethod } from "../model/SignIn.js"
import { isDisabled, type User } from "../model/User.js"
import { StorageError } from "./StorageError.js"

/** How a session's user signed in, when it was not with a password alone (`SignIn.SignInMethod`). */
export { SignInMethod }

/** A browser's session, as stored. Times are epoch seconds. */
export const SessionRecord = Schema.Struct({
  /** SHA-256 of the session id the browser's cookie carries. */
  idHash: Schema.String,
  /** The signed-in platform user, or null while nobody has signed in. */
  userId: Schema.NullOr(Schema.String),
  username: Schema.NullOr(Schema.String),
  /**
   * When the user signed in (OpenID Connect `auth_time`), or null while nobody has: the
   * session's absolute lifetime (`Config.sessionMaxAge`) runs from it.
   */
  authenticatedAt: Schema.NullOr(Schema.Number),
  /** The session is gone at this time (the lifetime slides on every save, never past the absolute one). */
  expiresAt: Schema.Number,
  /**
   * How the user signed in: `passkey` for a passkey sign-in; absent for a password (every sign-in
   * before passkeys was one) and while nobody has signed in. A store reads a NULL column as absent.
   */
  method: Schema.optionalWith(SignInMethod, { exact: true })
})
/** A browser's session, as stored. */
export type SessionRecord = typeof SessionRecord.Type

/** The account a sign-in checked: its id, and the password hash the password was verified against. */
export type SignedInAs = Pick<User, "userId" | "passwordHash">

/**
 * D16 (docs/security.md): whether `user`, as a store reads it inside the write of a new signed-in
 * session, is still the account the sign-in checked: it exists, is enabled, and has the password hash
 * that was verified (a disable, delete, delete and re-create, or new password since refuses the write).
 */
export const stillAsChecked = (checked: SignedInAs, user: User | undefined): boolean =>
  user !== undefined &&
  user.userId === checked.userId &&
  !isDisabled(user) &&
  user.passwordHash === checked.passwordHash

/** Which form continues a pending request. */
export const Step = Schema.Literal("login", "consent")
/** Which form continues a pending request. */
export type Step = typeof Step.Type

/** An authorization request waiting for the sign-in or consent form of one session. */
export const PendingRecord = Schema.Struct({
  /** SHA-256 of the session id it belongs to. */
  sessionHash: Schema.String,
  /** The transaction id, sent in the form's hidden `txn` field. */
  txn: Schema.String,
  /** The authorize request's raw query string; validated again when the form comes back. */
  rawQuery: Schema.String,
  /** SHA-256 of the CSRF token the form must send back. */
  csrfHash: Schema.String,
  step: Step,
  createdAt: Schema.Number,
  expiresAt: Schema.Number
})
/** An authorization request waiting for a form. */
export type PendingRecord = typeof PendingRecord.Type

/** Bounds a session store keeps, so that nobody outside can fill it. */
export interface SessionLimits {
  /** Most sessions kept; past it the oldest anonymous session goes first, a signed-in one only when none is left. */
  readonly maxSessions: number
  /** Most pending requests one session keeps (about one per open tab); past it the oldest goes. */
  readonly maxPending: number
  /**
   * Most characters of stored authorize queries, all pending requests together: past it
   * the oldest go, those of sessions nobody signed in to first. With `maxSessions` it
   * bounds what anonymous requests can make a store hold.
   */
  readonly maxPendingBytes: number
}

/** The bounds of the stores the project ships. */
export const defaultLimits: SessionLimits = {
  maxSessions: 10_000,
  maxPending: 8,
  maxPendingBytes: 16 * 1024 * 1024
}

/** The bounds `given` asks for, over `defaultLimits`; throws StorageError naming a bound that is not a positive integer. */
export const limitsOf = (given: Partial<SessionLimits> = {}): SessionLimits => {
  const limits: SessionLimits = { ...defaultLimits, ...given }
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new StorageError({ message: `sessions.${name} must be a positive integer` })
    }
  }
  return limits
}

/** Sessions and pending authorization requests. */
export class SessionStore extends Context.Tag("@latchkey/core/SessionStore")<
  SessionStore,
  {
    /** The session with this id hash, unless it expired at or before `now`. */
    readonly find: (idHash: string, now: number) => Effect.Effect<Option.Option<SessionRecord>, StorageError>
    /** Insert or replace a session (its user and expiry), evicting per `SessionLimits.maxSessions`. */
    readonly save: (session: SessionRecord) => Effect.Effect<void, StorageError>
    /**
     * D16 (docs/security.md): store a new session signed in as `checked.userId` (like `save`) only if
     * that user, read inside this write's transaction, is still as the sign-in checked it
     * (`stillAsChecked`); false, and nothing stored, otherwise. A disable, delete or new password
     * either committed first and refuses it, or ends the session it stored.
     */
    readonly signIn: (session: SessionRecord, checked: SignedInAs) => Effect.Effect<boolean, StorageError>
    /**
     * Replace the user and expiry of a stored session; false, and nothing stored, when it is not
     * stored (ended, evicted or swept since it was read): a request that read a session before
     * a disable ended it never brings it back.
     */
    readonly renew: (session: SessionRecord) => Effect.Effect<boolean, StorageError>
    /** Delete a session and every request pending in it. */
    readonly remove: (idHash: string) => Effect.Effect<void, StorageError>
    /**
     * The sessions signed in as `userId` that have not expired at `now`, the latest sign-in first
     * (ties by expiry, latest first): what the account page lists.
     */
    readonly listOf: (
      userId: string,
      now: number
    ) => Effect.Effect<ReadonlyArray<SessionRecord>, StorageError>
    /**
     * Delete the session `idHash`, with every request pending in it, only if it is signed in as
     * `userId`; whether it did (false for another user's session, an anonymous or unknown one).
     */
    readonly endOf: (userId: string, idHash: string) => Effect.Effect<boolean, StorageError>
    /**
     * Delete every session signed in as `userId` except `keep`, with the requests pending in them,
     * in one write; how many sessions it deleted.
     */
    readonly endOthersOf: (userId: string, keep: string) => Effect.Effect<number, StorageError>
    /** Add a pending request to its session, dropping the session's oldest beyond `maxPending`, and the store's oldest beyond `maxPendingBytes`. */
    readonly addPending: (pending: PendingRecord) => Effect.Effect<void, StorageError>
    /** A request pending in a session, unless it expired at or before `now`. */
    readonly findPending: (
      sessionHash: string,
      txn: string,
      now: number
    ) => Effect.Effect<Option.Option<PendingRecord>, StorageError>
    /** Delete a pending request: true for exactly one caller, however many race for it. */
    readonly takePending: (sessionHash: string, txn: string) => Effect.Effect<boolean, StorageError>
    /** How many sessions are stored, and the characters of all pending queries together. */
    readonly stats: () => Effect.Effect<
      { readonly sessions: number; readonly pendingBytes: number },
      StorageError
    >
    /** Delete at most `limit` sessions and at most `limit` pending requests that expired before `now`; returns how many. */
    readonly purgeExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

/**
 * Passkeys (WebAuthn credentials) of platform users: the public key a user's authenticator
 * registered, found by its credential id at a passkey sign-in. A store never holds a secret: a
 * credential's private key never leaves the authenticator.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { StorageError } from "./StorageError.js"

/** One registered passkey. Ids and keys are base64url; times are epoch seconds. */
export const Passkey = Schema.Struct({
  /** The credential id the authenticator chose (base64url): unique across every user. */
  credentialId: Schema.String,
  userId: Schema.String,
  /** The credential's COSE public key, base64url. */
  publicKey: Schema.String,
  /** The signature counter last seen (0 for an authenticator that keeps none). */
  counter: Schema.Number,
  /** How the browser can reach the authenticator (`internal`, `hybrid`, `usb`, ...), as it reported them. */
  transports: Schema.Array(Schema.String),
  /** Whether the credential may be synced to other devices (`multiDevice`) or is bound to one. */
  deviceType: Schema.Literal("singleDevice", "multiDevice"),
  /** Whether the credential was backed up (synced) when last seen. */
  backedUp: Schema.Boolean,
  /** A name the user recognises it by. */
  name: Schema.String,
  createdAt: Schema.Number,
  /** The last sign-in with it, or null before the first. */
  lastUsedAt: Schema.NullOr(Schema.Number)
})
/** One registered passkey. */
export type Passkey = typeof Passkey.Type

/** A passkey with this credential id is registered already (to this user or another): nothing was stored. */
export class CredentialTaken extends Schema.TaggedError<CredentialTaken>()("CredentialTaken", {
  credentialId: Schema.String
}) {}

/** What a sign-in with a passkey saw: the counter it checked against, and the new counter and backup state. */
export interface Use {
  /** The counter the sign-in read and verified the assertion against. */
  readonly expected: number
  readonly counter: number
  readonly backedUp: boolean
  readonly at: number
}

/** Passkeys by credential id and by user. */
export class PasskeyStore extends Context.Tag("@latchkey/core/PasskeyStore")<
  PasskeyStore,
  {
    /** Register a passkey; `CredentialTaken`, and nothing stored, when its credential id is registered already. */
    readonly insert: (passkey: Passkey) => Effect.Effect<void, CredentialTaken | StorageError>
    /** The passkey with this credential id, if any. */
    readonly find: (credentialId: string) => Effect.Effect<Option.Option<Passkey>, StorageError>
    /** The user's passkeys, oldest first (by `createdAt`, then credential id). */
    readonly listByUser: (userId: string) => Effect.Effect<ReadonlyArray<Passkey>, StorageError>
    /**
     * Record a sign-in with the passkey: its counter, backup state and `lastUsedAt`, only while its
     * counter is still `use.expected` (one conditional write): true for one caller only when several
     * race with the same assertion; false, and nothing changed, when another sign-in moved the
     * counter first or the passkey is gone.
     */
    readonly recordUse: (credentialId: string, use: Use) => Effect.Effect<boolean, StorageError>
    /** Give one of the user's passkeys a new name; false, and nothing changed, when the user has none with this id. */
    readonly rename: (
      userId: string,
      credentialId: string,
      name: string
    ) => Effect.Effect<boolean, StorageError>
    /** Remove one of the user's passkeys; false when the user has none with this id. */
    readonly remove: (userId: string, credentialId: string) => Effect.Effect<boolean, StorageError>
  }
>() {}

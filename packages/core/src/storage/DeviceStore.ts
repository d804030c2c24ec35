/**
 * Trusted devices of platform users (`Session.trustedDevice`): one record per browser a user made
 * trusted by signing in there, keyed by the digest of the nonce its cookie carries (the store
 * never holds the nonce), so the account page can list them and forget them one by one.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { StorageError } from "./StorageError.js"

/** A trusted device as stored. Times are epoch seconds. */
export const TrustedDevice = Schema.Struct({
  /** SHA-256 of the nonce the browser's trusted-device cookie carries. */
  idHash: Schema.String,
  userId: Schema.String,
  /** The browser's name from its `User-Agent` (`DeviceLabel.labelOf`), null when not recognised. */
  browser: Schema.NullOr(Schema.String),
  /** The browser's operating system from its `User-Agent`, null when not recognised. */
  system: Schema.NullOr(Schema.String),
  /** When the browser became trusted. */
  trustedAt: Schema.Number,
  /** When a sign-in last used it (its first: `trustedAt`). */
  lastSignInAt: Schema.Number,
  /** When its cookie ends (`Session.deviceTtl` after `trustedAt`); the record is gone then. */
  expiresAt: Schema.Number
})
/** A trusted device as stored. */
export type TrustedDevice = typeof TrustedDevice.Type

/** Trusted devices by id digest and by user. */
export class DeviceStore extends Context.Tag("@latchkey/core/DeviceStore")<
  DeviceStore,
  {
    /** Record a new trusted device (a digest already recorded fails: nonces are random). */
    readonly insert: (device: TrustedDevice) => Effect.Effect<void, StorageError>
    /** The device with this id digest, if any and not expired at `now`. */
    readonly find: (idHash: string, now: number) => Effect.Effect<Option.Option<TrustedDevice>, StorageError>
    /** The user's devices not expired at `now`, the latest sign-in first (then by id digest). */
    readonly listOf: (
      userId: string,
      now: number
    ) => Effect.Effect<ReadonlyArray<TrustedDevice>, StorageError>
    /** Record a sign-in with one of the user's devices at `at`; false, and nothing changed, when it is gone. */
    readonly recordSignIn: (
      userId: string,
      idHash: string,
      at: number
    ) => Effect.Effect<boolean, StorageError>
    /** Forget one of the user's devices; false, and nothing changed, when the user has none with this digest. */
    readonly forget: (userId: string, idHash: string) => Effect.Effect<boolean, StorageError>
    /** Forget every device of the user but `keep` (an id digest; null: all of them): how many. */
    readonly forgetOthers: (userId: string, keep: string | null) => Effect.Effect<number, StorageError>
    /** Delete at most `limit` devices expired at `now`: how many. */
    readonly purgeExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

/**
 * Dynamic client registration (RFC 7591, RFC 7592): the initial access tokens an operator issues
 * to let a client register itself, and, for each application registered so, the digest of the
 * registration access token that manages it. The store holds SHA-256 digests only, never a token.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { StorageError } from "./StorageError.js"

/** An initial access token as stored. Times are epoch seconds. */
export const InitialAccessToken = Schema.Struct({
  /** SHA-256 of the token, base64url: also its id in lists and revocation. */
  tokenHash: Schema.String,
  /** Registrations it may still authorise. */
  usesLeft: Schema.Number,
  /** When it stops authorising. */
  expiresAt: Schema.Number,
  createdAt: Schema.Number
})
/** An initial access token as stored. */
export type InitialAccessToken = typeof InitialAccessToken.Type

/** An application registered through the registration endpoint. */
export const ClientRegistration = Schema.Struct({
  appKey: Schema.String,
  /** SHA-256 of its registration access token (RFC 7592 §3), base64url. */
  accessTokenHash: Schema.String,
  registeredAt: Schema.Number
})
/** An application registered through the registration endpoint. */
export type ClientRegistration = typeof ClientRegistration.Type

/** Initial access tokens by digest, and registrations by App Key (gone with their application). */
export class RegistrationStore extends Context.Tag("@latchkey/core/RegistrationStore")<
  RegistrationStore,
  {
    /** Record a new initial access token (a digest already recorded fails: tokens are random). */
    readonly insertToken: (token: InitialAccessToken) => Effect.Effect<void, StorageError>
    /** The tokens with uses left and not expired at `now`, the latest expiry first (then by digest). */
    readonly listTokens: (now: number) => Effect.Effect<ReadonlyArray<InitialAccessToken>, StorageError>
    /** The token with this digest, if it has a use left and is not expired at `now`. */
    readonly findToken: (
      tokenHash: string,
      now: number
    ) => Effect.Effect<Option.Option<InitialAccessToken>, StorageError>
    /**
     * Spend one use of the token with this digest: false, and nothing changed, when there is none,
     * it has no use left or it expired at `now`.
     */
    readonly spendToken: (tokenHash: string, now: number) => Effect.Effect<boolean, StorageError>
    /** Delete the token with this digest; false when there was none. */
    readonly revokeToken: (tokenHash: string) => Effect.Effect<boolean, StorageError>
    /** Delete at most `limit` tokens spent or expired at `now`: how many. */
    readonly purgeTokens: (now: number, limit: number) => Effect.Effect<number, StorageError>
    /** Record the registration of an application that exists (one per application). */
    readonly insertClient: (client: ClientRegistration) => Effect.Effect<void, StorageError>
    /** The registration of the application, if it was registered so and still exists. */
    readonly findClient: (appKey: string) => Effect.Effect<Option.Option<ClientRegistration>, StorageError>
  }
>() {}

/**
 * Storage of access and refresh tokens, with atomic rotation and family revocation.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Kind, Token } from "../model/Token.js"
import type { ConsentWithdrawn, Under } from "./ConsentStore.js"
import type { StorageError } from "./StorageError.js"
import type { UserInactive } from "./UserStore.js"

/** No usable refresh token with this hash: unknown, expired or revoked. */
export class TokenInactive extends Schema.TaggedError<TokenInactive>()("TokenInactive", {}) {}

/** The refresh token was rotated before (outside any grace window): the caller revokes the family. */
export class RefreshAlreadyRotated extends Schema.TaggedError<RefreshAlreadyRotated>()(
  "RefreshAlreadyRotated",
  {
    familyId: Schema.String
  }
) {}

/** Whose tokens `revokeSubject` revokes: an application's subject by open_id, or by platform user. */
export type Subject =
  | { readonly appKey: string; readonly openId: string }
  | { readonly appKey: string; readonly userId: string }

/** Tokens by the SHA-256 of their value, namespaced by kind. */
export class TokenStore extends Context.Tag("@latchkey/core/TokenStore")<
  TokenStore,
  {
    /**
     * Save newly issued tokens, all or none: none, with `UserInactive`, when one of them carries the
     * id of a user who is disabled or gone at the moment of the write (decided in its transaction).
     */
    readonly insert: (tokens: ReadonlyArray<Token>) => Effect.Effect<void, UserInactive | StorageError>
    /**
     * Like `insert`, and then none, with `ConsentWithdrawn` (D15), unless the consent `under` stands
     * and covers its scope, decided in the same transaction (the implicit grant's tokens). The tokens
     * name `under`'s user.
     */
    readonly insertUnderConsent: (
      tokens: ReadonlyArray<Token>,
      under: Under
    ) => Effect.Effect<void, UserInactive | ConsentWithdrawn | StorageError>
    /** The token of this kind with this hash, in any state, if still stored. */
    readonly find: (kind: Kind, tokenHash: string) => Effect.Effect<Option.Option<Token>, StorageError>
    /**
     * Retire the refresh token and save its successors, atomically. Succeeds at most
     * once per token, decided by the row's state; with `grace > 0` a token rotated at
     * most `grace` seconds ago may be rotated again (a client's retry). Like `insert`, refused with
     * `UserInactive` (after the token's own state) when a successor's user is disabled or gone.
     */
    readonly rotate: (
      refreshHash: string,
      now: number,
      grace: number,
      tokens: ReadonlyArray<Token>
    ) => Effect.Effect<void, TokenInactive | RefreshAlreadyRotated | UserInactive | StorageError>
    /** Revoke every token of the family; commits on its own. Returns how many were revoked. */
    readonly revokeFamily: (familyId: string, now: number) => Effect.Effect<number, StorageError>
    /**
     * Revoke every unrevoked token of one subject of one application: all tokens with this App
     * Key and this `openId` (or this `userId`), which are whole families since a family never
     * changes subject. One write; returns how many tokens it revoked.
     */
    readonly revokeSubject: (subject: Subject, now: number) => Effect.Effect<number, StorageError>
    /** Revoke one token; false when it was unknown or already revoked. */
    readonly revoke: (kind: Kind, tokenHash: string, now: number) => Effect.Effect<boolean, StorageError>
    /** Delete at most `limit` tokens that expired before `now`; returns how many. */
    readonly purgeExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

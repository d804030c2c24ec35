/**
 * Storage of platform users.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Token } from "../model/Token.js"
import type { User } from "../model/User.js"
import type { StorageError } from "./StorageError.js"

/** A user with this username exists already. */
export class UsernameTaken extends Schema.TaggedError<UsernameTaken>()("UsernameTaken", {
  username: Schema.String
}) {}

/**
 * A token write named a user who is disabled or no longer exists: nothing was written. Checked
 * inside the write's transaction, so no token outlives a disable or delete that committed first.
 */
export class UserInactive extends Schema.TaggedError<UserInactive>()("UserInactive", {
  userId: Schema.String
}) {}

/** The users a token write names, each once and in one order (a store locks them in it). */
export const usersOf = (tokens: ReadonlyArray<Token>): ReadonlyArray<string> =>
  [...new Set(tokens.flatMap((t) => (t.userId === null ? [] : [t.userId])))].sort()

/**
 * D13 (docs/security.md): the refusal of a token write of which some token names a user who is not
 * `active` (disabled or gone) as the store reads it inside the write's transaction; undefined when
 * every user it names is active.
 */
export const refusal = (
  tokens: ReadonlyArray<Token>,
  active: (userId: string) => boolean
): UserInactive | undefined => {
  const inactive = usersOf(tokens).find((userId) => !active(userId))
  return inactive === undefined ? undefined : new UserInactive({ userId: inactive })
}

/** How `UserStore.setPasswordHash` treats the user's sign-in sessions. */
export interface PasswordOptions {
  /** Keep the user's sign-in sessions instead of ending them (an operator's explicit choice). */
  readonly keepSessions?: boolean
  /**
   * End every session of the user but this one (its id hash): the user's own password change on
   * the account page keeps the browser that made it signed in. Ignored with `keepSessions`.
   */
  readonly keepSession?: string
}

/** Platform users by id and by username. */
export class UserStore extends Context.Tag("@latchkey/core/UserStore")<
  UserStore,
  {
    /** Create a user. */
    readonly insert: (user: User) => Effect.Effect<void, UsernameTaken | StorageError>
    /** The user with exactly this username, if any. */
    readonly findByUsername: (username: string) => Effect.Effect<Option.Option<User>, StorageError>
    /** The user with this id, if any. */
    readonly findById: (userId: string) => Effect.Effect<Option.Option<User>, StorageError>
    /** Every user, oldest first. */
    readonly list: () => Effect.Effect<ReadonlyArray<User>, StorageError>
    /**
     * Replace the user's password hash and, in the same transaction, delete every sign-in
     * session of the user with the requests pending in them (ASVS V3.3.3), unless
     * `options.keepSessions` (or but `options.keepSession`); false when there is no such user.
     */
    readonly setPasswordHash: (
      userId: string,
      passwordHash: string,
      options?: PasswordOptions
    ) => Effect.Effect<boolean, StorageError>
    /**
     * Disable the account at `now` (revoking every token of the user, deleting their unused
     * authorization codes and every sign-in session of theirs, with the requests pending in them,
     * in the same transaction) or, with
     * `disabled` false, enable it again (revoked tokens stay revoked, ended sessions stay ended).
     * Disabling an account already disabled keeps its first `disabledAt` and still revokes and
     * deletes. False when there is no such user.
     */
    readonly setDisabled: (
      userId: string,
      disabled: boolean,
      now: number
    ) => Effect.Effect<boolean, StorageError>
    /**
     * The user's trusted-device generation (`Session.trustedDevice`): 0 until the first
     * `forgetDevices`, and for no such user.
     */
    readonly deviceGeneration: (userId: string) => Effect.Effect<number, StorageError>
    /**
     * Move the user's trusted-device generation on by one (every trusted-device cookie signed for
     * an earlier one is trusted no longer): the new generation, none when there is no such user.
     */
    readonly forgetDevices: (userId: string) => Effect.Effect<Option.Option<number>, StorageError>
    /**
     * Delete the user, their consents and their sign-in sessions (with the requests pending in
     * them), revoke their tokens and delete their unused authorization codes, in one transaction;
     * false when there was none.
     */
    readonly remove: (userId: string, now: number) => Effect.Effect<boolean, StorageError>
  }
>() {}

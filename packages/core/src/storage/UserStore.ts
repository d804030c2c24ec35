/**
 * Storage of platform users.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { User } from "../User.js"
import type { StorageError } from "./StorageError.js"

/** A user with this username exists already. */
export class UsernameTaken extends Schema.TaggedError<UsernameTaken>()("UsernameTaken", {
  username: Schema.String
}) {}

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
    /** Replace the user's password hash; false when there is no such user. */
    readonly setPasswordHash: (userId: string, passwordHash: string) => Effect.Effect<boolean, StorageError>
    /**
     * Disable the account at `now` (revoking every token of the user in the same transaction)
     * or, with `disabled` false, enable it again (revoked tokens stay revoked). Disabling an
     * account already disabled keeps its first `disabledAt` and still revokes. False when there
     * is no such user.
     */
    readonly setDisabled: (
      userId: string,
      disabled: boolean,
      now: number
    ) => Effect.Effect<boolean, StorageError>
    /** Delete the user, their consents and revoke their tokens; false when there was none. */
    readonly remove: (userId: string, now: number) => Effect.Effect<boolean, StorageError>
  }
>() {}

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
    /** Delete the user, their consents and revoke their tokens; false when there was none. */
    readonly remove: (userId: string, now: number) => Effect.Effect<boolean, StorageError>
  }
>() {}

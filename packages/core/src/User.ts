/**
 * Platform users: the resource owners who sign in on the authorize pages and
 * through the password grant.
 */
import { Schema } from "effect"

/** A platform user. */
export const User = Schema.Struct({
  userId: Schema.String,
  username: Schema.String,
  /** Memory-hard hash from the PasswordHasher service. */
  passwordHash: Schema.String,
  createdAt: Schema.Number
})
/** A platform user. */
export type User = typeof User.Type

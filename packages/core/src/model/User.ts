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
  createdAt: Schema.Number,
  /**
   * Epoch seconds at which an administrator disabled the account, or null while it is enabled.
   * A disabled user cannot sign in or refresh, and disabling revoked their tokens. Optional so
   * records built before accounts could be disabled still type; the stores always return it.
   */
  disabledAt: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true })
})
/** A platform user. */
export type User = typeof User.Type

/** Whether the account is disabled. */
export const isDisabled = (user: User): boolean => (user.disabledAt ?? null) !== null

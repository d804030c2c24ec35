/**
 * The users as administrators manage them (`Admin`): lookups, creation, passwords, disabling and
 * deletion, each change audited in the write that makes it; and the 404 of every admin lookup.
 */
import { Effect, Option, Schema } from "effect"
import type { User } from "../../model/User.js"
import * as Accounts from "../../security/Accounts.js"
import * as Audit from "../../security/Audit.js"
import * as SecondFactor from "../../security/SecondFactor.js"
import { nowSeconds } from "../../services/internal/time.js"
import { PasswordHasher } from "../../services/PasswordHasher.js"
import type { StorageError } from "../../storage/StorageError.js"
import { type PasswordOptions, UserStore } from "../../storage/UserStore.js"
import { InvalidField, invalid, plain } from "./fields.js"

/** There is no such application, user or consent (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  what: Schema.Literal(
    "application",
    "user",
    "consent",
    "scope",
    "owner",
    "initial access token",
    "operator"
  ),
  description: Schema.String
}) {
  readonly error = "not_found"
  readonly status = 404
}

const noUser = (user: string) =>
  new NotFound({ what: "user", description: `no user with id or username ${JSON.stringify(user)}` })

/** Fail with `error` when a store's write reports that it found nothing to change. */
export const found =
  <E>(error: () => E) =>
  <R>(write: Effect.Effect<boolean, R>): Effect.Effect<void, E | R> =>
    Effect.flatMap(write, (done) => (done ? Effect.void : Effect.fail(error())))

/** A user, or a user id or username to look one up by (`findUser`). */
export type UserRef = User | string

/**
 * The user with this user id, or else with this username; `NotFound` when there is none. The CLI
 * and the admin API name users through it. The id is tried first, so every user can always be
 * named by their id; `createUser` refuses a username that is another user's id, and a new id
 * (96 random bits) matching an existing username is not a practical event, so the two cannot
 * name different users.
 */
export const findUser = Effect.fnUntraced(function* (idOrUsername: string) {
  yield* plain("user", idOrUsername)
  const users = yield* UserStore
  const byId = yield* users.findById(idOrUsername)
  const user = Option.isSome(byId) ? byId : yield* users.findByUsername(idOrUsername)
  if (Option.isNone(user)) return yield* Effect.fail(noUser(idOrUsername))
  return user.value
})

/** The user with exactly this user id; `NotFound` when there is none. */
export const findUserById = Effect.fnUntraced(function* (userId: string) {
  yield* plain("user_id", userId)
  const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
  if (Option.isNone(user)) {
    return yield* Effect.fail(
      new NotFound({ what: "user", description: `no user with id ${JSON.stringify(userId)}` })
    )
  }
  return user.value
})

/** `user` itself, or the user it names (`findUser`). */
export const resolveUser = (user: UserRef) =>
  typeof user === "string" ? findUser(user) : Effect.succeed(user)

/** Every user, oldest first. */
export const listUsers: Effect.Effect<ReadonlyArray<User>, StorageError, UserStore> = Effect.flatMap(
  UserStore,
  (users) => users.list()
)

/**
 * Create a user with a hashed password (the rules of `Accounts.createUser`, and not another user's
 * id, so `findUser` never has two users to choose from); recorded as `user_created` in the same
 * write. Neither the username nor the password goes into the event.
 */
export const createUser = Effect.fn("Admin.createUser")(function* (username: string, password: string) {
  const usernameProblem = Accounts.usernameProblem(username)
  if (usernameProblem !== null) return yield* invalid("username", usernameProblem)
  const passwordProblem = Accounts.passwordProblem(password)
  if (passwordProblem !== null) return yield* invalid("password", passwordProblem)
  const users = yield* UserStore
  if (Option.isSome(yield* users.findById(username))) {
    return yield* invalid("username", "username must not be the user id of another user")
  }
  const user = yield* Accounts.makeUser(username, password).pipe(
    Effect.mapError((e) => new InvalidField({ field: "password", description: e.description }))
  )
  yield* Audit.recordWith(users.insert(user), [["user_created", { userId: user.userId }]])
  return user
})

/**
 * Set a user's password (the length rules of `Accounts.createUser`), hashed with the
 * PasswordHasher. In the same write every sign-in session of the user ends (ASVS V3.3.3) unless
 * `options.keepSessions`, and `user_updated` is recorded with what ended ("password set; sessions
 * ended" or "password set; sessions kept"). The browsers trusted for the user's sign-ins are
 * trusted no longer either way (the trust is bound to the password). Tokens already issued keep
 * working: disable the account to end them.
 */
export const setPassword = Effect.fn("Admin.setPassword")(function* (
  user: UserRef,
  password: string,
  options: PasswordOptions = {}
) {
  const problem = Accounts.passwordProblem(password)
  if (problem !== null) return yield* invalid("password", problem)
  const target = yield* resolveUser(user)
  const passwordHash = yield* Effect.flatMap(PasswordHasher, (h) => h.hash(password))
  const users = yield* UserStore
  const detail = `password set; sessions ${options.keepSessions === true ? "kept" : "ended"}`
  yield* Audit.recordWith(
    found(() => noUser(target.userId))(users.setPasswordHash(target.userId, passwordHash, options)),
    [["user_updated", { userId: target.userId, detail }]]
  )
  return { ...target, passwordHash } satisfies User
})

const setDisabled = (user: UserRef, disabled: boolean) =>
  Effect.gen(function* () {
    const target = yield* resolveUser(user)
    const now = yield* nowSeconds
    const users = yield* UserStore
    yield* Audit.recordWith(
      found(() => noUser(target.userId))(users.setDisabled(target.userId, disabled, now)),
      [
        [
          "user_updated",
          { userId: target.userId, detail: disabled ? "disabled; tokens revoked, sessions ended" : "enabled" }
        ]
      ]
    )
    return { ...target, disabledAt: disabled ? (target.disabledAt ?? now) : null } satisfies User
  })

/**
 * Disable an account: it can no longer sign in or refresh, and every token of the user is revoked
 * and every sign-in session of theirs ended in the same write, which records `user_updated`
 * (detail "disabled; tokens revoked, sessions ended").
 */
export const disableUser = Effect.fn("Admin.disableUser")((user: UserRef) => setDisabled(user, true))

/**
 * Enable a disabled account again (revoked tokens stay revoked, ended sessions stay ended: the user
 * signs in again); recorded as `user_updated` (detail "enabled").
 */
export const enableUser = Effect.fn("Admin.enableUser")((user: UserRef) => setDisabled(user, false))

/**
 * Delete a user: their tokens are revoked, their consents forgotten and their sign-in sessions
 * ended, recorded as `user_deleted`, in one write. Returns the deleted user.
 */
export const deleteUser = Effect.fn("Admin.deleteUser")(function* (user: UserRef) {
  const target = yield* resolveUser(user)
  const users = yield* UserStore
  yield* Audit.recordWith(
    found(() => noUser(target.userId))(users.remove(target.userId, yield* nowSeconds)),
    [["user_deleted", { userId: target.userId }]]
  )
  return target satisfies User
})

/**
 * Reset a user's second factor (a lost phone): their authenticator app, pending or confirmed, and
 * every recovery code go in one write, recorded as `mfa_reset` with the actor. The user signs in
 * with the password alone until they enrol again. Answers the user and whether there was anything
 * to remove (a reset of nothing is recorded too, and is not an error).
 */
export const resetFactors = Effect.fn("Admin.resetFactors")(function* (user: UserRef) {
  const target = yield* resolveUser(user)
  const removed = yield* SecondFactor.reset(target.userId)
  return { user: target, removed }
})

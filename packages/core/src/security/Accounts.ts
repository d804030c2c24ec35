/**
 * Platform user accounts: creation and password authentication with throttling
 * and no user enumeration.
 */
import { type Context, Data, Deferred, Effect, Option } from "effect"
import * as DisplayText from "../model/DisplayText.js"
import {
  InvalidGrant,
  InvalidRequest,
  type RateLimited,
  type TemporarilyUnavailable
} from "../model/OAuthError.js"
import { isDisabled, type User } from "../model/User.js"
import * as Call from "../oauth/Call.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Entropy from "../services/Entropy.js"
import { nowSeconds } from "../services/internal/time.js"
import { maxPasswordLength, maxUsernameLength, PasswordHasher } from "../services/PasswordHasher.js"
import type { StorageError } from "../storage/StorageError.js"
import { type UsernameTaken, UserStore } from "../storage/UserStore.js"
import * as Audit from "./Audit.js"
import * as PasswordChecks from "./PasswordChecks.js"
import * as Session from "./Session.js"
import * as Throttle from "./Throttle.js"

/** The one answer to every failed sign-in (no user enumeration). */
export const badCredentials = "username or password is incorrect"

/**
 * Hashes to verify against when the user is unknown, so both cases cost the same:
 * one per PasswordHasher service, made by that hasher on first need (inside the
 * runtime that has it) and kept as long as the service is.
 */
const dummyHashes = new WeakMap<Context.Tag.Service<PasswordHasher>, Deferred.Deferred<string>>()

export const dummyHash = (hasher: Context.Tag.Service<PasswordHasher>): Effect.Effect<string> =>
  Effect.fiberIdWith((fiberId) => {
    const known = dummyHashes.get(hasher)
    if (known !== undefined) return Deferred.await(known)
    const made = Deferred.unsafeMake<string>(fiberId)
    dummyHashes.set(hasher, made)
    // uninterruptible: what is stored must be a hash even if this sign-in is interrupted
    return Effect.zipRight(
      Effect.uninterruptible(Deferred.complete(made, hasher.hash("latchkey-dummy-password"))),
      Deferred.await(made)
    )
  })

/**
 * Why `username` cannot be a username (1-128 characters of plain text, `Params.isPlainText`, fit
 * to show on a page, `DisplayText.isDisplayText`, without surrounding spaces), or null when it
 * can. The value itself is never in the answer.
 */
export const usernameProblem = (username: string): string | null =>
  username.length === 0 || username.length > maxUsernameLength || username.trim() !== username
    ? `username must be 1-${maxUsernameLength} characters without surrounding spaces`
    : !isPlainText(username)
      ? "username must not contain control characters"
      : DisplayText.isDisplayText(username)
        ? null
        : DisplayText.problem("username")

/** Why `password` cannot be a password (8 to `maxPasswordLength` characters of plain text), or null when it can. */
export const passwordProblem = (password: string): string | null =>
  password.length < 8 || password.length > maxPasswordLength
    ? `password must be 8-${maxPasswordLength} characters`
    : isPlainText(password)
      ? null
      : "password must not contain control characters"

/** A new user record with a hashed password, checked but not stored (`createUser` stores it). */
export const makeUser = Effect.fn("Accounts.makeUser")(function* (username: string, password: string) {
  const problem = usernameProblem(username) ?? passwordProblem(password)
  if (problem !== null) return yield* Effect.fail(new InvalidRequest({ description: problem }))
  const hasher = yield* PasswordHasher
  const user: User = {
    // typed on command lines (`cli user delete <user_id>`): never starting with `-`
    userId: yield* Entropy.argumentSafeId(12),
    username,
    passwordHash: yield* hasher.hash(password),
    createdAt: yield* nowSeconds,
    disabledAt: null
  }
  return user
}) satisfies (...args: never) => Effect.Effect<User, InvalidRequest, unknown>

/** Create a user with a hashed password. */
export const createUser = Effect.fn("Accounts.createUser")(function* (username: string, password: string) {
  const user = yield* makeUser(username, password)
  yield* Effect.flatMap(UserStore, (users) => users.insert(user))
  return user
}) satisfies (...args: never) => Effect.Effect<User, InvalidRequest | UsernameTaken | StorageError, unknown>

/**
 * Where a sign-in attempt comes from: the sign-in page, with the browser's `Cookie` header
 * (for its trusted-device cookie), or the password grant of an application.
 */
export type SignInSource =
  | { readonly _tag: "Page"; readonly cookies: string | undefined }
  | Extract<Throttle.SignInChannel, { readonly _tag: "Grant" }>

/** The throttle channel of a sign-in: a page's browser is a trusted device only of the account as it is now. */
const channelOf = (source: SignInSource, user: User | null) =>
  source._tag === "Grant"
    ? Effect.succeed<Throttle.SignInChannel>(source)
    : Effect.map(
        Session.trustedDevice(source.cookies, user),
        (device): Throttle.SignInChannel => ({ _tag: "Page", device: Option.getOrNull(device) })
      )

/**
 * A sign-in `verify` refused, with the answer of a wrong password (no user enumeration);
 * `record` stores its `signin_failed` event, for the caller to commit with what it writes next.
 */
export class SignInRefused extends Data.TaggedError("SignInRefused")<{
  readonly record: Effect.Effect<void>
}> {}

/**
 * A sign-in whose password was right: the account, and `settle`, the store calls that give the
 * attempt back to the throttle counters and record `signin_succeeded`, for the caller to commit
 * with what the sign-in stores.
 */
export interface Verified {
  readonly user: User
  readonly settle: Effect.Effect<void, StorageError, Throttle.ThrottleStore | Throttle.ThrottlePolicy>
}

/** Records an audit event of the attempt's request. */
type Recorder = (type: Audit.EventType, fields?: Audit.Fields) => Effect.Effect<void>

/** The services an attempt uses, read once by its caller. */
interface Attempting extends Throttle.Counting {
  readonly hasher: Context.Tag.Service<PasswordHasher>
  readonly record: Recorder
}

/**
 * One admitted sign-in attempt: counted (after `before`, in its transaction), waited until its
 * slot, then checked on its turn; the rules as plain code between those steps.
 */
const attempt = <E, R>(
  services: Attempting,
  password: string,
  found: Option.Option<User>,
  keys: ReadonlyArray<Throttle.Key>,
  malformed: boolean,
  pass: PasswordChecks.Pass,
  before: Effect.Effect<void, E, R> | undefined
): Effect.Effect<Verified, SignInRefused | RateLimited | StorageError | E, R> => {
  const { hasher, record } = services
  const refuse = (userId: string | null, detail: string | null = null) =>
    Effect.fail(new SignInRefused({ record: record("signin_failed", { userId, detail }) }))
  const check = (): Effect.Effect<Verified, SignInRefused> => {
    if (malformed) return refuse(null)
    if (Option.isNone(found))
      // the same work as for a known user, so timing tells nothing (docs/security.md P-1)
      return Effect.flatMap(dummyHash(hasher), (dummy) =>
        Effect.zipRight(pass.check(hasher.verify(password, dummy)), refuse(null))
      )
    const user = found.value
    return Effect.flatMap(pass.check(hasher.verify(password, user.passwordHash)), (ok) => {
      if (!ok) return refuse(user.userId)
      // A disabled account is refused after the same work and with the same answer as a wrong password
      if (isDisabled(user)) return refuse(user.userId, "account disabled")
      return Effect.succeed({
        user,
        settle: Effect.zipRight(
          services.store.settle(keys, services.policy),
          record("signin_succeeded", { userId: user.userId })
        )
      })
    })
  }
  // Counted before the password is checked: parallel guesses are all counted
  return Effect.flatMap(Throttle.reserveWith(services, keys, before), ({ started }) =>
    // One audit event per lockout, not one per refused attempt
    started ? Effect.zipRight(record("signin_throttled"), check()) : check()
  )
}

// docs/security.md P-5, P-6, T13: length caps and plain text before hashing, a counter or a lookup
const isMalformed = (username: string, password: string): boolean =>
  username.length > maxUsernameLength ||
  password.length > maxPasswordLength ||
  !isPlainText(username) ||
  !isPlainText(password)

/**
 * Check a username and password, throttled per username and source address
 * (docs/decisions.md, password throttling), leaving its `settle`, or the record of its refusal
 * (`SignInRefused`), to the caller. While throttled
 * even the right password is refused. The attempt is admitted first (`PasswordChecks`): one
 * refused there has written nothing. `before` (store calls) commits with the attempt's count,
 * before the password is checked; when it fails nothing is counted.
 */
export const verify = <E = never, R = never>(
  username: string,
  password: string,
  address: string | undefined,
  source: SignInSource = { _tag: "Page", cookies: undefined },
  before?: Effect.Effect<void, E, R>
) =>
  Effect.gen(function* () {
    const malformed = isMalformed(username, password)
    const name = malformed ? "(malformed)" : username
    // Read before the throttle: a device cookie counts only for the account's current password
    const found = malformed
      ? Option.none<User>()
      : yield* Effect.flatMap(UserStore, (users) => users.findByUsername(username))
    const channel = yield* channelOf(source, Option.getOrNull(found))
    const keys = Throttle.signInKeys(name, address, channel)
    const checks = yield* PasswordChecks.PasswordChecks
    const services: Attempting = {
      store: yield* Throttle.ThrottleStore,
      policy: yield* Throttle.ThrottlePolicy,
      clock: yield* Effect.clock,
      hasher: yield* PasswordHasher,
      record: Audit.record
    }
    return yield* checks.admit(Throttle.signInTicket(name, address, channel), (pass) =>
      attempt(services, password, found, keys, malformed, pass, before)
    )
  })

/**
 * Check a username and password (`verify`), and settle the attempt: throttled per username and
 * source address (docs/decisions.md, password throttling).
 */
export const authenticate = Effect.fn("Accounts.authenticate")(function* (
  username: string,
  password: string,
  address: string | undefined,
  source: SignInSource = { _tag: "Page", cookies: undefined }
) {
  const { user, settle } = yield* Effect.catchTag(
    verify(username, password, address, source),
    "SignInRefused",
    (e) => Effect.zipRight(e.record, Effect.fail(new InvalidGrant({ description: badCredentials })))
  )
  yield* settle
  return user
}) satisfies (
  ...args: never
) => Effect.Effect<User, InvalidGrant | RateLimited | TemporarilyUnavailable | StorageError, unknown>

// The one answer to every refused password grant (a constant: its field is known good)
const invalidCredentials = new InvalidGrant({ description: badCredentials })

/** What `authenticateIn` reads from its request's services. */
export type CallRequirements =
  | UserStore
  | Throttle.ThrottleStore
  | Throttle.ThrottlePolicy
  | PasswordChecks.PasswordChecks
  | PasswordHasher

/**
 * `authenticate` of the password grant in the request `call`: its services read once, its audit
 * events of the request's address and id, the rules as plain code between the user's read, the
 * admission, the count and the password check: refused by admission or by the throttle, it has run
 * a few steps and written nothing.
 */
export const authenticateIn = (
  call: Call.Call<CallRequirements>,
  username: string,
  password: string,
  source: Extract<SignInSource, { readonly _tag: "Grant" }>
): Effect.Effect<
  User,
  InvalidGrant | RateLimited | TemporarilyUnavailable | StorageError,
  Throttle.ThrottleStore | Throttle.ThrottlePolicy
> => {
  const malformed = isMalformed(username, password)
  const name = malformed ? "(malformed)" : username
  const services: Attempting = {
    store: Call.use(call, Throttle.ThrottleStore),
    policy: Call.use(call, Throttle.ThrottlePolicy),
    clock: call.clock,
    hasher: Call.use(call, PasswordHasher),
    record: (type, fields) => Call.record(call, type, fields)
  }
  const keys = Throttle.signInKeys(name, call.address, source)
  const ticket = Throttle.signInTicket(name, call.address, source)
  const found = malformed
    ? Effect.succeed(Option.none<User>())
    : Call.use(call, UserStore).findByUsername(username)
  return Effect.flatMap(found, (user) =>
    Effect.matchEffect(
      Call.use(call, PasswordChecks.PasswordChecks).admit(ticket, (pass) =>
        attempt<never, never>(services, password, user, keys, malformed, pass, undefined)
      ),
      {
        onFailure: (e): Effect.Effect<never, InvalidGrant | StorageError | PasswordChecks.Refusal> =>
          e._tag === "SignInRefused"
            ? Effect.zipRight(e.record, Effect.fail(invalidCredentials))
            : Effect.fail(e),
        onSuccess: (verified) => Effect.as(verified.settle, verified.user)
      }
    )
  )
}

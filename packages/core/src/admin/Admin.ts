/**
 * Administration of applications, users, tokens, consents and the audit trail, shared by the
 * management CLI and the admin API (`AdminApi`). The rules on redirect URIs and secrets
 * (RFC 6749 §3.1.2, RFC 9700 §2.1, docs/security.md), what deleting or disabling takes with it,
 * and the audit event of every change are decided here, for every caller. Who acts comes from
 * `Audit.RequestInfo` (`actor`: `cli`, `admin-api`), which the caller provides.
 */
import { Data, Effect, identity, Option, Schema } from "effect"
import {
  type Application,
  defaultGrantTypes,
  livePreviousSecret,
  maxSecretGrace,
  publicGrantTypes
} from "../model/Application.js"
import { OpenIdParam } from "../model/OpenId.js"
import * as Scope from "../model/Scope.js"
import type { User } from "../model/User.js"
import { secretDigest } from "../oauth/ClientAuth.js"
import * as Accounts from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import * as Entropy from "../services/Entropy.js"
import { issueSeconds, nowSeconds } from "../services/internal/time.js"
import { PasswordHasher } from "../services/PasswordHasher.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { type Consent, ConsentStore } from "../storage/ConsentStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { TokenStore } from "../storage/TokenStore.js"
import { type PasswordOptions, UserStore } from "../storage/UserStore.js"
import { type Changes, checkImport, checkPublic, clientChanges, tokenFields } from "./internal/clientType.js"
import {
  checkGrantTypes,
  checkName,
  checkRedirectUris,
  checkScope,
  checkTtl,
  InvalidField,
  invalid,
  maxTtl as longestTtl,
  plain
} from "./internal/fields.js"

/**
 * The audit trail as administrators read it: `queryAudit` with its `AuditFilter`, the one bound
 * on how many events a query returns (`maxAuditLimit`, checked by `auditLimit`) and `parseSince`.
 */
export {
  auditLimit,
  maxAuditLimit,
  parseSince,
  queryAudit
} from "./internal/audit.js"

/** A value an administrator gave is not acceptable: `invalid_request` (400) naming the field. */
export { InvalidField } from "./internal/fields.js"

/** The signing keys: `listSigningKeys` (never a private part) and `rotateSigningKey` (audited). */
export { listSigningKeys, rotateSigningKey } from "./internal/keys.js"

/** There is no such application, user or consent (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  what: Schema.Literal("application", "user", "consent"),
  description: Schema.String
}) {
  readonly error = "not_found"
  readonly status = 404
}

/** What `app create` takes and answers, and what `app update` takes and answers. */
export type {
  ApplicationPatch,
  Created,
  CreatedFor,
  NewApplication,
  PublicCreated,
  Updated
} from "./internal/registration.js"

import type {
  ApplicationPatch,
  Created,
  CreatedFor,
  NewApplication,
  PublicCreated,
  Updated
} from "./internal/registration.js"

/** Imported App Keys (URL-safe characters only) and App Secrets (32–512 printable ASCII characters). */
export { AppKeyPattern, AppSecretPattern } from "./internal/clientType.js"
/** Longest token or code lifetime an application may set: one year, in seconds. */
export const maxTtl: number = longestTtl

/** A generated App Key: 128 random bits, base64url, starting with a letter or digit. */
const generateAppKey: Effect.Effect<string, never, Entropy.Entropy> = Entropy.argumentSafeId(16)

const noApplication = (appKey: string) =>
  new NotFound({ what: "application", description: `no application with App Key ${JSON.stringify(appKey)}` })

const noUser = (user: string) =>
  new NotFound({ what: "user", description: `no user named or with id ${JSON.stringify(user)}` })

/** Fail with `error` when a store's write reports that it found nothing to change. */
const found =
  <E>(error: () => E) =>
  <R>(write: Effect.Effect<boolean, R>): Effect.Effect<void, E | R> =>
    Effect.flatMap(write, (done) => (done ? Effect.void : Effect.fail(error())))

/** Validate and register a new application; recorded as `application_created` in the same write. */
const create = Effect.fn("Admin.createApplication")(function* (input: NewApplication) {
  const name = yield* checkName(input.name)
  const redirectUris = yield* checkRedirectUris(input.redirectUris)
  const scopes = yield* checkScope(input.scope ?? "")
  const isPublicApp = input.public === true
  const grantTypes = yield* checkGrantTypes(
    input.grantTypes ?? (isPublicApp ? publicGrantTypes : defaultGrantTypes)
  )
  if (isPublicApp) yield* checkPublic(grantTypes, input.requirePkce)
  yield* checkImport(input)
  const appKey = input.appKey ?? (yield* generateAppKey)
  const appSecret = isPublicApp ? null : (input.appSecret ?? (yield* Entropy.token))
  const app: Application = {
    appKey,
    name,
    secretDigest: appSecret === null ? "" : yield* secretDigest(appKey, appSecret),
    redirectUris,
    scopes,
    grantTypes,
    requirePkce: isPublicApp || (input.requirePkce ?? false),
    accessTokenTtl: yield* checkTtl("access_token_ttl", input.accessTokenTtl),
    refreshTokenTtl: yield* checkTtl("refresh_token_ttl", input.refreshTokenTtl),
    createdAt: yield* nowSeconds,
    ...(isPublicApp ? { public: true } : {}),
    ...(yield* tokenFields(input))
  }
  const apps = yield* ApplicationStore
  yield* Audit.recordWith(apps.insert(app), [
    ["application_created", { appKey, detail: `name ${JSON.stringify(name)}` }]
  ])
  return { app, appSecret } satisfies Created | PublicCreated
})

/**
 * Validate and register a new application; recorded as `application_created` in the same write.
 * A public one gets no App Secret (`secretDigest` empty, `Created.appSecret` null) and PKCE.
 */
export const createApplication = <I extends NewApplication>(
  input: I
): Effect.Effect<
  CreatedFor<I>,
  Effect.Effect.Error<ReturnType<typeof create>>,
  Effect.Effect.Context<ReturnType<typeof create>>
> => create(input) as Effect.Effect<CreatedFor<I>, never, never>

/**
 * Change an application's registration, validated like `createApplication`; recorded as
 * `application_updated` (detail: the fields changed) in the same write. Tokens issued before
 * keep working until they expire or are revoked. A patch that changes nothing writes and
 * records nothing. Making an application public empties its secret (and requires PKCE) in the
 * same write; making it confidential gives it a new App Secret, returned once in `appSecret`.
 */
export const updateApplication = Effect.fn("Admin.updateApplication")(function* (
  appKey: string,
  patch: ApplicationPatch
) {
  yield* plain("app_key", appKey)
  const changes: Changes = {}
  const fields: Array<string> = []
  if (patch.name !== undefined) {
    changes.name = yield* checkName(patch.name)
    fields.push("name")
  }
  if (patch.redirectUris !== undefined) {
    changes.redirectUris = yield* checkRedirectUris(patch.redirectUris)
    fields.push("redirect_uris")
  }
  if (patch.scope !== undefined) {
    changes.scopes = yield* checkScope(patch.scope)
    fields.push("scopes")
  }
  if (patch.grantTypes !== undefined) {
    changes.grantTypes = yield* checkGrantTypes(patch.grantTypes)
    fields.push("grant_types")
  }
  if (patch.requirePkce !== undefined) {
    changes.requirePkce = patch.requirePkce
    fields.push("require_pkce")
  }
  if (patch.accessTokenTtl !== undefined) {
    changes.accessTokenTtl = yield* checkTtl("access_token_ttl", patch.accessTokenTtl)
    fields.push("access_token_ttl")
  }
  if (patch.refreshTokenTtl !== undefined) {
    changes.refreshTokenTtl = yield* checkTtl("refresh_token_ttl", patch.refreshTokenTtl)
    fields.push("refresh_token_ttl")
  }
  const client = yield* clientChanges(appKey, patch, changes, findApplication(appKey))
  fields.push(...client.fields)
  if (fields.length === 0) return { app: yield* findApplication(appKey), appSecret: null } satisfies Updated
  const apps = yield* ApplicationStore
  // Fails inside the write when there is no such application, so no event is kept for it
  const write = Effect.flatMap(apps.update(appKey, changes), (updated) =>
    Option.match(updated, { onNone: () => Effect.fail(noApplication(appKey)), onSome: Effect.succeed })
  )
  const app = yield* Audit.recordWith(write, [
    ["application_updated", { appKey, detail: `changed ${fields.join(", ")}` }]
  ])
  return { app, appSecret: client.appSecret } satisfies Updated
})

/** A rotated App Secret, shown this once, and until when the one it replaced still works. */
export interface Rotated {
  readonly appSecret: string
  /** Epoch seconds from which the previous secret stops working; null when it stopped at once. */
  readonly previousSecretExpiresAt: number | null
}

/**
 * Give an application a new generated secret. With `graceSeconds` (a whole number up to
 * `Application.maxSecretGrace`, 30 days) the secret replaced keeps authenticating for that
 * long; a previous secret still in its grace is dropped, so at most one previous secret works
 * at a time. With 0 (the default) the old secret, and any previous one, stop at once. Recorded
 * as `secret_rotated` (detail: the grace) in the write that changes the secret.
 */
export const rotateSecret = Effect.fn("Admin.rotateSecret")(function* (appKey: string, graceSeconds = 0) {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > maxSecretGrace) {
    return yield* invalid(
      "grace_seconds",
      "the grace period must be a whole number of seconds from 0 to 30 days"
    )
  }
  const app = yield* findApplication(appKey)
  const apps = yield* ApplicationStore
  const appSecret = yield* Entropy.token
  const digest = yield* secretDigest(appKey, appSecret)
  // Rounded up like a token's issue time: the old secret works at least `graceSeconds`
  const previousSecretExpiresAt = graceSeconds === 0 ? null : (yield* issueSeconds) + graceSeconds
  const dropped = livePreviousSecret(app, yield* nowSeconds) !== null
  const detail = `grace ${graceSeconds}s${dropped ? "; the earlier previous secret stops now" : ""}`
  yield* Audit.recordWith(
    found(() => noApplication(appKey))(apps.updateSecret(appKey, digest, previousSecretExpiresAt)),
    [["secret_rotated", { appKey, detail }]]
  )
  return { appSecret, previousSecretExpiresAt } satisfies Rotated
})

/** The application with this App Key; `NotFound` when there is none. */
export const findApplication = Effect.fnUntraced(function* (appKey: string) {
  yield* plain("app_key", appKey)
  const app = yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(appKey))
  if (Option.isNone(app)) return yield* Effect.fail(noApplication(appKey))
  return app.value
})

/** Every application, oldest first. */
export const listApplications: Effect.Effect<
  ReadonlyArray<Application>,
  StorageError,
  ApplicationStore
> = Effect.flatMap(ApplicationStore, (apps) => apps.list())

/**
 * Delete an application; every token it holds is revoked with it. Recorded as
 * `application_deleted` in the same write.
 */
export const deleteApplication = Effect.fn("Admin.deleteApplication")(function* (appKey: string) {
  yield* plain("app_key", appKey)
  const now = yield* nowSeconds
  const apps = yield* ApplicationStore
  yield* Audit.recordWith(found(() => noApplication(appKey))(apps.remove(appKey, now)), [
    ["application_deleted", { appKey }]
  ])
})

/** A user, or a username or user id to look one up by (`findUser`). */
export type UserRef = User | string

/** The user with this username or else this user id; `NotFound` when there is none. */
export const findUser = Effect.fnUntraced(function* (usernameOrId: string) {
  yield* plain("user", usernameOrId)
  const users = yield* UserStore
  const byName = yield* users.findByUsername(usernameOrId)
  const user = Option.isSome(byName) ? byName : yield* users.findById(usernameOrId)
  if (Option.isNone(user)) return yield* Effect.fail(noUser(usernameOrId))
  return user.value
})

/** The user with exactly this user id; `NotFound` when there is none. */
export const findUserById = Effect.fnUntraced(function* (userId: string) {
  yield* plain("user_id", userId)
  const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
  if (Option.isNone(user)) return yield* Effect.fail(noUser(userId))
  return user.value
})

const resolveUser = (user: UserRef) => (typeof user === "string" ? findUser(user) : Effect.succeed(user))

/** Every user, oldest first. */
export const listUsers: Effect.Effect<ReadonlyArray<User>, StorageError, UserStore> = Effect.flatMap(
  UserStore,
  (users) => users.list()
)

/**
 * Create a user with a hashed password (the rules of `Accounts.createUser`); recorded as
 * `user_created` in the same write. Neither the username nor the password goes into the event.
 */
export const createUser = Effect.fn("Admin.createUser")(function* (username: string, password: string) {
  const usernameProblem = Accounts.usernameProblem(username)
  if (usernameProblem !== null) return yield* invalid("username", usernameProblem)
  const passwordProblem = Accounts.passwordProblem(password)
  if (passwordProblem !== null) return yield* invalid("password", passwordProblem)
  const user = yield* Accounts.makeUser(username, password).pipe(
    Effect.mapError((e) => new InvalidField({ field: "password", description: e.description }))
  )
  const users = yield* UserStore
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

const isOpenId = Schema.is(OpenIdParam)

/**
 * Revoke every token of one subject (`open_id`) of an application; recorded right after as
 * `subject_tokens_revoked` with the number revoked as its detail. `NotFound` for an unknown App Key.
 */
export const revokeSubjectTokens = Effect.fn("Admin.revokeSubjectTokens")(function* (
  appKey: string,
  openId: string
) {
  if (!isOpenId(openId)) return yield* invalid("open_id", "open_id must be 1-128 visible ASCII characters")
  yield* findApplication(appKey)
  const tokens = yield* TokenStore
  const revoked = yield* tokens.revokeSubject({ appKey, openId }, yield* nowSeconds)
  yield* Audit.record("subject_tokens_revoked", { appKey, openId, detail: `${revoked} tokens` })
  return revoked
})

/** Every consent a user has given, by App Key. */
export const listConsents = Effect.fn("Admin.listConsents")(function* (user: UserRef) {
  const target = yield* resolveUser(user)
  const consents = yield* Effect.flatMap(ConsentStore, (c) => c.list(target.userId))
  return { user: target, consents } satisfies {
    readonly user: User
    readonly consents: ReadonlyArray<Consent>
  }
})

/**
 * Withdraw a user's consent to an application, revoking that application's tokens of the user in
 * the same write, which records `consent_withdrawn`. `NotFound` when there is no such consent.
 */
export const withdrawConsent = Effect.fn("Admin.withdrawConsent")(function* (user: UserRef, appKey: string) {
  yield* plain("app_key", appKey)
  const target = yield* resolveUser(user)
  if (!(yield* withdrawConsentOf(target.userId, appKey))) {
    return yield* new NotFound({
      what: "consent",
      description: `user ${JSON.stringify(target.userId)} has no consent for App Key ${JSON.stringify(appKey)}`
    })
  }
  return target satisfies User
})

/** The consent was gone already (withdrawn from another tab or by an admin): nothing to record. */
class NothingWithdrawn extends Data.TaggedError("NothingWithdrawn") {}

/**
 * Withdraw the consent of the user with this id to the application (revoking its tokens for
 * them), recorded as `consent_withdrawn` with the scope it had, in the same transaction; false,
 * recording nothing, when there was none. The consents page and `withdrawConsent` both use it.
 */
export const withdrawConsentOf = Effect.fnUntraced(function* (userId: string, appKey: string) {
  const consents = yield* ConsentStore
  const given = yield* consents.find(userId, appKey)
  if (Option.isNone(given)) return false
  const gone = consents
    .withdraw(userId, appKey, yield* nowSeconds)
    .pipe(Effect.filterOrFail(identity, () => new NothingWithdrawn()))
  return yield* Audit.recordWith(gone, [
    ["consent_withdrawn", { appKey, userId, detail: Scope.format(given.value) }]
  ]).pipe(Effect.catchTag("NothingWithdrawn", () => Effect.succeed(false)))
})

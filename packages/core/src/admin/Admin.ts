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
  isPublic,
  livePreviousSecret,
  maxSecretGrace,
  publicGrantTypes
} from "../model/Application.js"
import { OpenIdParam } from "../model/OpenId.js"
import * as Scope from "../model/Scope.js"
import type { User } from "../model/User.js"
import { secretDigest } from "../oauth/ClientAuth.js"
import * as Audit from "../security/Audit.js"
import * as Entropy from "../services/Entropy.js"
import { issueSeconds, nowSeconds } from "../services/internal/time.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { type Consent, ConsentStore } from "../storage/ConsentStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { TokenStore } from "../storage/TokenStore.js"
import { type Changes, checkPublic, clientChanges, tokenFields } from "./internal/clientType.js"
import {
  checkGrantTypes,
  checkName,
  checkPostLogoutRedirectUris,
  checkRedirectUris,
  checkScope,
  checkTtl,
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
/**
 * The users (lookups, creation, passwords, disabling, deletion and the reset of their second
 * factor, each change audited), and
 * `NotFound`: there is no such application, user or consent (404).
 */
export {
  createUser,
  deleteUser,
  disableUser,
  enableUser,
  findUser,
  findUserById,
  listUsers,
  NotFound,
  resetFactors,
  setPassword,
  type UserRef
} from "./internal/users.js"

import { found, NotFound, resolveUser, type UserRef } from "./internal/users.js"

/** The signing keys: `listSigningKeys` (never a private part) and `rotateSigningKey` (audited). */
export { listSigningKeys, rotateSigningKey } from "./internal/keys.js"
/**
 * What the CLI and the admin API list, as both show it, with names beside ids: the audit trail
 * (`auditEventsJson`), a user's consents (`consentsJson`) and a subject's revoked tokens
 * (`revokedTokensJson`).
 */
export { auditEventsJson, consentsJson, revokedTokensJson } from "./internal/names.js"
/** The operator accounts of the console: created, listed, given a role or a password, deleted (each audited). */
export {
  createOperator,
  deleteOperator,
  findOperator,
  listOperators,
  setOperatorPassword,
  setOperatorRole
} from "./internal/operators.js"

/** What `app create` takes. */
export interface NewApplication {
  readonly name: string
  readonly redirectUris: ReadonlyArray<string>
  /** Scope list: comma- or space-separated, or one scope token per item. */
  readonly scope?: string | ReadonlyArray<string>
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
  /** Import an App Key that exists elsewhere (migration). */
  readonly appKey?: string
  /** Import an App Secret that exists elsewhere: at least 32 characters. */
  readonly appSecret?: string
  /** Access token lifetime in seconds; absent or null for the server default. */
  readonly accessTokenTtl?: number | null
  /** Refresh token lifetime in seconds; absent or null for the server default. */
  readonly refreshTokenTtl?: number | null
  /**
   * A public client (RFC 6749 §2.1): no App Secret, only the authorization_code and
   * refresh_token grants (the default for it), PKCE required. Absent means confidential.
   */
  readonly public?: boolean
  /** `opaque` (the default) or `jwt` (RFC 9068). */
  readonly accessTokenFormat?: string
  /** The `aud` of its JWT access tokens: an absolute URI, or absent or null for the issuer. */
  readonly accessTokenAudience?: string | null
  /** Browser origins (`https://app.example`) whose pages may call it (CORS); `Application.validateWebOrigin`. */
  readonly webOrigins?: ReadonlyArray<string>
  /** `client_secret_basic` (the default) or `client_secret_post`; a public application sends no secret at all. */
  readonly tokenEndpointAuthMethod?: string
  /** How its answers join scopes: `comma` (the default) or `space` (RFC 6749 §3.3). */
  readonly scopeDelimiter?: string
  /** Where RP-initiated logout may send the browser back to, checked like redirect URIs; none by default. */
  readonly postLogoutRedirectUris?: ReadonlyArray<string>
  /** Where logout tokens are POSTed (back-channel logout; https, or http on loopback); none by default. */
  readonly backchannelLogoutUri?: string | null
  /** Whether its logout tokens must carry `sid` (they always do). */
  readonly backchannelLogoutSessionRequired?: boolean
  /** Whether every authorization for it needs a second factor; false by default. */
  readonly requireMfa?: boolean
}

/** What `app update` may change; a field left out keeps its value, a null lifetime returns to the server default. */
export interface ApplicationPatch {
  readonly name?: string
  readonly redirectUris?: ReadonlyArray<string>
  /** Scope list: comma- or space-separated, or one scope token per item. */
  readonly scope?: string | ReadonlyArray<string>
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
  readonly accessTokenTtl?: number | null
  readonly refreshTokenTtl?: number | null
  /**
   * Make it public (its App Secret, and any previous one, stop working, and every refresh token
   * family it holds ends) or confidential (a new App Secret is generated and returned once, in
   * `Updated.appSecret`).
   */
  readonly public?: boolean
  readonly accessTokenFormat?: string
  readonly accessTokenAudience?: string | null
  /** The whole new list of web origins; empty removes them all. */
  readonly webOrigins?: ReadonlyArray<string>
  /** `client_secret_basic` or `client_secret_post`; refused for an application that is (or becomes) public. */
  readonly tokenEndpointAuthMethod?: string
  /** `comma` or `space`. */
  readonly scopeDelimiter?: string
  /** The whole new list of post-logout redirect URIs; empty removes them all. */
  readonly postLogoutRedirectUris?: ReadonlyArray<string>
  /** The back-channel logout URI; null removes it. */
  readonly backchannelLogoutUri?: string | null
  readonly backchannelLogoutSessionRequired?: boolean
  /** Whether every authorization for it needs a second factor. */
  readonly requireMfa?: boolean
}

/** A created confidential application and its secret, shown this once. */
export interface Created {
  readonly app: Application
  readonly appSecret: string
}

/** A created public application: it has no App Secret. */
export interface PublicCreated {
  readonly app: Application
  readonly appSecret: null
}

/**
 * What `createApplication` answers for an input of type `I`: `PublicCreated` when `I` says
 * `public: true`, `Created` when it cannot be public, either when it may be.
 */
export type CreatedFor<I extends NewApplication> = I extends { readonly public: true }
  ? PublicCreated
  : I extends { readonly public: false }
    ? Created
    : "public" extends keyof I
      ? Created | PublicCreated
      : Created

/** An updated application, and the App Secret generated when it became confidential (else null), shown this once. */
export interface Updated {
  readonly app: Application
  readonly appSecret: string | null
}

/** Imported App Keys: URL-safe characters only, so Basic credentials need no escaping. */
export const AppKeyPattern = /^[A-Za-z0-9\-._~]{1,128}$/
/** Imported App Secrets: 32–512 printable ASCII characters. */
export const AppSecretPattern = /^[\x21-\x7E]{32,512}$/
/** Longest token or code lifetime an application may set: one year, in seconds. */
export const maxTtl: number = longestTtl

/** A generated App Key: 128 random bits, base64url, starting with a letter or digit. */
const generateAppKey: Effect.Effect<string, never, Entropy.Entropy> = Entropy.argumentSafeId(16)

const noApplication = (appKey: string) =>
  new NotFound({ what: "application", description: `no application with App Key ${JSON.stringify(appKey)}` })

/** The imported App Key and App Secret, checked: both or neither, and no secret for a public application. */
const checkImport = Effect.fnUntraced(function* (input: NewApplication) {
  if (input.appKey !== undefined && !AppKeyPattern.test(input.appKey)) {
    return yield* invalid("app_key", "an imported App Key must be 1-128 characters of A-Z a-z 0-9 - . _ ~")
  }
  if (input.public === true && input.appSecret !== undefined) {
    return yield* invalid("app_secret", "a public application has no App Secret")
  }
  if (input.appSecret !== undefined && !AppSecretPattern.test(input.appSecret)) {
    return yield* invalid("app_secret", "an imported App Secret must be 32-512 printable ASCII characters")
  }
  if (input.public !== true && (input.appSecret === undefined) !== (input.appKey === undefined)) {
    return yield* invalid(
      input.appKey === undefined ? "app_key" : "app_secret",
      "--app-key and --app-secret are imported together"
    )
  }
})

/** Validate and register a new application; recorded as `application_created` in the same write. */
const create = Effect.fn("Admin.createApplication")(function* (input: NewApplication) {
  const name = yield* checkName(input.name)
  const isPublicApp = input.public === true
  const redirectUris = yield* checkRedirectUris(input.redirectUris, { public: isPublicApp })
  const scopes = yield* checkScope(input.scope ?? "")
  const grantTypes = yield* checkGrantTypes(
    input.grantTypes ?? (isPublicApp ? publicGrantTypes : defaultGrantTypes)
  )
  if (isPublicApp) yield* checkPublic(grantTypes, input.requirePkce, input.tokenEndpointAuthMethod)
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
    ...(input.requireMfa === true ? { requireMfa: true } : {}),
    ...(input.postLogoutRedirectUris === undefined
      ? {}
      : {
          postLogoutRedirectUris: yield* checkPostLogoutRedirectUris(input.postLogoutRedirectUris, {
            public: isPublicApp
          })
        }),
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
 * records nothing. Making an application public empties its secret (and requires PKCE) and
 * ends every refresh token family it holds (recorded as `family_revoked`) in the same write;
 * making it confidential gives it a new App Secret, returned once in `appSecret`.
 */
export const updateApplication = Effect.fn("Admin.updateApplication")(function* (
  appKey: string,
  patch: ApplicationPatch
) {
  yield* plain("app_key", appKey)
  const current = yield* Effect.cached(findApplication(appKey))
  const changes: Changes = {}
  const fields: Array<string> = []
  if (patch.name !== undefined) {
    changes.name = yield* checkName(patch.name)
    fields.push("name")
  }
  if (patch.redirectUris !== undefined) {
    const owner = { public: patch.public ?? isPublic(yield* current) }
    changes.redirectUris = yield* checkRedirectUris(patch.redirectUris, owner)
    fields.push("redirect_uris")
  } else if (patch.public === false && isPublic(yield* current)) {
    // RFC 8252 §8.4: an application that becomes confidential keeps no private-use scheme URI
    yield* checkRedirectUris((yield* current).redirectUris, { public: false })
  }
  if (patch.postLogoutRedirectUris !== undefined) {
    const owner = { public: patch.public ?? isPublic(yield* current) }
    changes.postLogoutRedirectUris = yield* checkPostLogoutRedirectUris(patch.postLogoutRedirectUris, owner)
    fields.push("post_logout_redirect_uris")
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
  if (patch.requireMfa !== undefined) {
    changes.requireMfa = patch.requireMfa
    fields.push("require_mfa")
  }
  if (patch.accessTokenTtl !== undefined) {
    changes.accessTokenTtl = yield* checkTtl("access_token_ttl", patch.accessTokenTtl)
    fields.push("access_token_ttl")
  }
  if (patch.refreshTokenTtl !== undefined) {
    changes.refreshTokenTtl = yield* checkTtl("refresh_token_ttl", patch.refreshTokenTtl)
    fields.push("refresh_token_ttl")
  }
  const client = yield* clientChanges(appKey, patch, changes, current)
  fields.push(...client.fields)
  if (fields.length === 0) return { app: yield* current, appSecret: null } satisfies Updated
  const apps = yield* ApplicationStore
  // Fails inside the write when there is no such application, so no event is kept for it
  const write = Effect.flatMap(apps.update(appKey, changes, yield* nowSeconds), (updated) =>
    Option.match(updated, { onNone: () => Effect.fail(noApplication(appKey)), onSome: Effect.succeed })
  )
  const app = yield* Audit.recordWith(write, [
    ["application_updated", { appKey, detail: `changed ${fields.join(", ")}` }],
    ...(changes.public === true
      ? [
          [
            "family_revoked",
            { appKey, detail: "every refresh token family: the application turned public" }
          ] as const
        ]
      : [])
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

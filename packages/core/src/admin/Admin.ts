/**
 * Administration of applications, users, tokens, consents and the audit trail, shared by the
 * management CLI and the admin API (`AdminApi`). The rules on redirect URIs and secrets
 * (RFC 6749 §3.1.2, RFC 9700 §2.1, docs/security.md), what deleting or disabling takes with it,
 * and the audit event of every change are decided here, for every caller. Who acts comes from
 * `Audit.RequestInfo` (`actor`: `cli`, `admin-api`), which the caller provides.
 */
import { Effect, Option } from "effect"
import {
  type Application,
  defaultGrantTypes,
  isPublic,
  livePreviousSecret,
  maxSecretGrace,
  publicGrantTypes,
  type Status,
  status
} from "../model/Application.js"
import * as Review from "../model/Review.js"
import { secretDigest } from "../oauth/ClientAuth.js"
import * as Audit from "../security/Audit.js"
import * as Entropy from "../services/Entropy.js"
import { issueSeconds, nowSeconds } from "../services/internal/time.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { atomically } from "../storage/Transaction.js"
import { findApplication, noApplication } from "./internal/applications.js"
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
  setPassword
} from "./internal/users.js"

import { found, NotFound } from "./internal/users.js"

/**
 * The scope catalogue: `createScope`, `updateScope`, `deleteScope` (each audited), `findScope`,
 * `listScopes`, and `seedScopes`, which adds the scopes of the server's descriptions it lacks.
 */
export {
  createScope,
  deleteScope,
  findScope,
  listScopes,
  type NewScope,
  type ScopePatch,
  type SeedDescriptions,
  type Seeded,
  seedScopes,
  updateScope
} from "./internal/scopes.js"

import { checkCatalogued } from "./internal/scopes.js"

/** The application with an App Key (`findApplication`; `NotFound` when there is none). */
export { findApplication } from "./internal/applications.js"
/**
 * A subject's tokens and a user's consents: `revokeSubjectTokens`, `listConsents`,
 * `withdrawConsent` and `withdrawConsentOf` (the consents page's too), each change audited.
 */
export { listConsents, revokeSubjectTokens, withdrawConsent, withdrawConsentOf } from "./internal/consents.js"
/** What `app create` takes, and what `app update` may change. */
export type { ApplicationPatch, NewApplication } from "./internal/inputs.js"
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
/**
 * The initial access tokens of dynamic client registration: `createInitialAccessToken` (shown
 * once), `listInitialAccessTokens`, `revokeInitialAccessToken` (each change audited).
 */
export {
  createInitialAccessToken,
  listInitialAccessTokens,
  maxUses as maxInitialAccessTokenUses,
  revokeInitialAccessToken
} from "./internal/registration.js"
/**
 * The review of applications and their owners (docs/platform.md): `reviewApplication` (approve,
 * reject, suspend, reinstate; `IllegalTransition` 409), `listOwners`, `addOwner`, `removeOwner`
 * and `applicationsOwnedBy`, each change audited with the actor.
 */
export {
  addOwner,
  applicationsOwnedBy,
  listOwners,
  removeOwner,
  reviewApplication
} from "./internal/review.js"

import type { ApplicationPatch, NewApplication } from "./internal/inputs.js"

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

/**
 * A new application's record, validated as `createApplication` validates it, in `status` (default
 * active), and its App Secret (null for a public one), without storing anything: for a caller
 * that stores it in a write of its own (`insertApplication`, `Registration`).
 */
export const prepareApplication = Effect.fnUntraced(function* (
  input: NewApplication,
  status: Status = "active"
) {
  const name = yield* checkName(input.name)
  const isPublicApp = input.public === true
  const redirectUris = yield* checkRedirectUris(input.redirectUris, { public: isPublicApp })
  const scopes = yield* Effect.flatMap(checkScope(input.scope ?? ""), checkCatalogued)
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
    ...(yield* tokenFields(input)),
    ...(status === "active" ? {} : { status })
  }
  return { app, appSecret } satisfies Created | PublicCreated
})

/** Whom an application is registered for: the developer who owns it, and the status it starts in. */
export interface OnBehalf {
  readonly owner: string
  readonly status: Status
}

/**
 * `createApplication` for a developer (`Developer.createApplication`): the application starts in
 * `onBehalf.status` and is owned by `onBehalf.owner`, both in the write that registers it.
 */
export const createOwnedApplication = <I extends NewApplication>(
  input: I,
  onBehalf: OnBehalf
): Effect.Effect<
  CreatedFor<I>,
  Effect.Effect.Error<ReturnType<typeof create>>,
  Effect.Effect.Context<ReturnType<typeof create>>
> => create(input, onBehalf) as Effect.Effect<CreatedFor<I>, never, never>

/**
 * Store a prepared application, owned by `onBehalf.owner` when given (both in one write, docs/platform.md),
 * recorded as `application_created` in the same write; its detail: the name, whom it is for, and
 * `how` it came, when given.
 */
export const insertApplication = (
  app: Application,
  options: { readonly onBehalf?: OnBehalf; readonly how?: string } = {}
) =>
  Effect.flatMap(ApplicationStore, (apps) => {
    const { onBehalf, how } = options
    const write =
      onBehalf === undefined
        ? apps.insert(app)
        : atomically(
            Effect.zipRight(
              apps.insert(app),
              found(() => new NotFound({ what: "user", description: "the owner no longer exists" }))(
                apps.addOwner(app.appKey, onBehalf.owner, app.createdAt)
              )
            )
          )
    const behalf = onBehalf === undefined ? "" : `, for user ${onBehalf.owner}, ${onBehalf.status}`
    const came = how === undefined ? "" : `; ${how}`
    return Audit.recordWith(write, [
      [
        "application_created",
        {
          appKey: app.appKey,
          userId: onBehalf?.owner ?? null,
          detail: `name ${JSON.stringify(app.name)}${behalf}${came}`
        }
      ]
    ])
  })

/** Validate and register a new application; recorded as `application_created` in the same write. */
const create = Effect.fn("Admin.createApplication")(function* (input: NewApplication, onBehalf?: OnBehalf) {
  const created = yield* prepareApplication(input, onBehalf?.status)
  yield* insertApplication(created.app, onBehalf === undefined ? {} : { onBehalf })
  return created
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
  patch: ApplicationPatch,
  resubmit = false
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
    changes.scopes = yield* Effect.flatMap(checkScope(patch.scope), checkCatalogued)
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
  const back = resubmit && sendsBack(yield* current, changes)
  const write = changing(yield* ApplicationStore, appKey, changes, yield* nowSeconds, back)
  const app = yield* Audit.recordWith(write, [
    [
      "application_updated",
      { appKey, detail: `changed ${fields.join(", ")}${back ? "; back to review" : ""}` }
    ],
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

/**
 * The write of `updateApplication`: the change, failing inside the write when there is no such
 * application (so no event is kept for it), and with `back` the return to review in the same
 * write (docs/platform.md).
 */
const changing = (
  apps: ApplicationStore["Type"],
  appKey: string,
  changes: Changes,
  now: number,
  back: boolean
) => {
  const some = <A>(after: Option.Option<A>) =>
    Option.match(after, { onNone: () => Effect.fail(noApplication(appKey)), onSome: Effect.succeed })
  const updated = Effect.flatMap(apps.update(appKey, changes, now), some)
  if (!back) return updated
  const pending = apps.setStatus(appKey, Review.resubmission, now).pipe(
    Effect.catchTag("StatusChanged", (e) => Effect.fail(Review.notEditable(appKey, e.status))),
    Effect.flatMap(some)
  )
  return atomically(Effect.zipRight(updated, pending))
}

/**
 * Whether a developer's `changes` send the active application `app` back to review: they change
 * its redirect URIs or its scopes (docs/platform.md).
 */
const sendsBack = (app: Application, changes: Changes): boolean => {
  const differs = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string>) =>
    a !== undefined && (a.length !== b.length || a.some((x, i) => x !== b[i]))
  return (
    status(app) === "active" &&
    (differs(changes.redirectUris, app.redirectUris) || differs(changes.scopes, app.scopes))
  )
}

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

/**
 * Administration of applications and users, as the management CLI does it. The
 * rules on redirect URIs and secrets (RFC 6749 §3.1.2, RFC 9700 §2.1,
 * docs/security.md) and what deleting an application or a user takes with it are
 * decided here, for every caller.
 */
import { Effect, Either, Option } from "effect"
import {
  type Application,
  defaultGrantTypes,
  GrantType,
  livePreviousSecret,
  maxSecretGrace,
  validateRedirectUri
} from "./Application.js"
import * as Audit from "./Audit.js"
import { secretDigest } from "./ClientAuth.js"
import * as Entropy from "./Entropy.js"
import { issueSeconds, nowSeconds } from "./internal/time.js"
import { InvalidRequest } from "./OAuthError.js"
import * as Scope from "./Scope.js"
import { ApplicationStore } from "./storage/ApplicationStore.js"
import { UserStore } from "./storage/UserStore.js"
import type { User } from "./User.js"

/** What `app create` takes. */
export interface NewApplication {
  readonly name: string
  readonly redirectUris: ReadonlyArray<string>
  /** Scope list, comma- or space-separated. */
  readonly scope?: string
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
  /** Import an App Key that exists elsewhere (migration). */
  readonly appKey?: string
  /** Import an App Secret that exists elsewhere: at least 32 characters. */
  readonly appSecret?: string
  readonly accessTokenTtl?: number
  readonly refreshTokenTtl?: number
}

/** A created application and its secret, shown this once. */
export interface Created {
  readonly app: Application
  readonly appSecret: string
}

/** Imported App Keys: URL-safe characters only, so Basic credentials need no escaping. */
export const AppKeyPattern = /^[A-Za-z0-9\-._~]{1,128}$/
/** Imported App Secrets: 32–512 printable ASCII characters. */
export const AppSecretPattern = /^[\x21-\x7E]{32,512}$/

/** A generated App Key: 128 random bits, base64url, starting with a letter or digit. */
const generateAppKey: Effect.Effect<string, never, Entropy.Entropy> = Entropy.argumentSafeId(16)

const bad = (description: string) => Effect.fail(new InvalidRequest({ description }))

const ttl = (name: string, value: number | undefined) =>
  value === undefined
    ? Effect.succeed(null)
    : Number.isInteger(value) && value > 0 && value <= 365 * 24 * 3600
      ? Effect.succeed(value)
      : bad(`${name} must be a whole number of seconds between 1 and one year`)

/** Validate and register a new application. */
export const createApplication = Effect.fn("Admin.createApplication")(function* (input: NewApplication) {
  const name = input.name.trim()
  if (name.length === 0 || name.length > 200) return yield* bad("name must be 1-200 characters")
  if (input.redirectUris.length === 0) return yield* bad("at least one redirect URI is required")
  const redirectUris: Array<string> = []
  for (const uri of input.redirectUris) {
    redirectUris.push(
      yield* Either.match(validateRedirectUri(uri), { onLeft: Effect.fail, onRight: Effect.succeed })
    )
  }
  const scopes = yield* Scope.parse(input.scope ?? "").pipe(
    Either.mapLeft((e) => new InvalidRequest({ description: e.description })),
    Either.match({ onLeft: Effect.fail, onRight: Effect.succeed })
  )
  const grantTypes: Array<GrantType> = []
  for (const g of input.grantTypes ?? defaultGrantTypes) {
    const decoded = Option.liftPredicate(g, (x): x is GrantType =>
      GrantType.literals.includes(x as GrantType)
    )
    if (Option.isNone(decoded)) return yield* bad(`unknown grant type ${JSON.stringify(g)}`)
    if (!grantTypes.includes(decoded.value)) grantTypes.push(decoded.value)
  }
  if (grantTypes.length === 0) return yield* bad("at least one grant type is required")
  if (input.appKey !== undefined && !AppKeyPattern.test(input.appKey)) {
    return yield* bad("an imported App Key must be 1-128 characters of A-Z a-z 0-9 - . _ ~")
  }
  if (input.appSecret !== undefined && !AppSecretPattern.test(input.appSecret)) {
    return yield* bad("an imported App Secret must be 32-512 printable ASCII characters")
  }
  if ((input.appSecret === undefined) !== (input.appKey === undefined)) {
    return yield* bad("--app-key and --app-secret are imported together")
  }
  const appKey = input.appKey ?? (yield* generateAppKey)
  const appSecret = input.appSecret ?? (yield* Entropy.token)
  const app: Application = {
    appKey,
    name,
    secretDigest: yield* secretDigest(appKey, appSecret),
    redirectUris,
    scopes,
    grantTypes,
    requirePkce: input.requirePkce ?? false,
    accessTokenTtl: yield* ttl("accessTokenTtl", input.accessTokenTtl),
    refreshTokenTtl: yield* ttl("refreshTokenTtl", input.refreshTokenTtl),
    createdAt: yield* nowSeconds
  }
  yield* Effect.flatMap(ApplicationStore, (apps) => apps.insert(app))
  return { app, appSecret } satisfies Created
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
    return yield* bad("the grace period must be a whole number of seconds from 0 to 30 days")
  }
  const found = yield* findApplication(appKey)
  const apps = yield* ApplicationStore
  const appSecret = yield* Entropy.token
  const digest = yield* secretDigest(appKey, appSecret)
  // Rounded up like a token's issue time: the old secret works at least `graceSeconds`
  const previousSecretExpiresAt = graceSeconds === 0 ? null : (yield* issueSeconds) + graceSeconds
  const dropped = livePreviousSecret(found, yield* nowSeconds) !== null
  const detail = `grace ${graceSeconds}s${dropped ? "; the earlier previous secret stops now" : ""}`
  const updated = yield* Audit.recordWith(apps.updateSecret(appKey, digest, previousSecretExpiresAt), [
    ["secret_rotated", { appKey, detail }]
  ])
  if (!updated) return yield* bad(`no application with App Key ${JSON.stringify(appKey)}`)
  return { appSecret, previousSecretExpiresAt } satisfies Rotated
})

/** The application with this App Key; `invalid_request` when there is none. */
export const findApplication = Effect.fnUntraced(function* (appKey: string) {
  const found = yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(appKey))
  if (Option.isNone(found)) return yield* bad(`no application with App Key ${JSON.stringify(appKey)}`)
  return found.value
})

/** Delete an application; every token it holds is revoked with it. */
export const deleteApplication = Effect.fnUntraced(function* (appKey: string) {
  const now = yield* nowSeconds
  const removed = yield* Effect.flatMap(ApplicationStore, (apps) => apps.remove(appKey, now))
  if (!removed) return yield* bad(`no application with App Key ${JSON.stringify(appKey)}`)
})

/**
 * Delete a user, named by username or else by user id: their tokens are revoked
 * and their consents forgotten; a sign-in session of theirs continues anonymous.
 * Returns the deleted user.
 */
export const deleteUser = Effect.fnUntraced(function* (usernameOrId: string) {
  const users = yield* UserStore
  const byName = yield* users.findByUsername(usernameOrId)
  const found = Option.isSome(byName) ? byName : yield* users.findById(usernameOrId)
  if (Option.isNone(found)) return yield* bad(`no user named or with id ${JSON.stringify(usernameOrId)}`)
  yield* users.remove(found.value.userId, yield* nowSeconds)
  return found.value satisfies User
})

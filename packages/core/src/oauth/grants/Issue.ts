/**
 * Minting token sets: fresh random values (or, for an application whose access tokens are JWTs,
 * a signed RFC 9068 access token), stored as digests, answered as the token response of
 * RFC 6749 §5.1.
 */
import { Effect, Option, Schema } from "effect"
import type { Application } from "../../model/Application.js"
import { accessTokenAudience, accessTokenFormat, allows, scopeDelimiter } from "../../model/Application.js"
import { Config } from "../../model/Config.js"
import * as Scope from "../../model/Scope.js"
import { type SignIn, sessionMethod } from "../../model/SignIn.js"
import type { Token } from "../../model/Token.js"
import * as Claims from "../../openid/Claims.js"
import * as IdToken from "../../openid/IdToken.js"
import type * as Audit from "../../security/Audit.js"
import * as Strength from "../../security/Strength.js"
import * as Entropy from "../../services/Entropy.js"
import { encode } from "../../services/internal/base64url.js"
import { expiry, type IssueTime, issueTimeAt } from "../../services/internal/time.js"
import * as AccessToken from "../AccessToken.js"
import * as Call from "../Call.js"

/** The JSON body of a successful token response (RFC 6749 §5.1), as the OpenAPI document shows it. */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  scope: Schema.String,
  refresh_token: Schema.optionalWith(Schema.String, { exact: true }),
  open_id: Schema.optionalWith(Schema.String, { exact: true }),
  /** OpenID Connect Core §3.1.3.3: the ID token, when the scope includes `openid`. */
  id_token: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "TokenResponse" })
/** A token response. */
export type TokenResponse = typeof TokenResponse.Type

/** What a new token set is for. */
export interface Grant {
  readonly app: Application
  readonly userId: string | null
  readonly openId: string | null
  /** Scope of the access token. */
  readonly scope: Scope.ScopeSet
  /** Scope of the refresh token: the original grant's (RFC 6749 §6). */
  readonly grantScope: Scope.ScopeSet
  readonly familyId: string
  readonly parentHash: string | null
  readonly withRefresh: boolean
  /**
   * The user and the authorization request's nonce and sign-in time, for an ID token: given by
   * the authorization_code and refresh_token grants only, minted when `scope` includes `openid`.
   */
  readonly openIdContext?: Pick<IdToken.Subject, "user" | "nonce" | "authTime" | "sid">
  /**
   * The browser sign-in the grant came from (an OpenID request's code, or a refresh token of one):
   * its tokens record it, their introspection and JWT tell its `acr` and `auth_time`, and its ID
   * token its `acr` and `amr`. Absent for every other grant.
   */
  readonly signIn?: SignIn
}

/** A minted token set: the records to store and the response to send once they are stored. */
export interface Minted {
  readonly records: ReadonlyArray<Token>
  readonly response: TokenResponse
}

/** The `token_issued` audit event of a grant, recorded in the transaction that stores its tokens. */
export const issuedEvent = (grant: Grant, grantType: string): readonly [Audit.EventType, Audit.Fields] => [
  "token_issued",
  { appKey: grant.app.appKey, openId: grant.openId, detail: grantType }
]

/** Whether a grant for this application carries a refresh token: only if it may use the refresh_token grant. */
export const refreshAllowed = (app: Application): boolean => allows(app, "refresh_token")

/**
 * The part of a scope the application is still registered for: a scope its operator took from the
 * registration since the grant is dropped from what a refresh or a code redemption issues.
 */
export const registeredScope = (app: Application, scope: Scope.ScopeSet): Scope.ScopeSet =>
  Scope.make(scope.filter((item) => app.scopes.includes(item)))

/** The `acr` and RFC 8176 `amr` of a sign-in (`Strength`). */
const strengthOf = (signIn: SignIn): { readonly acr: string; readonly amr: ReadonlyArray<string> } => {
  const method = sessionMethod(signIn.method)
  return { acr: Strength.acrOf(method), amr: Strength.amrOf(method) }
}

/**
 * The JWT access token (RFC 9068) of a grant for an application whose format is `jwt`: its
 * open_id (or App Key) as subject, the application's audience, a fresh `jti`, living `ttl`.
 */
const jwtAccessToken = (grant: Grant, time: IssueTime, ttl: number) =>
  Effect.gen(function* () {
    const { issuer } = yield* Config
    return yield* AccessToken.sign({
      issuer,
      audience: accessTokenAudience(grant.app, issuer),
      appKey: grant.app.appKey,
      openId: grant.openId,
      subjectType: grant.userId !== null ? "user" : "application",
      scope: grant.scope,
      jti: yield* Entropy.id(),
      issuedAt: time.issuedAt,
      expiresAt: expiry(time, ttl),
      ...(grant.signIn === undefined
        ? {}
        : { acr: strengthOf(grant.signIn).acr, authTime: grant.signIn.authTime })
    })
  })

/**
 * The ID token of a grant whose scope includes `openid` (the application registered for it, as
 * the scope is cut to its registration) and that names a user and an open_id; none otherwise.
 */
const idTokenOf = (grant: Grant, tokenHash: string, time: IssueTime) => {
  const context = grant.openIdContext
  if (context === undefined || grant.openId === null || !Claims.requested(grant.scope)) return null
  const subject = {
    ...context,
    appKey: grant.app.appKey,
    openId: grant.openId,
    scope: grant.scope,
    ...(grant.signIn === undefined ? {} : strengthOf(grant.signIn))
  }
  return IdToken.mint(subject, tokenHash, time)
}

/** A random value of `Entropy.tokenBytes` and its digest, handed to `f`. */
const randomWithDigest = <A, E, R>(
  call: Call.Call<Entropy.Entropy>,
  f: (token: Digested) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Call.use(call, Entropy.Entropy).bytes(Entropy.tokenBytes), (random) => {
    const value = encode(random)
    return Effect.flatMap(call.digest.sha256(value), (hash) => f({ value, hash }))
  })

/** A token and its digest. */
interface Digested {
  readonly value: string
  readonly hash: string
}

/** What minting reads: the Config, randomness and, for JWT access tokens and ID tokens, the signing keys. */
export type MintRequirements =
  | Config
  | Entropy.Entropy
  | Effect.Effect.Context<ReturnType<typeof jwtAccessToken>>

/**
 * Mint an access token (and a refresh token when asked) for a grant of the request `call`. Nothing
 * is stored yet. An opaque token set is its random values and their digests, and the records and
 * response as plain values: a step per random value and per digest.
 */
export const mint = (call: Call.Call<MintRequirements>, grant: Grant) => {
  const config = call.config
  // RFC 7519 §4.1.6: iat is never after the issue instant; the expiry is rounded up instead, so the
  // tokens live at least the expires_in they report (docs/decisions.md)
  const time = issueTimeAt(Call.millis(call))
  const jwt = accessTokenFormat(grant.app) === "jwt"
  const ttl = {
    access: grant.app.accessTokenTtl ?? (jwt ? config.jwtAccessTokenTtl : config.accessTokenTtl),
    refresh: grant.app.refreshTokenTtl ?? config.refreshTokenTtl
  }
  const withAccess = <A, E, R>(f: (access: Digested) => Effect.Effect<A, E, R>) =>
    jwt
      ? Effect.flatMap(jwtAccessToken(grant, time, ttl.access), (value) =>
          Effect.flatMap(call.digest.sha256(value), (hash) => f({ value, hash }))
        )
      : randomWithDigest(call, f)
  const finish = (access: Digested, refresh: Digested | null) => {
    const idToken = idTokenOf(grant, access.hash, time)
    return idToken === null
      ? Effect.succeed(minted(grant, time, ttl, access, refresh, Option.none()))
      : Effect.map(idToken, (id) => minted(grant, time, ttl, access, refresh, Option.some(id)))
  }
  return withAccess((access) =>
    grant.withRefresh ? randomWithDigest(call, (refresh) => finish(access, refresh)) : finish(access, null)
  )
}

/**
 * The record of a minted token (objects of one shape per kind of grant, built whole: no spread per
 * token), with the sign-in the grant came from, if any.
 */
const record = (
  grant: Grant,
  time: IssueTime,
  kind: Token["kind"],
  tokenHash: string,
  scope: Scope.ScopeSet,
  expiresAt: number
): Token =>
  grant.signIn === undefined
    ? {
        tokenHash,
        kind,
        appKey: grant.app.appKey,
        userId: grant.userId,
        openId: grant.openId,
        scope,
        familyId: grant.familyId,
        parentHash: grant.parentHash,
        issuedAt: time.issuedAt,
        expiresAt,
        revokedAt: null,
        rotatedAt: null
      }
    : {
        tokenHash,
        kind,
        appKey: grant.app.appKey,
        userId: grant.userId,
        openId: grant.openId,
        scope,
        familyId: grant.familyId,
        parentHash: grant.parentHash,
        issuedAt: time.issuedAt,
        expiresAt,
        revokedAt: null,
        rotatedAt: null,
        authTime: grant.signIn.authTime,
        signInMethod: grant.signIn.method
      }

/** The records and response of a minted token set. */
const minted = (
  grant: Grant,
  time: IssueTime,
  ttl: { readonly access: number; readonly refresh: number },
  access: Digested,
  refresh: Digested | null,
  idToken: Option.Option<string>
): Minted => {
  const records: Array<Token> = [
    record(grant, time, "access", access.hash, grant.scope, expiry(time, ttl.access))
  ]
  const response: { -readonly [K in keyof TokenResponse]: TokenResponse[K] } = {
    access_token: access.value,
    token_type: "Bearer",
    expires_in: ttl.access,
    scope: Scope.format(grant.scope, scopeDelimiter(grant.app))
  }
  if (refresh !== null) {
    records.push(record(grant, time, "refresh", refresh.hash, grant.grantScope, expiry(time, ttl.refresh)))
    response.refresh_token = refresh.value
  }
  if (grant.openId !== null) response.open_id = grant.openId
  if (Option.isSome(idToken)) response.id_token = idToken.value
  return { records, response }
}

/** `mint` outside a protocol request (the implicit grant of the authorize endpoint). */
export const mintHere = (grant: Grant) =>
  Call.run({}, (call: Call.Call<MintRequirements>) => mint(call, grant))

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
import type { Token } from "../../model/Token.js"
import * as Claims from "../../openid/Claims.js"
import * as IdToken from "../../openid/IdToken.js"
import type * as Audit from "../../security/Audit.js"
import { sha256 } from "../../services/Digest.js"
import * as Entropy from "../../services/Entropy.js"
import { expiry, type IssueTime, issueTime } from "../../services/internal/time.js"
import * as AccessToken from "../AccessToken.js"

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
  readonly openIdContext?: Pick<IdToken.Subject, "user" | "nonce" | "authTime">
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
      expiresAt: expiry(time, ttl)
    })
  })

/**
 * The ID token of a grant whose scope includes `openid` (the application registered for it, as
 * the scope is cut to its registration) and that names a user and an open_id; none otherwise.
 */
const idTokenOf = (grant: Grant, tokenHash: string, time: IssueTime) => {
  const context = grant.openIdContext
  if (context === undefined || grant.openId === null || !Claims.requested(grant.scope))
    return Effect.succeed(Option.none<string>())
  const subject = { ...context, appKey: grant.app.appKey, openId: grant.openId, scope: grant.scope }
  return Effect.map(IdToken.mint(subject, tokenHash, time), Option.some)
}

/** Mint an access token (and a refresh token when asked) for a grant. Nothing is stored yet. */
export const mint = Effect.fnUntraced(function* (grant: Grant) {
  const config = yield* Config
  // RFC 7519 §4.1.6: iat is never after the issue instant; the expiry is rounded up instead, so the
  // tokens live at least the expires_in they report (docs/decisions.md)
  const time = yield* issueTime
  const jwt = accessTokenFormat(grant.app) === "jwt"
  const accessTtl = grant.app.accessTokenTtl ?? (jwt ? config.jwtAccessTokenTtl : config.accessTokenTtl)
  const access = jwt ? yield* jwtAccessToken(grant, time, accessTtl) : yield* Entropy.token
  const accessHash = yield* sha256(access)
  const base = {
    appKey: grant.app.appKey,
    userId: grant.userId,
    openId: grant.openId,
    familyId: grant.familyId,
    parentHash: grant.parentHash,
    issuedAt: time.issuedAt,
    revokedAt: null,
    rotatedAt: null
  }
  const records: Array<Token> = [
    {
      ...base,
      tokenHash: accessHash,
      kind: "access",
      scope: grant.scope,
      expiresAt: expiry(time, accessTtl)
    }
  ]
  let refresh: Option.Option<string> = Option.none()
  if (grant.withRefresh) {
    const value = yield* Entropy.token
    refresh = Option.some(value)
    const ttl = grant.app.refreshTokenTtl ?? config.refreshTokenTtl
    records.push({
      ...base,
      tokenHash: yield* sha256(value),
      kind: "refresh",
      scope: grant.grantScope,
      expiresAt: expiry(time, ttl)
    })
  }
  const idToken = yield* idTokenOf(grant, accessHash, time)
  const response: TokenResponse = {
    access_token: access,
    token_type: "Bearer",
    expires_in: accessTtl,
    scope: Scope.format(grant.scope, scopeDelimiter(grant.app)),
    ...(Option.isSome(refresh) ? { refresh_token: refresh.value } : {}),
    ...(grant.openId !== null ? { open_id: grant.openId } : {}),
    ...(Option.isSome(idToken) ? { id_token: idToken.value } : {})
  }
  return { records, response } satisfies Minted
})

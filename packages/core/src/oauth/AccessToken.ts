/**
 * JWT access tokens (RFC 9068): the claims an application's JWT access token carries, signing
 * them when it is minted, and verifying one locally (signature against the published keys,
 * issuer, `typ` at+jwt, audience, lifetime) without reading the TokenStore.
 */
import { Effect, Either, Schema } from "effect"
import * as Scope from "../model/Scope.js"
import type { SubjectType } from "../model/Token.js"
import * as Jwt from "../signing/Jwt.js"

/**
 * The claims of a JWT access token. `sub` is the token's open_id, or the App Key for an
 * application's own token; `scope` is space-delimited (RFC 9068 §2.2.3); `subject_type` is
 * present exactly when `sub` is an open_id and says how it was established, as introspection's
 * `subject_type` does (`user`: a platform user; `application`: asserted by the application).
 */
export const Claims = Schema.Struct({
  iss: Schema.String,
  sub: Schema.String,
  aud: Schema.String,
  client_id: Schema.String,
  scope: Schema.String,
  jti: Schema.String,
  iat: Schema.Int,
  exp: Schema.Int,
  subject_type: Schema.optionalWith(
    Schema.Literal("user", "application") satisfies Schema.Schema<SubjectType>,
    {
      exact: true
    }
  ),
  /** RFC 9068 §2.2.1: the `acr` of the browser sign-in the token came from, when it records one. */
  acr: Schema.optionalWith(Schema.String, { exact: true }),
  /** RFC 9068 §2.2.1: when the user signed in (epoch seconds), with `acr`. */
  auth_time: Schema.optionalWith(Schema.Int, { exact: true })
}).annotations({ identifier: "AccessTokenClaims" })
/** The claims of a JWT access token. */
export type Claims = typeof Claims.Type

/** What a JWT access token is minted for. */
export interface Subject {
  readonly issuer: string
  readonly audience: string
  readonly appKey: string
  /** The token's open_id, or null for the application's own token. */
  readonly openId: string | null
  /** How `openId` was established (ignored without one). */
  readonly subjectType: SubjectType
  readonly scope: Scope.ScopeSet
  readonly jti: string
  readonly issuedAt: number
  readonly expiresAt: number
  /** The `acr` of the browser sign-in the token came from, with `authTime`; absent without one. */
  readonly acr?: string
  readonly authTime?: number
}

/** The claims of the JWT access token for `subject`. */
export const claims = (subject: Subject): Claims => ({
  iss: subject.issuer,
  sub: subject.openId ?? subject.appKey,
  aud: subject.audience,
  client_id: subject.appKey,
  scope: subject.scope.join(" "),
  jti: subject.jti,
  iat: subject.issuedAt,
  exp: subject.expiresAt,
  ...(subject.openId === null ? {} : { subject_type: subject.subjectType }),
  ...(subject.acr === undefined || subject.authTime === undefined
    ? {}
    : { acr: subject.acr, auth_time: subject.authTime })
})

/** Sign the JWT access token for `subject` with the signing key, `typ` at+jwt. */
export const sign = (subject: Subject) => Jwt.sign({ ...claims(subject) }, Jwt.accessTokenType)

/** What a verified JWT access token speaks for. */
export interface Verified {
  readonly clientId: string
  readonly openId: string | null
  readonly subjectType: SubjectType | null
  readonly scope: Scope.ScopeSet
  readonly expiresAt: number
}

const decodeClaims = Schema.decodeUnknownEither(Claims)

/**
 * Verify a JWT access token issued by this server for `audience`, from its signature and claims
 * only: what it speaks for, or InvalidJwt. An application's own token (no `subject_type`) must
 * name the application as its subject.
 */
export const verify = (token: string, audience: string) =>
  Effect.gen(function* () {
    const payload = yield* Jwt.verify(token, { typ: Jwt.accessTokenType, audience })
    const decoded = decodeClaims(payload)
    if (Either.isLeft(decoded)) return yield* Effect.fail(new Jwt.InvalidJwt({ reason: "unexpected claims" }))
    const c = decoded.right
    // Space-delimited (RFC 9068 §2.2.3): a comma is no separator here, and no scope token has one
    const scope = c.scope.includes(",") ? Either.left(undefined) : Scope.parse(c.scope)
    if (Either.isLeft(scope)) return yield* Effect.fail(new Jwt.InvalidJwt({ reason: "unreadable scope" }))
    if (c.subject_type === undefined && c.sub !== c.client_id)
      return yield* Effect.fail(
        new Jwt.InvalidJwt({ reason: "subject is neither an open_id nor the client" })
      )
    return {
      clientId: c.client_id,
      openId: c.subject_type === undefined ? null : c.sub,
      subjectType: c.subject_type ?? null,
      scope: scope.right,
      expiresAt: c.exp
    } satisfies Verified
  })

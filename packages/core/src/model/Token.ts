/**
 * Access and refresh tokens: stored by SHA-256 digest, grouped in families that
 * descend from one original grant, rotated on refresh.
 */
import { Schema } from "effect"
import * as Scope from "./Scope.js"
import { SignedInWith } from "./SignIn.js"

/** Which kind of token a row is; lookups are namespaced by kind (no type confusion). */
export const Kind = Schema.Literal("access", "refresh")
/** A token kind. */
export type Kind = typeof Kind.Type

/** A stored token. */
export const Token = Schema.Struct({
  tokenHash: Schema.String,
  kind: Kind,
  appKey: Schema.String,
  /** The platform user, when the token was granted by one. */
  userId: Schema.NullOr(Schema.String),
  /** The subject within the application (its `open_id`, see OpenId.ts), when there is one. */
  openId: Schema.NullOr(Schema.String),
  /** Access token: the scope it carries. Refresh token: the original grant's scope (RFC 6749 §6). */
  scope: Scope.ScopeSet,
  familyId: Schema.String,
  /** The refresh token this one was obtained with, if any. */
  parentHash: Schema.NullOr(Schema.String),
  issuedAt: Schema.Number,
  expiresAt: Schema.Number,
  revokedAt: Schema.NullOr(Schema.Number),
  /** Refresh tokens only: when it was exchanged for a successor (a tombstone from then on). */
  rotatedAt: Schema.NullOr(Schema.Number),
  /**
   * When the user signed in, for a token of an OpenID request's browser sign-in (its code, and the
   * refreshes of its tokens), with `signInMethod`: introspection's and a JWT's `auth_time`. Absent
   * (a store reads NULL so) for every other token.
   */
  authTime: Schema.optionalWith(Schema.Number, { exact: true }),
  /** How the user signed in at `authTime` (`SignIn.SignedInWith`): the `acr` the token tells. */
  signInMethod: Schema.optionalWith(SignedInWith, { exact: true })
})
/** A stored token. */
export type Token = typeof Token.Type

/** Whether a token is usable at `now`: unexpired, unrevoked and (for refresh) unrotated. */
export const isActive = (t: Token, now: number): boolean =>
  t.revokedAt === null && t.rotatedAt === null && t.expiresAt > now

/** How a token's subject was established. */
export type SubjectType = "user" | "application"

/** `user` when a platform user stands behind the token, `application` when the application asserted its open_id. */
export const subjectType = (t: Token): SubjectType => (t.userId !== null ? "user" : "application")

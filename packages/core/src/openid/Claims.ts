/**
 * The OpenID Connect claims a user's record yields, by the scope granted (OpenID Connect Core
 * 1.0 §5.4): the one table both the ID token and the userinfo endpoint read. A user record holds a
 * username only (no name, email or phone), so `profile` yields `preferred_username` and `email`,
 * accepted as a scope, yields no claim.
 */
import * as Scope from "../model/Scope.js"
import type { User } from "../model/User.js"

/** The scope that asks for OpenID Connect: an ID token at the token endpoint, and the userinfo endpoint. */
export const openidScope = "openid"

/** The required scope of the userinfo endpoint, as a scope set. */
export const openidScopeSet: Scope.ScopeSet = Scope.make([openidScope as Scope.ScopeToken])

/** Whether a granted scope includes `openid`. */
export const requested = (scope: Scope.ScopeSet): boolean =>
  (scope as ReadonlyArray<string>).includes(openidScope)

/** The claims each standard scope yields from a user record: the single mapping of scopes to claims. */
const byScope = {
  profile: { preferred_username: (user: User) => user.username },
  // No email address is kept for a user: the scope is accepted and yields no claim
  email: {}
} as const satisfies Readonly<Record<string, Readonly<Record<string, (user: User) => string>>>>

/** An OpenID scope this server understands: `openid` and the standard scopes that yield claims. */
export type SupportedScope = typeof openidScope | keyof typeof byScope

/** The OpenID scopes this server understands (the discovery document's `scopes_supported`). */
export const scopesSupported: ReadonlyArray<SupportedScope> = [
  openidScope,
  ...(Object.keys(byScope) as Array<keyof typeof byScope>)
]

/**
 * The claims of an ID token without a user claim: who issued it, to whom, about whom, when, and
 * how the user signed in (`acr`, `amr`).
 */
const tokenClaims = [
  "sub",
  "iss",
  "aud",
  "exp",
  "iat",
  "auth_time",
  "acr",
  "amr",
  "nonce",
  "at_hash"
] as const

/** Every claim an ID token or a userinfo answer may carry (the discovery document's `claims_supported`). */
export const claimsSupported: ReadonlyArray<string> = [
  ...tokenClaims,
  ...Object.values(byScope).flatMap((claims) => Object.keys(claims))
]

/** The user claims `scope` grants from `user`'s record, in the order of the scopes. */
export const forScope = (user: User, scope: Scope.ScopeSet): Readonly<Record<string, string>> =>
  Object.fromEntries(
    scope.flatMap((item) =>
      Object.hasOwn(byScope, item)
        ? Object.entries(
            byScope[item as keyof typeof byScope] as Readonly<Record<string, (user: User) => string>>
          ).map(([claim, of]) => [claim, of(user)] as const)
        : []
    )
  )

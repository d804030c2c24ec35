/**
 * Token introspection (RFC 7662) and revocation (RFC 7009) for the
 * authenticated application's own tokens.
 */
import { Effect, Either, Option, Schema } from "effect"
import { type Application, inService, scopeDelimiter } from "../model/Application.js"
import type { InvalidRequest } from "../model/OAuthError.js"
import * as Scope from "../model/Scope.js"
import * as SignIn from "../model/SignIn.js"
import { isActive, type Kind, type SubjectType, subjectType, type Token } from "../model/Token.js"
import * as Strength from "../security/Strength.js"
import type { StorageError } from "../storage/StorageError.js"
import { TokenStore } from "../storage/TokenStore.js"
import * as Call from "./Call.js"
import type { Params } from "./requests/Form.js"
import { caps, decode, Text } from "./requests/Params.js"

/**
 * RFC 7662 §2.2 response, as the OpenAPI document shows it: exactly `{active: false}` for
 * anything not active and owned. `subject_type` says how `sub` was established: `user` (a
 * platform user signed in or gave a password), `application` (asserted by the application).
 * `acr` and `auth_time` tell the browser sign-in a token of an OpenID request came from.
 */
export const IntrospectionResponse = Schema.Union(
  Schema.Struct({ active: Schema.Literal(false) }),
  Schema.Struct({
    active: Schema.Literal(true),
    scope: Schema.String,
    client_id: Schema.String,
    token_type: Schema.String,
    exp: Schema.Int,
    iat: Schema.Int,
    sub: Schema.optionalWith(Schema.String, { exact: true }),
    subject_type: Schema.optionalWith(
      Schema.Literal("user", "application") satisfies Schema.Schema<SubjectType>,
      {
        exact: true
      }
    ),
    acr: Schema.optionalWith(Schema.String, { exact: true }),
    auth_time: Schema.optionalWith(Schema.Int, { exact: true })
  })
).annotations({ identifier: "IntrospectionResponse" })
/** An introspection response. */
export type IntrospectionResponse = typeof IntrospectionResponse.Type

/**
 * The form of introspection and revocation (RFC 7662 §2.1, RFC 7009 §2.1): the token, never in
 * the query string, and a hint of its kind; a hint of another kind is ignored (RFC 7662 §2.1).
 */
export const TokenForm = Schema.Struct({
  token: Text(caps.token),
  token_type_hint: Schema.optionalWith(
    Schema.String.annotations({
      description: "access_token or refresh_token: the kind looked up first; any other value is ignored"
    }),
    { exact: true }
  )
}).annotations({ identifier: "TokenForm" })

const tokenForm = decode(TokenForm)

// Another application's token is as good as unknown (docs/security.md, checklist V2)
const owned = (found: Option.Option<Token>, app: Application): boolean =>
  Option.isSome(found) && found.value.appKey === app.appKey

/** Find the application's token by value, trying the hinted kind first. */
const lookup = (
  call: Call.Call<TokenStore>,
  params: Params,
  app: Application
): Effect.Effect<Option.Option<Token>, InvalidRequest | StorageError> => {
  const form = tokenForm(params)
  if (Either.isLeft(form)) return Effect.fail(form.left)
  const tokens = Call.use(call, TokenStore)
  const [first, second]: readonly [Kind, Kind] =
    form.right.token_type_hint === "refresh_token" ? ["refresh", "access"] : ["access", "refresh"]
  return Effect.flatMap(call.digest.sha256(form.right.token), (hash) =>
    Effect.flatMap(tokens.find(first, hash), (found) =>
      owned(found, app)
        ? Effect.succeed(found)
        : Effect.map(tokens.find(second, hash), (other) => (owned(other, app) ? other : Option.none()))
    )
  )
}

/**
 * The answer of introspection about `found` at `now`: inactive too while the application (whose
 * token it is) is not active (docs/platform.md).
 */
const answer = (found: Option.Option<Token>, app: Application, now: number): IntrospectionResponse => {
  if (Option.isNone(found) || !isActive(found.value, now) || !inService(app)) return { active: false }
  const t = found.value
  const scope = Scope.format(t.scope, scopeDelimiter(app))
  const tokenType = t.kind === "access" ? "Bearer" : "refresh_token"
  // Each shape built whole (no spread per answer)
  if (t.openId === null)
    return {
      active: true,
      scope,
      client_id: t.appKey,
      token_type: tokenType,
      exp: t.expiresAt,
      iat: t.issuedAt
    }
  const signIn = SignIn.of(t)
  return signIn === undefined
    ? {
        active: true,
        scope,
        client_id: t.appKey,
        token_type: tokenType,
        exp: t.expiresAt,
        iat: t.issuedAt,
        sub: t.openId,
        subject_type: subjectType(t)
      }
    : {
        active: true,
        scope,
        client_id: t.appKey,
        token_type: tokenType,
        exp: t.expiresAt,
        iat: t.issuedAt,
        sub: t.openId,
        subject_type: subjectType(t),
        acr: Strength.acrOf(SignIn.sessionMethod(signIn.method)),
        auth_time: signIn.authTime
      }
}

/** Introspect a token of the authenticated application of the request `call`. */
export const introspect = (
  call: Call.Call<TokenStore>,
  params: Params,
  app: Application
): Effect.Effect<IntrospectionResponse, InvalidRequest | StorageError> =>
  Effect.map(lookup(call, params, app), (found) => answer(found, app, Call.seconds(call)))

/**
 * Revoke a token of the authenticated application of the request `call` (RFC 7009 §2.1). Revoking
 * a refresh token revokes its whole family; unknown tokens are not an error.
 */
export const revoke = (
  call: Call.Call<TokenStore>,
  params: Params,
  app: Application
): Effect.Effect<void, InvalidRequest | StorageError> =>
  Effect.flatMap(lookup(call, params, app), (found) => {
    if (Option.isNone(found)) return Effect.void
    const tokens = Call.use(call, TokenStore)
    const now = Call.seconds(call)
    const t = found.value
    return Call.audited(
      call,
      t.kind === "refresh"
        ? Effect.asVoid(tokens.revokeFamily(t.familyId, now))
        : Effect.asVoid(tokens.revoke("access", t.tokenHash, now)),
      [["token_revoked", { appKey: t.appKey, userId: t.userId, openId: t.openId, detail: t.kind }]]
    )
  })

/**
 * Token introspection (RFC 7662) and revocation (RFC 7009) for the
 * authenticated application's own tokens.
 */
import { Effect, Option, Schema } from "effect"
import { type Application, scopeDelimiter } from "../model/Application.js"
import * as Scope from "../model/Scope.js"
import { isActive, type Kind, type SubjectType, subjectType, type Token } from "../model/Token.js"
import * as Audit from "../security/Audit.js"
import { sha256 } from "../services/Digest.js"
import { nowSeconds } from "../services/internal/time.js"
import { TokenStore } from "../storage/TokenStore.js"
import type { Params } from "./requests/Form.js"
import { caps, decode, Text } from "./requests/Params.js"

/**
 * RFC 7662 §2.2 response, as the OpenAPI document shows it: exactly `{active: false}` for
 * anything not active and owned. `subject_type` says how `sub` was established: `user` (a
 * platform user signed in or gave a password), `application` (asserted by the application).
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
    )
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

/** Find the application's token by value, trying the hinted kind first. */
const lookup = Effect.fnUntraced(function* (params: Params, app: Application) {
  const form = yield* tokenForm(params)
  const tokens = yield* TokenStore
  const hash = yield* sha256(form.token)
  const order: ReadonlyArray<Kind> =
    form.token_type_hint === "refresh_token" ? ["refresh", "access"] : ["access", "refresh"]
  for (const kind of order) {
    const found = yield* tokens.find(kind, hash)
    // Another application's token is as good as unknown (docs/security.md, checklist V2)
    if (Option.isSome(found) && found.value.appKey === app.appKey) return Option.some(found.value)
  }
  return Option.none<Token>()
})

/** Introspect a token of the authenticated application. */
export const introspect = Effect.fnUntraced(function* (params: Params, app: Application) {
  const found = yield* lookup(params, app)
  const now = yield* nowSeconds
  if (Option.isNone(found) || !isActive(found.value, now)) return { active: false } as IntrospectionResponse
  const t = found.value
  return {
    active: true,
    scope: Scope.format(t.scope, scopeDelimiter(app)),
    client_id: t.appKey,
    token_type: t.kind === "access" ? "Bearer" : "refresh_token",
    exp: t.expiresAt,
    iat: t.issuedAt,
    ...(t.openId !== null ? { sub: t.openId, subject_type: subjectType(t) } : {})
  } as IntrospectionResponse
})

/**
 * Revoke a token of the authenticated application (RFC 7009 §2.1). Revoking a
 * refresh token revokes its whole family; unknown tokens are not an error.
 */
export const revoke = Effect.fnUntraced(function* (params: Params, app: Application) {
  const found = yield* lookup(params, app)
  if (Option.isNone(found)) return
  const tokens = yield* TokenStore
  const now = yield* nowSeconds
  const t = found.value
  yield* Audit.recordWith(
    t.kind === "refresh"
      ? Effect.asVoid(tokens.revokeFamily(t.familyId, now))
      : Effect.asVoid(tokens.revoke("access", t.tokenHash, now)),
    [["token_revoked", { appKey: t.appKey, userId: t.userId, openId: t.openId, detail: t.kind }]]
  )
})

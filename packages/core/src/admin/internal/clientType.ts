/**
 * The checks of what kind of client an application is (`Admin.createApplication`,
 * `Admin.updateApplication`): public or confidential (RFC 6749 §2.1), the format of its access
 * tokens and their audience, its web origins, how it authenticates at the token endpoint and how
 * its answers join scopes. Each refusal is `InvalidField` naming the field, like `fields.ts`.
 */
import { Effect, Schema } from "effect"
import {
  AccessTokenFormat,
  type Application,
  type GrantType,
  isPublic,
  maxRedirectUriLength,
  publicGrantTypes,
  ScopeDelimiter,
  TokenEndpointAuthMethod
} from "../../model/Application.js"
import { secretDigest } from "../../oauth/ClientAuth.js"
import * as Entropy from "../../services/Entropy.js"
import type { ApplicationChanges } from "../../storage/ApplicationStore.js"
import { checkBackchannelLogoutUri, checkWebOrigins, type InvalidField, invalid } from "./fields.js"

/** What the optional client fields of a registration or patch hold. */
interface TokenInput {
  readonly accessTokenFormat?: string
  readonly accessTokenAudience?: string | null
  readonly webOrigins?: ReadonlyArray<string>
  readonly tokenEndpointAuthMethod?: string
  readonly scopeDelimiter?: string
  readonly backchannelLogoutUri?: string | null
  readonly backchannelLogoutSessionRequired?: boolean
}

/** The admin API name of each optional client field. */
const fieldNames = {
  accessTokenFormat: "access_token_format",
  accessTokenAudience: "access_token_audience",
  webOrigins: "web_origins",
  tokenEndpointAuthMethod: "token_endpoint_auth_method",
  scopeDelimiter: "scope_delimiter",
  backchannelLogoutUri: "backchannel_logout_uri",
  backchannelLogoutSessionRequired: "backchannel_logout_session_required"
} as const satisfies Record<keyof TokenInput, string>

/** What a patch says about the kind of client. */
interface ClientPatch extends TokenInput {
  readonly public?: boolean
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
}

/** A value of one of the literals of `schema`, else `InvalidField` for `field` listing them. */
const checkLiteral =
  <const L extends readonly [string, ...Array<string>]>(field: string, schema: Schema.Literal<L>) =>
  (value: string): Effect.Effect<L[number], InvalidField> =>
    Schema.is(schema)(value)
      ? Effect.succeed(value)
      : invalid(field, `${field} must be ${schema.literals.map((l) => JSON.stringify(l)).join(" or ")}`)

/** An access token format: `opaque` or `jwt`. */
export const checkFormat = checkLiteral("access_token_format", AccessTokenFormat)

const checkAuthMethod = checkLiteral("token_endpoint_auth_method", TokenEndpointAuthMethod)
const checkDelimiter = checkLiteral("scope_delimiter", ScopeDelimiter)

/**
 * The `aud` of an application's JWT access tokens (RFC 9068 §3, RFC 8707 §2): null for the
 * issuer, else an absolute URI of printable ASCII without a fragment, at most 2048 characters.
 */
export const checkAudience = (value: string | null) => {
  if (value === null) return Effect.succeed(null)
  const refuse = invalid(
    "access_token_audience",
    "access_token_audience must be an absolute URI of printable ASCII without a fragment, at most 2048 characters"
  )
  if (value.length === 0 || value.length > maxRedirectUriLength || !/^[\x21-\x7e]+$/.test(value))
    return refuse
  if (value.includes("#") || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return refuse
  try {
    new URL(value)
  } catch {
    return refuse
  }
  return Effect.succeed(value)
}

/**
 * What a public application's registration must hold: only the public grants, PKCE required, and
 * no `client_secret_post`, as it has no App Secret to send (it authenticates with `client_id`
 * alone, which the admin JSON shows as `none`).
 */
export const checkPublic = (
  grantTypes: ReadonlyArray<GrantType>,
  requirePkce: boolean | undefined,
  authMethod: string | undefined
) => {
  if (!grantTypes.every((g) => publicGrantTypes.includes(g))) {
    return invalid(
      "grant_types",
      "a public application may use only the authorization_code and refresh_token grants"
    )
  }
  if (authMethod === "client_secret_post") {
    return invalid(
      "token_endpoint_auth_method",
      "a public application has no App Secret: it authenticates with client_id alone"
    )
  }
  return requirePkce === false
    ? invalid("require_pkce", "a public application always requires PKCE")
    : Effect.void
}

/** The optional client fields of a registration or patch, checked: left out when not given. */
export const tokenFields = Effect.fnUntraced(function* (input: TokenInput) {
  const { accessTokenFormat: format, accessTokenAudience: audience, webOrigins, scopeDelimiter } = input
  const method = input.tokenEndpointAuthMethod
  return {
    ...(format === undefined ? {} : { accessTokenFormat: yield* checkFormat(format) }),
    ...(audience === undefined ? {} : { accessTokenAudience: yield* checkAudience(audience) }),
    ...(webOrigins === undefined ? {} : { webOrigins: yield* checkWebOrigins(webOrigins) }),
    ...(method === undefined ? {} : { tokenEndpointAuthMethod: yield* checkAuthMethod(method) }),
    ...(scopeDelimiter === undefined ? {} : { scopeDelimiter: yield* checkDelimiter(scopeDelimiter) }),
    ...(input.backchannelLogoutUri === undefined
      ? {}
      : { backchannelLogoutUri: yield* checkBackchannelLogoutUri(input.backchannelLogoutUri) }),
    ...(input.backchannelLogoutSessionRequired === undefined
      ? {}
      : { backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired })
  }
})

/** Changes to an application being built up field by field. */
export type Changes = { -readonly [K in keyof ApplicationChanges]: ApplicationChanges[K] }

/**
 * The changes of a patch's `public` and optional client fields (`tokenFields`), and the App
 * Secret generated when the application becomes confidential. Whether the application is (or
 * becomes) public is checked against the grant types, PKCE and authentication method it will have.
 */
export const clientChanges = Effect.fnUntraced(function* <E, R>(
  appKey: string,
  patch: ClientPatch,
  changes: Changes,
  find: Effect.Effect<Application, E, R>
) {
  const tokens = yield* tokenFields(patch)
  const fields: Array<string> = Object.keys(tokens).map((k) => fieldNames[k as keyof typeof tokens])
  Object.assign(changes, tokens)
  const method = tokens.tokenEndpointAuthMethod
  if (
    patch.public === undefined &&
    patch.grantTypes === undefined &&
    patch.requirePkce === undefined &&
    method !== "client_secret_post"
  )
    return { fields, appSecret: null }
  const current = yield* find
  const willBePublic = patch.public ?? isPublic(current)
  if (willBePublic) yield* checkPublic(changes.grantTypes ?? current.grantTypes, patch.requirePkce, method)
  if (patch.public === undefined || patch.public === isPublic(current)) return { fields, appSecret: null }
  fields.push("public")
  changes.public = patch.public
  if (patch.public) {
    changes.secretDigest = ""
    changes.requirePkce = true
    return { fields, appSecret: null }
  }
  const appSecret = yield* Entropy.token
  changes.secretDigest = yield* secretDigest(appKey, appSecret)
  return { fields, appSecret }
})

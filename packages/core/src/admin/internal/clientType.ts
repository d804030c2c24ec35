/**
 * The checks of what kind of client an application is (`Admin.createApplication`,
 * `Admin.updateApplication`): public or confidential (RFC 6749 §2.1), the format of its access
 * tokens and their audience. Each refusal is `InvalidField` naming the field, like `fields.ts`.
 */
import { Effect, Schema } from "effect"
import {
  AccessTokenFormat,
  type Application,
  type GrantType,
  isPublic,
  maxRedirectUriLength,
  publicGrantTypes
} from "../../model/Application.js"
import { secretDigest } from "../../oauth/ClientAuth.js"
import * as Entropy from "../../services/Entropy.js"
import type { ApplicationChanges } from "../../storage/ApplicationStore.js"
import { invalid } from "./fields.js"

/** What the access token fields of a registration or patch hold. */
interface TokenInput {
  readonly accessTokenFormat?: string
  readonly accessTokenAudience?: string | null
}

/** What a patch says about the kind of client. */
interface ClientPatch extends TokenInput {
  readonly public?: boolean
  readonly grantTypes?: ReadonlyArray<string>
  readonly requirePkce?: boolean
}

const isFormat = Schema.is(AccessTokenFormat)

/** An access token format: `opaque` or `jwt`. */
export const checkFormat = (value: string) =>
  isFormat(value)
    ? Effect.succeed(value)
    : invalid("access_token_format", 'access_token_format must be "opaque" or "jwt"')

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

/** What a public application's registration must hold: only the public grants, PKCE required. */
export const checkPublic = (grantTypes: ReadonlyArray<GrantType>, requirePkce: boolean | undefined) => {
  if (!grantTypes.every((g) => publicGrantTypes.includes(g))) {
    return invalid(
      "grant_types",
      "a public application may use only the authorization_code and refresh_token grants"
    )
  }
  return requirePkce === false
    ? invalid("require_pkce", "a public application always requires PKCE")
    : Effect.void
}

/** The fields of a new application's access tokens: left out when they are the defaults. */
export const tokenFields = Effect.fnUntraced(function* (input: TokenInput) {
  const format =
    input.accessTokenFormat === undefined ? undefined : yield* checkFormat(input.accessTokenFormat)
  const audience =
    input.accessTokenAudience === undefined ? undefined : yield* checkAudience(input.accessTokenAudience)
  return {
    ...(format === undefined ? {} : { accessTokenFormat: format }),
    ...(audience === undefined ? {} : { accessTokenAudience: audience })
  }
})

/** Changes to an application being built up field by field. */
export type Changes = { -readonly [K in keyof ApplicationChanges]: ApplicationChanges[K] }

/**
 * The changes of a patch's `public`, `access_token_format` and `access_token_audience`, and the
 * App Secret generated when the application becomes confidential. Whether the application is
 * (or becomes) public is checked against the grant types and PKCE it will have.
 */
export const clientChanges = Effect.fnUntraced(function* <E, R>(
  appKey: string,
  patch: ClientPatch,
  changes: Changes,
  find: Effect.Effect<Application, E, R>
) {
  const fields: Array<string> = []
  const tokens = yield* tokenFields(patch)
  if (tokens.accessTokenFormat !== undefined) fields.push("access_token_format")
  if (tokens.accessTokenAudience !== undefined) fields.push("access_token_audience")
  Object.assign(changes, tokens)
  if (patch.public === undefined && patch.grantTypes === undefined && patch.requirePkce === undefined)
    return { fields, appSecret: null }
  const current = yield* find
  const willBePublic = patch.public ?? isPublic(current)
  if (willBePublic) yield* checkPublic(changes.grantTypes ?? current.grantTypes, patch.requirePkce)
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

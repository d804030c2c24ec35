/**
 * The checks of the values an administrator gives (`Admin`, for the CLI and the admin API): each
 * refusal is `InvalidField`, a 400 naming the field and never echoing a value that is not plain
 * text (`Params.isPlainText`, docs/security.md T13), and comes before any store is asked.
 */
import { Effect, Either, Schema } from "effect"
import {
  GrantType,
  type RedirectUriOwner,
  validateBackchannelLogoutUri,
  validateRedirectUri,
  validateWebOrigin
} from "../../model/Application.js"
import * as DisplayText from "../../model/DisplayText.js"
import type { InvalidRequest } from "../../model/OAuthError.js"
import * as Scope from "../../model/Scope.js"
import { isPlainText } from "../../oauth/requests/Params.js"

/** A value an administrator gave is not acceptable: `invalid_request` (400) naming the field. */
export class InvalidField extends Schema.TaggedError<InvalidField>()("InvalidField", {
  /** The field as the admin API names it (`redirect_uris`, `grace_seconds`, ...). */
  field: Schema.String,
  description: Schema.String
}) {
  readonly error = "invalid_request"
  readonly status = 400
}

/** Longest token or code lifetime an application may set: one year, in seconds. */
export const maxTtl = 365 * 24 * 3600

/** Fail with `InvalidField` for `field`. */
export const invalid = (field: string, description: string) =>
  Effect.fail(new InvalidField({ field, description }))

/** `value` when it is plain text; else `InvalidField` for `field`, without the value. */
export const plain = (field: string, value: string): Effect.Effect<string, InvalidField> =>
  isPlainText(value) ? Effect.succeed(value) : invalid(field, `${field} must not contain control characters`)

/**
 * `value` when it is plain text fit to show on a page (`DisplayText.isDisplayText`); else
 * `InvalidField` for `field`, without the value.
 */
export const shown = (field: string, value: string): Effect.Effect<string, InvalidField> =>
  !isPlainText(value)
    ? plain(field, value)
    : DisplayText.isDisplayText(value)
      ? Effect.succeed(value)
      : invalid(field, DisplayText.problem(field))

/** An application name: 1-200 characters of plain text fit to show on a page, trimmed. */
export const checkName = (raw: string) => {
  const name = raw.trim()
  if (!isPlainText(raw) || !DisplayText.isDisplayText(raw)) return shown("name", raw)
  return name.length === 0 || name.length > 200
    ? invalid("name", "name must be 1-200 characters")
    : Effect.succeed(name)
}

/** Each value checked by `validate` (its refusal `InvalidField` for `field`), duplicates dropped. */
const checkEach = (
  field: string,
  values: ReadonlyArray<string>,
  validate: (value: string) => Either.Either<string, InvalidRequest>
): Effect.Effect<Array<string>, InvalidField> => {
  const checked: Array<string> = []
  for (const value of values) {
    const valid = validate(value)
    if (Either.isLeft(valid)) return invalid(field, valid.left.description)
    if (!checked.includes(valid.right)) checked.push(valid.right)
  }
  return Effect.succeed(checked)
}

/**
 * Redirect URIs: at least one, each valid for an application that is (or becomes) public or not
 * (`validateRedirectUri`), duplicates dropped.
 */
export const checkRedirectUris = (
  uris: ReadonlyArray<string>,
  owner: RedirectUriOwner
): Effect.Effect<Array<string>, InvalidField> =>
  uris.length === 0
    ? invalid("redirect_uris", "at least one redirect URI is required")
    : checkEach("redirect_uris", uris, (uri) => validateRedirectUri(uri, owner))

/**
 * Post-logout redirect URIs (OpenID Connect RP-Initiated Logout 1.0 §3), each valid as a redirect
 * URI of the application (`validateRedirectUri`), duplicates dropped; none at all is allowed.
 */
export const checkPostLogoutRedirectUris = (
  uris: ReadonlyArray<string>,
  owner: RedirectUriOwner
): Effect.Effect<Array<string>, InvalidField> =>
  checkEach("post_logout_redirect_uris", uris, (uri) => validateRedirectUri(uri, owner))

/**
 * A back-channel logout URI (OpenID Connect Back-Channel Logout 1.0 §2.2,
 * `Application.validateBackchannelLogoutUri`), or null for none.
 */
export const checkBackchannelLogoutUri = (uri: string | null): Effect.Effect<string | null, InvalidField> => {
  if (uri === null) return Effect.succeed(null)
  const valid = validateBackchannelLogoutUri(uri)
  return Either.isLeft(valid)
    ? invalid("backchannel_logout_uri", valid.left.description)
    : Effect.succeed(uri)
}

/** Web origins (`Application.validateWebOrigin`), duplicates dropped; none at all is allowed. */
export const checkWebOrigins = (origins: ReadonlyArray<string>): Effect.Effect<Array<string>, InvalidField> =>
  checkEach("web_origins", origins, validateWebOrigin)

const isScopeToken = Schema.is(Scope.ScopeToken)

/** A scope list: one string of scope tokens, or one token per item. */
export const checkScope = (scope: string | ReadonlyArray<string>) => {
  const items = typeof scope === "string" ? [scope] : scope
  if (!items.every(isPlainText)) return invalid("scopes", "scopes must not contain control characters")
  if (typeof scope !== "string") {
    const bad = scope.find((s) => !isScopeToken(s))
    if (bad !== undefined) return invalid("scopes", `scope ${JSON.stringify(bad)} is not one scope token`)
  }
  return Either.match(Scope.parse(typeof scope === "string" ? scope : scope.join(" ")), {
    onLeft: (e) => invalid("scopes", e.description),
    onRight: Effect.succeed
  })
}

const isGrantType = Schema.is(GrantType)

/** Grant types: at least one, each known, duplicates dropped. */
export const checkGrantTypes = Effect.fnUntraced(function* (names: ReadonlyArray<string>) {
  const grantTypes: Array<GrantType> = []
  for (const g of names) {
    yield* plain("grant_types", g)
    if (!isGrantType(g)) return yield* invalid("grant_types", `unknown grant type ${JSON.stringify(g)}`)
    if (!grantTypes.includes(g)) grantTypes.push(g)
  }
  if (grantTypes.length === 0) return yield* invalid("grant_types", "at least one grant type is required")
  return grantTypes
})

/** A token lifetime: null for the server default, else 1 second to `maxTtl`. */
export const checkTtl = (field: string, value: number | null | undefined) =>
  value === undefined || value === null
    ? Effect.succeed(null)
    : Number.isInteger(value) && value > 0 && value <= maxTtl
      ? Effect.succeed(value)
      : invalid(field, `${field} must be a whole number of seconds between 1 and one year`)

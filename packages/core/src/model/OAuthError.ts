/**
 * The RFC 6749 / RFC 6750 error codes as tagged errors, each with the HTTP status
 * it is answered with.
 */
import { Schema } from "effect"

const fields = { description: Schema.String }

/**
 * Every error code the core answers with: RFC 6749 §5.2 (token endpoint), §4.1.2.1 (authorize
 * redirects), OpenID Connect Core 1.0 §3.1.2.6 (authorize redirects of an OpenID request) and
 * RFC 6750 §3.1 (Bearer challenges). A response carries its code as a value
 * (`Http.HttpResponse.error`, an error redirect's `error`), so nobody reads it back from the wire.
 */
export const codes = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "unsupported_response_type",
  "invalid_scope",
  "access_denied",
  "server_error",
  "temporarily_unavailable",
  "login_required",
  "consent_required",
  "interaction_required",
  "invalid_token",
  "insufficient_scope"
] as const

/** One of `codes`. */
export type Code = (typeof codes)[number]

/** RFC 6749 §5.2 `invalid_request`: a parameter is missing, repeated, malformed or not allowed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", fields) {
  readonly error = "invalid_request"
  readonly status = 400
}

/** RFC 6749 §5.2 `invalid_client`: client authentication failed (answered 401). */
export class InvalidClient extends Schema.TaggedError<InvalidClient>()("InvalidClient", fields) {
  readonly error = "invalid_client"
  readonly status = 401
}

/** RFC 6749 §5.2 `invalid_grant`: the code, refresh token or owner credentials are not valid. */
export class InvalidGrant extends Schema.TaggedError<InvalidGrant>()("InvalidGrant", fields) {
  readonly error = "invalid_grant"
  readonly status = 400
}

/** RFC 6749 §5.2 `unauthorized_client`: the application may not use this grant or response type. */
export class UnauthorizedClient extends Schema.TaggedError<UnauthorizedClient>()(
  "UnauthorizedClient",
  fields
) {
  readonly error = "unauthorized_client"
  readonly status = 400
}

/** RFC 6749 §5.2 `unsupported_grant_type`. */
export class UnsupportedGrantType extends Schema.TaggedError<UnsupportedGrantType>()(
  "UnsupportedGrantType",
  fields
) {
  readonly error = "unsupported_grant_type"
  readonly status = 400
}

/** RFC 6749 §5.2 `invalid_scope`: unknown, malformed or wider than allowed. */
export class InvalidScope extends Schema.TaggedError<InvalidScope>()("InvalidScope", fields) {
  readonly error = "invalid_scope"
  readonly status = 400
}

/** RFC 6749 §4.1.2.1 `server_error`: an unexpected condition; never carries a cause to the client. */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", fields) {
  readonly error = "server_error"
  readonly status = 500
}

/** RFC 6749 §4.1.2.1 `temporarily_unavailable`: storage unreachable (503). */
export class TemporarilyUnavailable extends Schema.TaggedError<TemporarilyUnavailable>()(
  "TemporarilyUnavailable",
  { description: Schema.String, retryAfter: Schema.Number }
) {
  readonly error = "temporarily_unavailable"
  readonly status = 503
}

/** Too many failed attempts: `temporarily_unavailable` answered 429 with `Retry-After`. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  description: Schema.String,
  retryAfter: Schema.Number
}) {
  readonly error = "temporarily_unavailable"
  readonly status = 429
}

/** RFC 6750 §3.1 `invalid_token`: the bearer token is missing, expired, revoked or malformed. */
export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", fields) {
  readonly error = "invalid_token"
  readonly status = 401
}

/** RFC 6750 §3.1 `insufficient_scope`: the token lacks a scope the resource needs. */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  description: Schema.String,
  scope: Schema.String
}) {
  readonly error = "insufficient_scope"
  readonly status = 403
}

/** Every error the token, introspection and revocation endpoints answer with. */
export type OAuthError =
  | InvalidRequest
  | InvalidClient
  | InvalidGrant
  | UnauthorizedClient
  | UnsupportedGrantType
  | InvalidScope
  | ServerError
  | TemporarilyUnavailable
  | RateLimited

/** Errors a resource server answers a bearer request with (RFC 6750). */
export type BearerError = InvalidRequest | InvalidToken | InsufficientScope | TemporarilyUnavailable

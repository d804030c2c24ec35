/**
 * Resource-server side: checking a Bearer access token (RFC 6750), an opaque one against the
 * TokenStore, a JWT access token (RFC 9068) locally against the published signing keys; at this
 * server's own endpoints (`issuedHere`), any access token it issued, against its record.
 */
import { Cause, Effect, Either, Option } from "effect"
import { type HttpResponse, json, logDefect, retryAfter, serverError, unavailable } from "../http/Response.js"
import { inService } from "../model/Application.js"
import { Config } from "../model/Config.js"
import {
  type Code,
  InsufficientScope,
  InvalidRequest,
  InvalidToken,
  type ServerError,
  type TemporarilyUnavailable
} from "../model/OAuthError.js"
import * as Scope from "../model/Scope.js"
import { isActive, type SubjectType, subjectType } from "../model/Token.js"
import * as Jwt from "../signing/Jwt.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import type { KeyStore } from "../storage/KeyStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { TokenStore } from "../storage/TokenStore.js"
import * as AccessToken from "./AccessToken.js"
import * as Call from "./Call.js"
import { caps } from "./requests/Params.js"

/** Who an accepted access token speaks for. */
export interface Principal {
  readonly clientId: string
  readonly openId: string | null
  /** How `openId` was established (null without one): see `Introspection.subjectType`. */
  readonly subjectType: SubjectType | null
  readonly scope: Scope.ScopeSet
  readonly expiresAt: number
}

const invalid = () => new InvalidToken({ description: "the access token is invalid, expired or revoked" })

/**
 * An access token's principal, from its record in the TokenStore (read in the request `call`):
 * active, and of an application that still exists and is active.
 */
const storedIn = (
  call: Call.Call<TokenStore | ApplicationStore>,
  token: string
): Effect.Effect<Principal, InvalidToken | StorageError> =>
  Effect.flatMap(call.digest.sha256(token), (hash) =>
    Effect.flatMap(Call.use(call, TokenStore).find("access", hash), (found) => {
      // RFC 6750 §3.1: unknown, revoked (by whatever ended it) or expired is invalid_token
      if (Option.isNone(found) || !isActive(found.value, Call.seconds(call))) return Effect.fail(invalid())
      const t = found.value
      return Effect.flatMap(Call.use(call, ApplicationStore).find(t.appKey), (app) =>
        // An application that is not active (docs/platform.md): its tokens speak for no one meanwhile
        Option.isNone(app) || !inService(app.value)
          ? Effect.fail(invalid())
          : Effect.succeed({
              clientId: t.appKey,
              openId: t.openId,
              subjectType: t.openId === null ? null : subjectType(t),
              scope: t.scope,
              expiresAt: t.expiresAt
            })
      )
    })
  )

/**
 * A JWT access token's principal, from its signature and claims alone (`AccessToken.verify`):
 * no store but the key set is read, so a revocation reaches it only at its `exp`.
 */
const signed = (token: string, audience: string | undefined) =>
  Effect.gen(function* () {
    const expected = audience ?? (yield* Config).issuer
    return yield* AccessToken.verify(token, expected).pipe(
      Effect.catchTag("InvalidJwt", () => Effect.fail(invalid()))
    )
  })

/** The audience of this server's own endpoints (userinfo): any access token it issued, checked against its record. */
export const issuedHere: unique symbol = Symbol.for("@latchkey/core/Bearer/issuedHere")

/** Whom a JWT access token must be for: an `aud` (default: the issuer), or `issuedHere`. */
export type Audience = string | typeof issuedHere | undefined

/**
 * Any access token this server issued, whatever its audience: a JWT access token signed by a
 * published key, of this issuer and `typ` at+jwt, unexpired, and in every case its record, read
 * once, active (so a token ended by any revocation is refused at once).
 */
const issued = (call: Call.Call<Requirements>, token: string) =>
  Jwt.looksLikeJwt(token)
    ? Jwt.verify(token, { typ: Jwt.accessTokenType }).pipe(
        Effect.catchTag("InvalidJwt", () => Effect.fail(invalid())),
        Effect.zipRight(storedIn(call, token))
      )
    : storedIn(call, token)

// The principal a token speaks for, at a resource server (for an audience) or at this server's own endpoint
const principalOf = (call: Call.Call<Requirements>, token: string, audience: Audience) =>
  audience === issuedHere
    ? issued(call, token)
    : Jwt.looksLikeJwt(token)
      ? signed(token, audience)
      : storedIn(call, token)

const bearerRequired = () => new InvalidRequest({ description: "a Bearer token is required" })
const malformed = () => new InvalidRequest({ description: "malformed Authorization header" })

/** `verify` in the request `call`: the checks as plain code, the store reads and digest as its steps. */
const verifyIn = (
  call: Call.Call<Requirements>,
  authorization: string | undefined,
  required: Scope.ScopeSet,
  audience?: Audience
): Effect.Effect<
  Principal,
  InvalidRequest | InvalidToken | InsufficientScope | StorageError,
  KeyStore | Config
> => {
  if (authorization === undefined) return Effect.fail(bearerRequired())
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)
  if (m === null || (m[1] as string).length > caps.token) return Effect.fail(malformed())
  return Effect.flatMap(principalOf(call, m[1] as string, audience), (principal) =>
    Scope.isSubset(required, principal.scope)
      ? Effect.succeed(principal)
      : Effect.fail(
          new InsufficientScope({
            description: "the access token lacks a required scope",
            scope: Scope.format(required)
          })
        )
  )
}

/**
 * Verify `Authorization: Bearer <token>` and that the token carries every scope in `required`.
 * A JWT access token (RFC 9068) is verified locally for `audience` (default: the issuer) without
 * reading the TokenStore; an opaque one is looked up in the TokenStore; with `issuedHere`, any
 * access token this server issued is checked against its record, whatever its `aud`.
 */
export const verify = (
  authorization: string | undefined,
  required: Scope.ScopeSet,
  audience?: Audience
): Effect.Effect<Principal, InvalidRequest | InvalidToken | InsufficientScope | StorageError, Requirements> =>
  Call.run({}, (call: Call.Call<Requirements>) => verifyIn(call, authorization, required, audience))

// RFC 6750 §3: auth-param values are quoted strings; keep them to safe characters
const quoted = (s: string) => `"${s.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "")}"`

/** The `WWW-Authenticate` challenge of RFC 6750 §3 for `realm`, with error parameters if any. */
export const challenge = (realm: string, params: Readonly<Record<string, string>> = {}): string =>
  [`Bearer realm=${quoted(realm)}`, ...Object.entries(params).map(([k, v]) => `${k}=${quoted(v)}`)].join(", ")

// The response carries the code its challenge names (none for a bare challenge, RFC 6750 §3.1)
const refusal = (
  realm: string,
  status: number,
  error: Code,
  description: string,
  params: Readonly<Record<string, string>> & { readonly error?: Code },
  extra: Readonly<Record<string, string>> = {}
): HttpResponse => ({
  ...json(
    status,
    { error, error_description: description },
    { "www-authenticate": challenge(realm, params), ...extra }
  ),
  ...(params.error === undefined ? {} : { error: params.error })
})

/** What checking a Bearer token needs: the TokenStore and ApplicationStore (opaque tokens), the KeyStore and Config (JWTs). */
export type Requirements = TokenStore | ApplicationStore | KeyStore | Config

// The answer to a failed verification, as RFC 6750 §3.1 names it
const refusalOf = (
  realm: string,
  e: InvalidRequest | InvalidToken | InsufficientScope | TemporarilyUnavailable | ServerError
): HttpResponse => {
  switch (e._tag) {
    case "InvalidRequest":
    case "InvalidToken":
      return refusal(realm, e.status, e.error, e.description, {
        error: e.error,
        error_description: e.description
      })
    case "InsufficientScope":
      return refusal(realm, e.status, e.error, e.description, {
        error: e.error,
        error_description: e.description,
        scope: e.scope
      })
    case "TemporarilyUnavailable":
      return refusal(realm, e.status, e.error, e.description, {}, retryAfter(e.retryAfter))
    case "ServerError":
      return refusal(realm, e.status, e.error, e.description, {})
  }
}

/**
 * `admit` in the request `call`: the header checks as plain code, then the verification and its
 * answer in one step (a store that cannot answer is 503, a defect is logged and 500, as `settle`).
 */
export const admitIn = (
  call: Call.Call<Requirements>,
  authorization: ReadonlyArray<string>,
  required: Scope.ScopeSet,
  realm = "latchkey",
  audience?: Audience
): Effect.Effect<Either.Either<Principal, HttpResponse>, never, Requirements> => {
  if (authorization.length > 1) {
    const description = "repeated Authorization header"
    return Effect.succeed(
      Either.left(refusal(realm, 400, "invalid_request", description, { error: "invalid_request" }))
    )
  }
  const header = authorization[0]
  if (header === undefined || !/^bearer(\s|$)/i.test(header)) {
    return Effect.succeed(
      Either.left(refusal(realm, 401, "invalid_request", "a Bearer access token is required", {}))
    )
  }
  return Effect.matchCauseEffect(verifyIn(call, header, required, audience), {
    onSuccess: (principal) => Effect.succeed(Either.right(principal)),
    onFailure: (cause) => {
      const failure = Cause.failureOption(cause)
      if (Option.isNone(failure))
        return Effect.as(logDefect(cause), Either.left(refusalOf(realm, serverError)))
      const e = failure.value
      return Effect.succeed(Either.left(refusalOf(realm, e._tag === "StorageError" ? unavailable : e)))
    }
  })
}

/**
 * Admit a request to a protected resource: its principal, or the response to send
 * instead (RFC 6750 §3.1): 401 with a bare challenge when it has no Bearer
 * credentials, 400 `invalid_request` for a malformed or repeated header, 401
 * `invalid_token`, 403 `insufficient_scope` naming the scope, 503 with
 * Retry-After when the store cannot answer. `authorization` is every value of
 * the header the request carried; a JWT access token must name `audience`
 * (default: the issuer) as its `aud`, or with `issuedHere` be any access token
 * this server issued whose record is active.
 */
export const admit = (
  authorization: ReadonlyArray<string>,
  required: Scope.ScopeSet,
  realm = "latchkey",
  audience?: Audience
): Effect.Effect<Either.Either<Principal, HttpResponse>, never, Requirements> =>
  Call.run({}, (call: Call.Call<Requirements>) => admitIn(call, authorization, required, realm, audience))

/**
 * Token endpoint requests (RFC 6749 §4.1.3, §4.3.2, §4.4.2, §6): one Schema per grant type,
 * which decodes the form (`decode` of `Params`) and is the request body the OpenAPI document
 * shows. `grants/index.ts` picks the decoder by grant_type.
 */
import { Either, Option, Schema } from "effect"
import { OpenIdParam } from "../../model/OpenId.js"
import * as Pkce from "../../model/Pkce.js"
import * as Scope from "../../model/Scope.js"
import { grantType as authorizationCodeGrant } from "../grants/AuthorizationCodeGrant.js"
import { grantType as clientCredentialsGrant } from "../grants/ClientCredentialsGrant.js"
import { grantType as passwordGrant } from "../grants/PasswordGrant.js"
import { grantType as refreshTokenGrant } from "../grants/RefreshTokenGrant.js"
import type { Params } from "./Form.js"
import { caps, decode, type RefusalOf, Text } from "./Params.js"

/** A parameter the decoded request names in camelCase, read from its snake_case `key`. */
const from = <S extends Schema.Schema.Any>(key: string, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

/** An optional parameter, absent as `Option.none()`. */
const optional = <S extends Schema.Schema.All>(schema: S) =>
  Schema.optionalWith(schema, { as: "Option", exact: true })

/** An authorization_code request (RFC 6749 §4.1.3, RFC 7636 §4.5). */
export const AuthorizationCodeRequest = Schema.Struct({
  grant_type: Schema.Literal(authorizationCodeGrant),
  code: Text(caps.code),
  redirectUri: from("redirect_uri", Text(caps.redirect_uri)),
  codeVerifier: optional(Pkce.Verifier).pipe(Schema.fromKey("code_verifier"))
}).annotations({ identifier: "AuthorizationCodeRequest" })

/** A password request (RFC 6749 §4.3.2). */
export const PasswordRequest = Schema.Struct({
  grant_type: Schema.Literal(passwordGrant),
  username: Text(caps.username),
  password: Text(caps.password)
}).annotations({ identifier: "PasswordRequest" })

/** A client_credentials request (RFC 6749 §4.4.2), optionally for a user's `open_id`. */
export const ClientCredentialsRequest = Schema.Struct({
  grant_type: Schema.Literal(clientCredentialsGrant),
  openId: optional(OpenIdParam).pipe(Schema.fromKey("open_id"))
}).annotations({ identifier: "ClientCredentialsRequest" })

/** A refresh_token request (RFC 6749 §6); `scope` is only read for this grant (docs/decisions.md). */
export const RefreshTokenRequest = Schema.Struct({
  grant_type: Schema.Literal(refreshTokenGrant),
  refreshToken: from("refresh_token", Text(caps.refresh_token)),
  scope: optional(Scope.Param)
}).annotations({ identifier: "RefreshTokenRequest" })

/** The request Schema of each grant type the token endpoint supports. */
export const requests = {
  [authorizationCodeGrant]: AuthorizationCodeRequest,
  [passwordGrant]: PasswordRequest,
  [clientCredentialsGrant]: ClientCredentialsRequest,
  [refreshTokenGrant]: RefreshTokenRequest
} as const

type GrantType = keyof typeof requests

/** The `grant_type` parameter: one of the grant types of `requests`. */
export const GrantTypeParam = Schema.Struct({
  grant_type: Schema.Literal(...(Object.keys(requests) as [GrantType, ...Array<GrantType>]))
})

/** An authorization_code request. */
export type AuthorizationCode = typeof AuthorizationCodeRequest.Type
/** A password request. */
export type Password = typeof PasswordRequest.Type
/** A client_credentials request. */
export type ClientCredentials = typeof ClientCredentialsRequest.Type
/** A refresh_token request; an empty `scope` counts as absent. */
export type RefreshToken = typeof RefreshTokenRequest.Type

/** Decode the grant type a token request names. */
export const grantType = decode(GrantTypeParam)

/** Decode an authorization_code request. */
export const authorizationCode = decode(AuthorizationCodeRequest)

/** Decode a password request. */
export const password = decode(PasswordRequest)

/** Decode a client_credentials request. */
export const clientCredentials = decode(ClientCredentialsRequest)

const refreshTokenRequest = decode(RefreshTokenRequest)

/** Decode a refresh_token request; an empty scope (only separators) counts as absent. */
export const refreshToken = (
  params: Params
): Either.Either<RefreshToken, RefusalOf<keyof typeof RefreshTokenRequest.Encoded>> =>
  Either.map(refreshTokenRequest(params), (req) => ({
    ...req,
    scope: Option.filter(req.scope, (s) => s.length > 0)
  }))

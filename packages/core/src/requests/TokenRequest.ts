/**
 * Token endpoint requests (RFC 6749 §4.1.3, §4.3.2, §4.4.2, §6), decoded from form
 * parameters into one typed value per grant type.
 */
import { Data, Either, Option } from "effect"
import type { GrantType } from "../Application.js"
import { InvalidRequest, type InvalidScope, UnsupportedGrantType } from "../OAuthError.js"
import { OpenIdParam } from "../OpenId.js"
import * as Pkce from "../Pkce.js"
import * as Scope from "../Scope.js"
import type { Params } from "./Form.js"
import { caps, optional, required, Text } from "./Params.js"

/** A decoded token request. */
export type TokenRequest = Data.TaggedEnum<{
  AuthorizationCode: {
    readonly code: string
    readonly redirectUri: string
    readonly codeVerifier: Option.Option<string>
  }
  Password: { readonly username: string; readonly password: string }
  ClientCredentials: { readonly openId: Option.Option<string> }
  RefreshToken: { readonly refreshToken: string; readonly scope: Option.Option<Scope.ScopeSet> }
}>

/** Constructors and matchers of TokenRequest. */
export const TokenRequest = Data.taggedEnum<TokenRequest>()

const grantTypes: Record<string, GrantType> = {
  authorization_code: "authorization_code",
  password: "password",
  client_credentials: "client_credentials",
  refresh_token: "refresh_token"
}

/** The grant type named by the request: missing is `invalid_request`, unknown is `unsupported_grant_type`. */
export const grantType = (
  params: Params
): Either.Either<GrantType, InvalidRequest | UnsupportedGrantType> => {
  const g = params.grant_type
  if (g === undefined)
    return Either.left(new InvalidRequest({ description: "parameter grant_type is required" }))
  const known = Object.hasOwn(grantTypes, g) ? grantTypes[g] : undefined
  return known === undefined
    ? Either.left(new UnsupportedGrantType({ description: "grant_type is not supported" }))
    : Either.right(known)
}

/** Decode the parameters of one grant type. */
export const decode = (
  grant: GrantType,
  params: Params
): Either.Either<TokenRequest, InvalidRequest | InvalidScope | UnsupportedGrantType> =>
  Either.gen(function* () {
    switch (grant) {
      case "authorization_code":
        return TokenRequest.AuthorizationCode({
          code: yield* required(params, "code", Text(caps.code)),
          redirectUri: yield* required(params, "redirect_uri", Text(caps.redirect_uri)),
          codeVerifier: yield* optional(params, "code_verifier", Pkce.Verifier)
        })
      case "password":
        return TokenRequest.Password({
          username: yield* required(params, "username", Text(caps.username)),
          password: yield* required(params, "password", Text(caps.password))
        })
      case "client_credentials":
        return TokenRequest.ClientCredentials({ openId: yield* optional(params, "open_id", OpenIdParam) })
      case "refresh_token": {
        const refreshToken = yield* required(params, "refresh_token", Text(caps.refresh_token))
        // SPEC §2: scope is only read for refresh_token; an empty one counts as absent
        const raw = params.scope
        const scope = raw === undefined ? Scope.empty : yield* Scope.parse(raw)
        return TokenRequest.RefreshToken({
          refreshToken,
          scope: scope.length === 0 ? Option.none() : Option.some(scope)
        })
      }
      case "implicit":
        return yield* Either.left(new UnsupportedGrantType({ description: "grant_type is not supported" }))
    }
  })

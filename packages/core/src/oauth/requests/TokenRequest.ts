/**
 * Token endpoint requests (RFC 6749 §4.1.3, §4.3.2, §4.4.2, §6): the parameters of
 * each grant type, decoded from the form. `grants/index.ts` picks the decoder by
 * grant_type.
 */
import { Either, Option } from "effect"
import type { InvalidRequest, InvalidScope } from "../../model/OAuthError.js"
import { OpenIdParam } from "../../model/OpenId.js"
import * as Pkce from "../../model/Pkce.js"
import * as Scope from "../../model/Scope.js"
import type { Params } from "./Form.js"
import { caps, optional, required, Text } from "./Params.js"

/** An authorization_code request (RFC 6749 §4.1.3, RFC 7636 §4.5). */
export interface AuthorizationCode {
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier: Option.Option<string>
}

/** A password request (RFC 6749 §4.3.2). */
export interface Password {
  readonly username: string
  readonly password: string
}

/** A client_credentials request (RFC 6749 §4.4.2), optionally for a user's `open_id`. */
export interface ClientCredentials {
  readonly openId: Option.Option<string>
}

/** A refresh_token request (RFC 6749 §6). */
export interface RefreshToken {
  readonly refreshToken: string
  readonly scope: Option.Option<Scope.ScopeSet>
}

/** Decode an authorization_code request. */
export const authorizationCode = (params: Params): Either.Either<AuthorizationCode, InvalidRequest> =>
  Either.gen(function* () {
    return {
      code: yield* required(params, "code", Text(caps.code)),
      redirectUri: yield* required(params, "redirect_uri", Text(caps.redirect_uri)),
      codeVerifier: yield* optional(params, "code_verifier", Pkce.Verifier)
    }
  })

/** Decode a password request. */
export const password = (params: Params): Either.Either<Password, InvalidRequest> =>
  Either.gen(function* () {
    return {
      username: yield* required(params, "username", Text(caps.username)),
      password: yield* required(params, "password", Text(caps.password))
    }
  })

/** Decode a client_credentials request. */
export const clientCredentials = (params: Params): Either.Either<ClientCredentials, InvalidRequest> =>
  Either.map(optional(params, "open_id", OpenIdParam), (openId) => ({ openId }))

/** Decode a refresh_token request. */
export const refreshToken = (params: Params): Either.Either<RefreshToken, InvalidRequest | InvalidScope> =>
  Either.gen(function* () {
    const refreshToken = yield* required(params, "refresh_token", Text(caps.refresh_token))
    // scope is only read for refresh_token (docs/decisions.md); an empty one counts as absent
    const raw = params.scope
    const scope = raw === undefined ? Scope.empty : yield* Scope.parse(raw)
    return { refreshToken, scope: scope.length === 0 ? Option.none() : Option.some(scope) }
  })

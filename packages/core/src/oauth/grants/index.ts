/**
 * The token endpoint's dispatch: one table from grant_type to the decoder of its
 * parameters and the grant module that handles them.
 */
import { Effect, Either } from "effect"
import { type Application, allows } from "../../model/Application.js"
import { type InvalidRequest, UnauthorizedClient, type UnsupportedGrantType } from "../../model/OAuthError.js"
import type { Params } from "../requests/Form.js"
import * as TokenRequest from "../requests/TokenRequest.js"
import * as AuthorizationCodeGrant from "./AuthorizationCodeGrant.js"
import * as ClientCredentialsGrant from "./ClientCredentialsGrant.js"
import type { TokenResponse } from "./Issue.js"
import * as PasswordGrant from "./PasswordGrant.js"
import * as RefreshTokenGrant from "./RefreshTokenGrant.js"

export * as AuthorizationCodeGrant from "./AuthorizationCodeGrant.js"
export * as ClientCredentialsGrant from "./ClientCredentialsGrant.js"
export { TokenResponse } from "./Issue.js"
export * as PasswordGrant from "./PasswordGrant.js"
export * as RefreshTokenGrant from "./RefreshTokenGrant.js"

/** A grant of the table: decode its parameters, then handle the request. */
const grant =
  <Req, D, E, R>(
    decode: (params: Params) => Either.Either<Req, D>,
    handle: (req: Req, app: Application, address: string | undefined) => Effect.Effect<TokenResponse, E, R>
  ) =>
  (params: Params, app: Application, address: string | undefined): Effect.Effect<TokenResponse, D | E, R> =>
    Effect.flatMap(decode(params), (req) => handle(req, app, address))

/** Every grant type the token endpoint supports (implicit is authorize-only). */
const grants = {
  [AuthorizationCodeGrant.grantType]: grant(TokenRequest.authorizationCode, AuthorizationCodeGrant.handle),
  [PasswordGrant.grantType]: grant(TokenRequest.password, PasswordGrant.handle),
  [ClientCredentialsGrant.grantType]: grant(TokenRequest.clientCredentials, ClientCredentialsGrant.handle),
  [RefreshTokenGrant.grantType]: grant(TokenRequest.refreshToken, RefreshTokenGrant.handle)
}

type Granted = ReturnType<(typeof grants)[keyof typeof grants]>

/**
 * Run the grant a token request names, for an authenticated application: a missing
 * grant_type is `invalid_request`, an unknown one `unsupported_grant_type` (both chosen by
 * `Params.refusal`), one the application is not registered for `unauthorized_client`.
 */
export const handle = (
  params: Params,
  app: Application,
  address: string | undefined
): Effect.Effect<
  TokenResponse,
  Effect.Effect.Error<Granted> | InvalidRequest | UnsupportedGrantType | UnauthorizedClient,
  Effect.Effect.Context<Granted>
> =>
  Either.match(TokenRequest.grantType(params), {
    onLeft: Effect.fail,
    onRight: ({ grant_type: name }) =>
      allows(app, name)
        ? grants[name](params, app, address)
        : Effect.fail(
            new UnauthorizedClient({ description: `this application may not use the ${name} grant` })
          )
  })

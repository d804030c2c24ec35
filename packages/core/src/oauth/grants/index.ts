/**
 * The token endpoint's dispatch: one table from grant_type to the decoder of its
 * parameters and the grant module that handles them.
 */
import { Effect, Either } from "effect"
import { type Application, allows, inService, status } from "../../model/Application.js"
import {
  InvalidClient,
  type InvalidRequest,
  UnauthorizedClient,
  type UnsupportedGrantType
} from "../../model/OAuthError.js"
import * as Call from "../Call.js"
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
    handle: (call: Call.Call<R>, req: Req, app: Application) => Effect.Effect<TokenResponse, E, R>
  ) =>
  (call: Call.Call<R>, params: Params, app: Application): Effect.Effect<TokenResponse, D | E, R> => {
    const req = decode(params)
    return Either.isLeft(req) ? Effect.fail(req.left) : handle(call, req.right, app)
  }

/** Every grant type the token endpoint supports (implicit is authorize-only). */
const grants = {
  [AuthorizationCodeGrant.grantType]: grant(TokenRequest.authorizationCode, AuthorizationCodeGrant.handle),
  [PasswordGrant.grantType]: grant(TokenRequest.password, PasswordGrant.handle),
  [ClientCredentialsGrant.grantType]: grant(TokenRequest.clientCredentials, ClientCredentialsGrant.handle),
  [RefreshTokenGrant.grantType]: grant(TokenRequest.refreshToken, RefreshTokenGrant.handle)
}

type Granted = ReturnType<(typeof grants)[keyof typeof grants]>

/** What the grants read. */
export type Requirements = Effect.Effect.Context<Granted>

/**
 * The refusal of every grant to an application that is not active (docs/platform.md): RFC 6749
 * §5.2 `invalid_client`, as for a client the server does not accept, told only to an application
 * that proved its secret (or a public one), so it says why.
 */
export const outOfService = (app: Application): InvalidClient =>
  new InvalidClient({
    description: `this application is ${status(app)} and may not obtain tokens`
  })

/**
 * Run the grant a token request names, for an authenticated application, in the request `call`:
 * an application that is not active is `invalid_client` (`outOfService`), whatever it asks; a
 * missing grant_type is `invalid_request`, an unknown one `unsupported_grant_type` (both chosen
 * by `Params.refusal`), one the application is not registered for `unauthorized_client`.
 */
export const serve = (
  call: Call.Call<Requirements>,
  params: Params,
  app: Application
): Effect.Effect<
  TokenResponse,
  Effect.Effect.Error<Granted> | InvalidClient | InvalidRequest | UnsupportedGrantType | UnauthorizedClient,
  Requirements
> => {
  if (!inService(app)) return Effect.fail(outOfService(app))
  const named = TokenRequest.grantType(params)
  if (Either.isLeft(named)) return Effect.fail(named.left)
  const name = named.right.grant_type
  return allows(app, name)
    ? grants[name](call, params, app)
    : Effect.fail(new UnauthorizedClient({ description: `this application may not use the ${name} grant` }))
}

/** `serve` for a request from `address`, its services read from the fiber. */
export const handle = (params: Params, app: Application, address: string | undefined) =>
  Call.run({ remoteAddress: address }, (call: Call.Call<Requirements>) => serve(call, params, app))

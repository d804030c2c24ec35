/**
 * The token endpoint's dispatch: grant_type to its grant module.
 */
import { Effect } from "effect"
import type { Application } from "../Application.js"
import { allows } from "../Application.js"
import { UnauthorizedClient } from "../OAuthError.js"
import type { Params } from "../requests/Form.js"
import * as TokenRequest from "../requests/TokenRequest.js"
import * as AuthorizationCodeGrant from "./AuthorizationCodeGrant.js"
import * as ClientCredentialsGrant from "./ClientCredentialsGrant.js"
import * as PasswordGrant from "./PasswordGrant.js"
import * as RefreshTokenGrant from "./RefreshTokenGrant.js"

export * as AuthorizationCodeGrant from "./AuthorizationCodeGrant.js"
export * as ClientCredentialsGrant from "./ClientCredentialsGrant.js"
export type { Grant, Minted, TokenResponse } from "./Issue.js"
export * as PasswordGrant from "./PasswordGrant.js"
export * as RefreshTokenGrant from "./RefreshTokenGrant.js"

/** Run the grant a token request names, for an authenticated application. */
export const handle = Effect.fnUntraced(function* (
  params: Params,
  app: Application,
  address: string | undefined
) {
  const grant = yield* TokenRequest.grantType(params)
  if (!allows(app, grant)) {
    return yield* Effect.fail(
      new UnauthorizedClient({ description: `this application may not use the ${grant} grant` })
    )
  }
  const req = yield* TokenRequest.decode(grant, params)
  return yield* TokenRequest.TokenRequest.$match(req, {
    AuthorizationCode: (r) => AuthorizationCodeGrant.handle(r, app),
    Password: (r) => PasswordGrant.handle(r, app, address),
    ClientCredentials: (r) => ClientCredentialsGrant.handle(r, app),
    RefreshToken: (r) => RefreshTokenGrant.handle(r, app)
  })
})

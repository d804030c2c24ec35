/**
 * Authorization server metadata (RFC 8414) and the OpenID provider configuration (OpenID
 * Connect Discovery 1.0 §3): one document, served at both well-known paths.
 */
import * as Paths from "../http/Paths.js"
import { GrantType, TokenEndpointAuthMethod } from "../model/Application.js"
import type { Settings } from "../model/Config.js"
import * as Discovery from "../openid/Discovery.js"
import * as Strength from "../security/Strength.js"

/** The paths of the OAuth endpoints and the sign-in form, relative to the issuer: `Paths.oauth`. */
export const paths = Paths.oauth

/**
 * The metadata document for these settings: the RFC 8414 fields and the OpenID Connect ones
 * (`Discovery.fields`), `scopes_supported` adding the scope catalogue's `catalogued` names (none:
 * the document as it was before the catalogue). Clients authenticate with the method they
 * registered (HTTP Basic or the body), or not at all when public.
 */
export const document = (
  settings: Settings,
  catalogued: ReadonlyArray<string> = []
): Record<string, unknown> => {
  const base = settings.issuer.replace(/\/+$/, "")
  return {
    issuer: settings.issuer,
    authorization_endpoint: base + paths.authorize,
    token_endpoint: base + paths.token,
    introspection_endpoint: base + paths.introspect,
    revocation_endpoint: base + paths.revoke,
    response_types_supported: ["code", "token"],
    response_modes_supported: ["query", "fragment"],
    grant_types_supported: [...GrantType.literals],
    token_endpoint_auth_methods_supported: [...TokenEndpointAuthMethod.literals, "none"],
    introspection_endpoint_auth_methods_supported: [...TokenEndpointAuthMethod.literals],
    revocation_endpoint_auth_methods_supported: [...TokenEndpointAuthMethod.literals],
    code_challenge_methods_supported: settings.allowPlainPkce ? ["S256", "plain"] : ["S256"],
    authorization_response_iss_parameter_supported: true,
    ...Discovery.fields(
      {
        userinfo: base + paths.userinfo,
        jwks: base + paths.jwks,
        endSession: base + paths.logout
      },
      catalogued
    ),
    // OpenID Connect Discovery 1.0 §3: the `acr` values ID tokens, introspection and JWTs carry
    acr_values_supported: [...Strength.acrValuesSupported],
    // RFC 8414 §2: named only where clients may register themselves
    ...(settings.registration ? { registration_endpoint: base + paths.register } : {})
  }
}

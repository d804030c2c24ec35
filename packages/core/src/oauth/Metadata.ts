/**
 * Authorization server metadata (RFC 8414).
 */
import type { Settings } from "../model/Config.js"

/** The paths of every endpoint, relative to the issuer (fixed by the interface Latchkey serves). */
export const paths = {
  token: "/oauth2/oauth2/token",
  authorize: "/oauth2/oauth2/authorize",
  login: "/oauth2/oauth2/login",
  introspect: "/oauth2/oauth2/introspect",
  revoke: "/oauth2/oauth2/revoke",
  metadata: "/.well-known/oauth-authorization-server"
} as const

/** The metadata document for these settings. */
export const document = (settings: Settings): Record<string, unknown> => {
  const base = settings.issuer.replace(/\/+$/, "")
  return {
    issuer: settings.issuer,
    authorization_endpoint: base + paths.authorize,
    token_endpoint: base + paths.token,
    introspection_endpoint: base + paths.introspect,
    revocation_endpoint: base + paths.revoke,
    response_types_supported: ["code", "token"],
    response_modes_supported: ["query", "fragment"],
    grant_types_supported: [
      "authorization_code",
      "implicit",
      "password",
      "client_credentials",
      "refresh_token"
    ],
    token_endpoint_auth_methods_supported: ["client_secret_basic"],
    introspection_endpoint_auth_methods_supported: ["client_secret_basic"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic"],
    code_challenge_methods_supported: settings.allowPlainPkce ? ["S256", "plain"] : ["S256"],
    authorization_response_iss_parameter_supported: true
  }
}

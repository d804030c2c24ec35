/**
 * Every path Latchkey serves, declared once: the core routes by them and names them in the
 * metadata and OpenAPI documents, the bindings mount them, and the reference server's listeners
 * and metrics read them. Paths of the OAuth endpoints, the pages and the reference server's own
 * resources are relative to the issuer (its URL's path is their prefix); the probes and the admin
 * listener's are absolute.
 */

/** The folder of the OAuth endpoints and pages: the session cookie's path is under the issuer's. */
const folder = "/oauth2/oauth2"

/** The OAuth endpoints and the sign-in form, relative to the issuer (also `Metadata.paths`). */
export const oauth = {
  token: `${folder}/token`,
  authorize: `${folder}/authorize`,
  login: `${folder}/login`,
  introspect: `${folder}/introspect`,
  revoke: `${folder}/revoke`,
  /** OpenID Connect Core §5.3: the userinfo endpoint (GET and POST). */
  userinfo: `${folder}/userinfo`,
  /** OpenID Connect RP-Initiated Logout 1.0 §2: the end session endpoint (GET and POST), a page. */
  logout: `${folder}/logout`,
  /**
   * RFC 7591 §3: the client registration endpoint (POST), also each registered client's
   * configuration endpoint (RFC 7592: GET, PUT, DELETE with `?client_id=`).
   */
  register: `${folder}/register`,
  /** The published signing keys (RFC 7517 JWK Set): the metadata's `jwks_uri`. */
  jwks: `${folder}/jwks`,
  /** RFC 8414 §3: the metadata document. */
  metadata: "/.well-known/oauth-authorization-server",
  /** OpenID Connect Discovery 1.0 §4: the OpenID provider configuration. */
  openidConfiguration: "/.well-known/openid-configuration"
} as const

/** The consents page, relative to the issuer: beside the authorize endpoint, so inside the session cookie's path. */
export const consents = `${folder}/consents` as const

/**
 * The account page (password, sign-in sessions, a link to the consents page), relative to the
 * issuer: beside the authorize endpoint, so inside the session cookie's path.
 */
export const account = `${folder}/account` as const

/**
 * The passkey endpoints of the browser flow (JSON, under the session cookie's path): a passkey
 * sign-in's challenge and its answer, from the sign-in page; the signed-in user's passkeys
 * (list, register, remove), for the account page.
 */
export const passkeys = {
  challenge: `${folder}/passkey/challenge`,
  login: `${folder}/passkey/login`,
  account: `${folder}/account/passkeys`
} as const

/** The JSON endpoints `Http.route` answers. */
export const json: ReadonlyArray<string> = [
  oauth.token,
  oauth.introspect,
  oauth.revoke,
  oauth.metadata,
  oauth.userinfo,
  oauth.jwks,
  oauth.openidConfiguration,
  oauth.register
]

/** The pages `Interaction.handle` answers. */
export const pages: ReadonlyArray<string> = [
  oauth.authorize,
  oauth.login,
  consents,
  oauth.logout,
  account,
  passkeys.challenge,
  passkeys.login,
  passkeys.account
]

/** The reference server's example protected resource, relative to the issuer. */
export const me = "/api/me"

/** The reference server's OpenAPI document (`OpenApi.document`), relative to the issuer. */
export const openapi = "/openapi.json"

/** Liveness probe, at the root of the origin whatever the issuer's path. */
export const healthz = "/healthz"

/** Readiness probe (a query on the store), at the root of the origin whatever the issuer's path. */
export const readyz = "/readyz"

/** The path every admin API endpoint is under, on the admin listener only. */
export const admin = "/admin/v1"

/**
 * The operator console, on the admin listener only: its root (sent on to the applications view),
 * the sign-in and sign-out forms, the applications view and its secret rotation.
 */
export const console = {
  root: "/console",
  signIn: "/console/sign-in",
  signOut: "/console/sign-out",
  apps: "/console/apps",
  rotateSecret: "/console/apps/rotate-secret"
} as const

/** The Prometheus metrics, on the admin listener only. */
export const metrics = "/metrics"

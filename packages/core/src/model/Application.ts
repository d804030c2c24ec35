/**
 * Applications (clients): their registration, redirect URI rules and the grants
 * they may use.
 */
import { Either, Schema } from "effect"
import { InvalidRequest } from "./OAuthError.js"
import * as Scope from "./Scope.js"

/** Grant and response types an application may be registered for. */
export const GrantType = Schema.Literal(
  "authorization_code",
  "implicit",
  "password",
  "client_credentials",
  "refresh_token"
)
/** A grant type name. */
export type GrantType = typeof GrantType.Type

/** What an application's access tokens are: random opaque strings (the default) or signed JWTs (RFC 9068). */
export const AccessTokenFormat = Schema.Literal("opaque", "jwt")
/** An access token format. */
export type AccessTokenFormat = typeof AccessTokenFormat.Type

/**
 * How a confidential application sends its App Secret to the token endpoint (RFC 7591 §2,
 * RFC 6749 §2.3.1): HTTP Basic (the default, the interface's method) or the request body.
 */
export const TokenEndpointAuthMethod = Schema.Literal("client_secret_basic", "client_secret_post")
/** A token endpoint authentication method. */
export type TokenEndpointAuthMethod = typeof TokenEndpointAuthMethod.Type

/**
 * How an application's answers join scopes: with commas (the default, the interface's form) or
 * with spaces (RFC 6749 §3.3, what OAuth libraries expect).
 */
export const ScopeDelimiter = Schema.Literal("comma", "space")
/** A scope delimiter. */
export type ScopeDelimiter = typeof ScopeDelimiter.Type

/**
 * Where an application stands in the operator's review (docs/platform.md): `active` (every
 * application before review existed, and every one an operator registers), `pending` (waiting for
 * the operator), `rejected` and `suspended` (both with the operator's reason). Only an active
 * application obtains tokens or starts an authorization.
 */
export const Status = Schema.Literal("active", "pending", "rejected", "suspended")
/** An application's review status. */
export type Status = typeof Status.Type

/** Grant types of a new application when none are named (`app create` in apps/server/README.md). */
export const defaultGrantTypes: ReadonlyArray<GrantType> = [
  "authorization_code",
  "refresh_token",
  "client_credentials"
]

/** A registered application. */
export const Application = Schema.Struct({
  appKey: Schema.String,
  name: Schema.String,
  /** Keyed digest (HMAC with the server key) of the App Secret; the secret itself is never stored. */
  secretDigest: Schema.String,
  redirectUris: Schema.Array(Schema.String),
  scopes: Scope.ScopeSet,
  grantTypes: Schema.Array(GrantType),
  requirePkce: Schema.Boolean,
  /** Access token lifetime override in seconds, or null for the server default. */
  accessTokenTtl: Schema.NullOr(Schema.Number),
  /** Refresh token lifetime override in seconds, or null for the server default. */
  refreshTokenTtl: Schema.NullOr(Schema.Number),
  createdAt: Schema.Number,
  /**
   * Keyed digest of the App Secret replaced by the last rotation with a grace period
   * (`Admin.rotateSecret`), or null. It authenticates until `previousSecretExpiresAt`.
   * Optional so records built before secret rotation kept a previous secret still type;
   * an absent value means null, and the stores always return the three fields.
   */
  previousSecretDigest: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /** Epoch seconds from which the previous secret no longer authenticates, or null. */
  previousSecretExpiresAt: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true }),
  /**
   * Epoch seconds of the first authentication with the previous secret since the rotation,
   * or null while it has not been used (`ApplicationStore.markPreviousSecretUsed`).
   */
  previousSecretUsedAt: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true }),
  /**
   * A public client (RFC 6749 §2.1): it holds no App Secret (`secretDigest` is empty), uses only
   * the authorization code flow with PKCE S256 and identifies itself with `client_id`. Optional
   * so records built before public clients still type: absent means false (`isPublic`).
   */
  public: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** Its access tokens' format; absent means `opaque` (`accessTokenFormat`). */
  accessTokenFormat: Schema.optionalWith(AccessTokenFormat, { exact: true }),
  /** The `aud` of its JWT access tokens, or null (or absent) for the issuer (`accessTokenAudience`). */
  accessTokenAudience: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /**
   * The browser origins (`https://app.example`) whose pages may call the token, revocation and
   * userinfo endpoints for this application (CORS); absent means none (`webOrigins`).
   */
  webOrigins: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  /** How it authenticates at the token endpoint; absent means `client_secret_basic`. */
  tokenEndpointAuthMethod: Schema.optionalWith(TokenEndpointAuthMethod, { exact: true }),
  /** How its answers join scopes; absent means `comma` (`scopeDelimiter`). */
  scopeDelimiter: Schema.optionalWith(ScopeDelimiter, { exact: true }),
  /**
   * Where RP-initiated logout may send the browser back to (`post_logout_redirect_uri`, OpenID
   * Connect RP-Initiated Logout 1.0 §3), matched exactly; absent means none (`postLogoutRedirectUris`).
   */
  postLogoutRedirectUris: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  /**
   * Where a logout token is POSTed when a session it received an ID token in ends (OpenID Connect
   * Back-Channel Logout 1.0 §2.2 `backchannel_logout_uri`); absent or null means none (`backchannelLogoutUri`).
   */
  backchannelLogoutUri: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /** Whether its logout tokens must carry `sid` (§2.2 `backchannel_logout_session_required`); absent means false. */
  backchannelLogoutSessionRequired: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /**
   * Whether every authorization for it needs a second factor (a passkey, or a password and an
   * authenticator app's code); absent means false (`requiresMfa`).
   */
  requireMfa: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** Its review status; absent means `active` (`status`). */
  status: Schema.optionalWith(Status, { exact: true }),
  /** The operator's reason for a rejection or suspension, or null (or absent) for none. */
  statusReason: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
})
/** A registered application. */
export type Application = typeof Application.Type

/** Whether the application is a public client (no App Secret; PKCE S256 required). */
export const isPublic = (app: Application): boolean => app.public === true

/** The format of the application's access tokens. */
export const accessTokenFormat = (app: Application): AccessTokenFormat => app.accessTokenFormat ?? "opaque"

/** The `aud` of the application's JWT access tokens: its configured audience, else `issuer`. */
export const accessTokenAudience = (app: Application, issuer: string): string =>
  app.accessTokenAudience ?? issuer

/** The origins whose pages may call the application's token, revocation and userinfo endpoints. */
export const webOrigins = (app: Application): ReadonlyArray<string> => app.webOrigins ?? []

/** How the application authenticates at the token endpoint (a public one sends no secret at all). */
export const tokenEndpointAuthMethod = (app: Application): TokenEndpointAuthMethod =>
  app.tokenEndpointAuthMethod ?? "client_secret_basic"

/** How the application's answers join scopes. */
export const scopeDelimiter = (app: Application): ScopeDelimiter => app.scopeDelimiter ?? "comma"

/** Where RP-initiated logout may send the browser back to. */
export const postLogoutRedirectUris = (app: Application): ReadonlyArray<string> =>
  app.postLogoutRedirectUris ?? []

/**
 * Where the application receives logout tokens, or null: a registered URI `validateBackchannelLogoutUri`
 * still accepts (a row written around the admin's checks receives nothing).
 */
export const backchannelLogoutUri = (app: Application): string | null => {
  const uri = app.backchannelLogoutUri ?? null
  return uri !== null && Either.isRight(validateBackchannelLogoutUri(uri)) ? uri : null
}

/**
 * Check a back-channel logout URI for registration (OpenID Connect Back-Channel Logout 1.0 §2.2:
 * absolute, no fragment): checked like a confidential application's redirect URI (https, or http
 * on a loopback host; no user information, printable ASCII), never a private-use scheme.
 */
export const validateBackchannelLogoutUri = (uri: string): Either.Either<string, InvalidRequest> =>
  Either.mapLeft(
    validateRedirectUri(uri, { public: false }),
    (e) =>
      new InvalidRequest({ description: e.description.replace(/^redirect URI/, "back-channel logout URI") })
  )

/** Whether the application requires `sid` in its logout tokens (every logout token carries one). */
export const backchannelLogoutSessionRequired = (app: Application): boolean =>
  app.backchannelLogoutSessionRequired ?? false

/** Whether every authorization for the application needs a second factor. */
export const requiresMfa = (app: Application): boolean => app.requireMfa === true

/** The application's review status. */
export const status = (app: Application): Status => app.status ?? "active"

/** Whether the application may obtain tokens and start authorizations: its status is `active`. */
export const inService = (app: Application): boolean => app.status === undefined || app.status === "active"

/** Longest origin accepted. */
export const maxWebOriginLength = 2048

/**
 * Check a web origin for registration (RFC 6454 §6.2, the `Origin` header's ASCII serialization):
 * `https://host[:port]`, or `http://` on a loopback host, lower case, no path, query, fragment or
 * user information, no default port and no wildcard. The checked value is what a browser sends in
 * `Origin`, so matching is plain string equality (`allowsWebOrigin`).
 */
export const validateWebOrigin = (origin: string): Either.Either<string, InvalidRequest> => {
  const fail = (why: string) => Either.left(new InvalidRequest({ description: `web origin ${why}` }))
  if (origin.length === 0 || origin.length > maxWebOriginLength) return fail("is empty or too long")
  if (/[^\x21-\x7e]/.test(origin) || origin.includes("*")) {
    return fail("must be printable ASCII with no wildcard")
  }
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return fail("is not an absolute origin like https://app.example")
  }
  const secure = url.protocol === "https:" || (url.protocol === "http:" && loopbackHosts.has(url.hostname))
  if (!secure) return fail("must use https (http only for 127.0.0.1, [::1] or localhost)")
  if (url.origin !== origin) {
    return fail("must be exactly scheme://host[:port], lower case, with no path and no default port")
  }
  return Either.right(origin)
}

/** Whether a page of `origin` may call the application's token, revocation and userinfo endpoints. */
export const allowsWebOrigin = (app: Application, origin: string): boolean => webOrigins(app).includes(origin)

/** Longest grace period of a rotated App Secret: 30 days, in seconds. */
export const maxSecretGrace = 30 * 24 * 3600

/**
 * The digest of the previous App Secret if it still authenticates at `now` (epoch seconds):
 * it does while `now < previousSecretExpiresAt`.
 */
export const livePreviousSecret = (app: Application, now: number): string | null => {
  const digest = app.previousSecretDigest ?? null
  const expiresAt = app.previousSecretExpiresAt ?? null
  return digest !== null && digest.length > 0 && expiresAt !== null && now < expiresAt ? digest : null
}

/** Longest redirect URI accepted. */
export const maxRedirectUriLength = 2048

const loopbackHosts = new Set(["127.0.0.1", "[::1]", "localhost"])

// RFC 8252 §7.1, RFC 3986 §3.1: a private-use scheme in reverse-domain form, lower case, a letter first, a dot
const privateUseScheme = /^[a-z][a-z0-9+-]*(?:\.[a-z0-9+-]+)+$/

// Names of the web's own schemes, refused as the first label of a private-use scheme
const webSchemes = new Set([
  "http",
  "https",
  "javascript",
  "data",
  "file",
  "blob",
  "about",
  "vbscript",
  "ws",
  "wss",
  "ftp"
])

/** What decides which redirect URIs an application may register: whether it is a public client. */
export interface RedirectUriOwner {
  /** A public client (RFC 6749 §2.1) may register private-use scheme URIs (RFC 8252 §7.1). */
  readonly public: boolean
}

/**
 * Check a redirect URI for registration (RFC 6749 §3.1.2, RFC 9700 §2.6, RFC 8252 §7):
 * absolute, no fragment, no userinfo, printable ASCII only (RFC 3986 §2: other characters are
 * percent-encoded, so that it can always be sent as a `Location` header value), and either
 * `https`, `http` on a loopback host, or, for a public application only, a private-use scheme in
 * reverse-domain form followed by `:/` and a path (`com.example.app:/cb`). The single guard for
 * redirect URIs: `matchesRedirectUri` applies it again to what an application row holds.
 */
export const validateRedirectUri = (
  uri: string,
  owner: RedirectUriOwner = { public: false }
): Either.Either<string, InvalidRequest> => {
  const fail = (why: string) => Either.left(new InvalidRequest({ description: `redirect URI ${why}` }))
  if (uri.length === 0 || uri.length > maxRedirectUriLength) return fail("is empty or too long")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\s\x00-\x1f\x7f\\]/.test(uri)) return fail("contains whitespace, control characters or backslashes")
  if (/[^\x21-\x7e]/.test(uri)) {
    return fail("must be printable ASCII; percent-encode any other character (RFC 3986)")
  }
  if (uri.includes("#")) return fail("must not contain a fragment")
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return fail("is not an absolute URI")
  }
  if (url.username !== "" || url.password !== "") return fail("must not contain user information")
  if (url.protocol === "https:") {
    if (!uri.toLowerCase().startsWith("https://") || url.hostname === "") return fail("must name a host")
    return Either.right(uri)
  }
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname) && uri.startsWith("http://")) {
    return Either.right(uri)
  }
  const scheme = uri.slice(0, uri.indexOf(":"))
  if (privateUseScheme.test(scheme) && !webSchemes.has(scheme.split(".")[0] ?? "")) {
    // RFC 8252 §8.4: only a native (public) application receives on a private-use scheme
    if (!owner.public) return fail("with a private-use scheme is only for public applications")
    // RFC 8252 §7.1: the scheme, ":/", then a path (no authority)
    if (!/^[^:]+:\/(?!\/)/.test(uri)) return fail("with a private-use scheme must be scheme:/path")
    return Either.right(uri)
  }
  const loopback = "http only for 127.0.0.1, [::1] or localhost"
  return fail(
    owner.public
      ? `must use https (${loopback}), or a private-use scheme like com.example.app:/cb`
      : `must use https (${loopback})`
  )
}

/** The grant types a public application may be registered for (OAuth 2.1 §2.1, RFC 8252). */
export const publicGrantTypes: ReadonlyArray<GrantType> = ["authorization_code", "refresh_token"]

/**
 * Whether the application may use a grant or response type: it is registered for it, and a
 * public application only ever uses one of `publicGrantTypes`, whatever its row says.
 */
export const allows = (app: Application, grant: GrantType): boolean =>
  app.grantTypes.includes(grant) && (!isPublic(app) || publicGrantTypes.includes(grant))

// RFC 8252 §7.3: the loopback IP literals whose registrations without a port match any port
const loopbackLiterals = ["http://127.0.0.1", "http://[::1]"] as const

/**
 * Whether `uri` is `registered` with a port added: `registered` is `http://127.0.0.1` or
 * `http://[::1]` written with no port, and `uri` is the same string with `:port` (1-65535, in
 * plain decimal) after the host; everything else compared as strings.
 */
const matchesLoopbackPort = (registered: string, uri: string): boolean => {
  const host = loopbackLiterals.find((h) => registered.startsWith(h))
  if (host === undefined || !uri.startsWith(`${host}:`)) return false
  const rest = registered.slice(host.length)
  if (rest !== "" && rest[0] !== "/" && rest[0] !== "?") return false
  const port = uri.slice(host.length + 1, uri.length - rest.length)
  return /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535 && uri === `${host}:${port}${rest}`
}

/**
 * RFC 6749 §3.1.2.3: simple string comparison against the registered URIs, nothing else, but
 * for RFC 8252 §7.3: a registered `http://127.0.0.1/...` or `http://[::1]/...` without a port
 * also matches that URI with any port (`localhost` is matched exactly, RFC 8252 §8.3).
 * A registered URI that `validateRedirectUri` refuses for this application (a row written
 * before a rule was added, or written around `Admin.createApplication`, e.g. with non-ASCII
 * characters no `Location` header can carry, or a private-use scheme on an application that is
 * not public) never matches, so authorize shows its error page instead of redirecting.
 */
export const matchesRedirectUri = (app: Application, uri: string): boolean => {
  const owner = { public: isPublic(app) }
  return app.redirectUris.some(
    (registered) =>
      (registered === uri || matchesLoopbackPort(registered, uri)) &&
      Either.isRight(validateRedirectUri(registered, owner))
  )
}

/**
 * OpenID Connect RP-Initiated Logout 1.0 §3: whether `uri` is one of the application's registered
 * post-logout redirect URIs, by exact string comparison (no loopback port rule), and one
 * `validateRedirectUri` still accepts for it (a row written around the admin's checks never matches).
 */
export const matchesPostLogoutRedirectUri = (app: Application, uri: string): boolean => {
  const owner = { public: isPublic(app) }
  return postLogoutRedirectUris(app).some(
    (registered) => registered === uri && Either.isRight(validateRedirectUri(registered, owner))
  )
}

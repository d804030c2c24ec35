/**
 * Server-wide settings: issuer, lifetimes, PKCE policy and the server key.
 */
import { Context, Either, Layer, Schema } from "effect"

/** Settings every grant reads. Lifetimes are in seconds. */
export interface Settings {
  /** The issuer identifier and base URL, e.g. `https://auth.example` (RFC 8414, RFC 9207). */
  readonly issuer: string
  /** The server key: keys App Secret digests and open_id derivation. */
  readonly serverKey: string
  /** Authorization code lifetime (default 60, at most 600). */
  readonly codeTtl: number
  /** Default access token lifetime (default 3600); an application may override it. */
  readonly accessTokenTtl: number
  /** Default refresh token lifetime (default 30 days); an application may override it. */
  readonly refreshTokenTtl: number
  /** Seconds after a rotation in which a retried refresh gets a new pair instead of revoking the family (default 0: off). */
  readonly refreshReuseGrace: number
  /** Whether `code_challenge_method=plain` is accepted (default false). */
  readonly allowPlainPkce: boolean
  /** Idle lifetime of a sign-in session of the authorize pages (default 1800); every page view renews it. */
  readonly sessionTtl: number
  /**
   * Absolute lifetime of a signed-in session, from the sign-in (default 12 hours; ASVS V3.3.2):
   * past it the session counts as signed out however recently it was used.
   */
  readonly sessionMaxAge: number
  /** Lifetime of an OpenID Connect ID token (default 3600). */
  readonly idTokenTtl: number
  /**
   * Access token lifetime of an application set to JWT access tokens that has no override
   * (default 300): a resource server that only verifies the signature sees a revocation only
   * when the token expires, so they are kept short.
   */
  readonly jwtAccessTokenTtl: number
  /** The algorithm of the signing key generated on first start and by a rotation naming none (default ES256). */
  readonly signingAlgorithm: SigningAlgorithm
  /**
   * Whether every sign-in needs a second factor (a passkey, or a password and an authenticator
   * app's code): `required`, or `optional` (the default: only applications that require one, and
   * requests that ask for one with `acr_values`, get it).
   */
  readonly mfa: MfaPolicy
  /**
   * Whether an application a developer creates waits for the operator's review (`pending`), and a
   * developer's change to the redirect URIs or scopes of an active one sends it back to review
   * (default false: a developer's application is active at once). Operators' applications are
   * active either way (docs/platform.md).
   */
  readonly appReview: boolean
  /**
   * Whether clients may register themselves (RFC 7591) at the registration endpoint with an
   * initial access token an operator issued, and manage their registration (RFC 7592); default
   * false: the endpoint answers 404 and the metadata does not name it.
   */
  readonly registration: boolean
}

/** The operator's second-factor policy. */
export const MfaPolicy = Schema.Literal("optional", "required")
/** A second-factor policy. */
export type MfaPolicy = typeof MfaPolicy.Type

/** The JWS algorithms Latchkey signs ID tokens and JWT access tokens with. */
export const SigningAlgorithm = Schema.Literal("ES256", "RS256")
/** A signing algorithm. */
export type SigningAlgorithm = typeof SigningAlgorithm.Type

/** The server settings service. */
export class Config extends Context.Tag("@latchkey/core/Config")<Config, Settings>() {}

/** Default lifetimes and policies. */
export const defaults = {
  codeTtl: 60,
  accessTokenTtl: 3600,
  refreshTokenTtl: 30 * 24 * 3600,
  refreshReuseGrace: 0,
  allowPlainPkce: false,
  sessionTtl: 1800,
  sessionMaxAge: 12 * 3600,
  idTokenTtl: 3600,
  jwtAccessTokenTtl: 300,
  signingAlgorithm: "ES256",
  mfa: "optional",
  appReview: false,
  registration: false
} as const

/** Longest code lifetime allowed (RFC 6749 §4.1.2 recommends at most ten minutes). */
export const maxCodeTtl = 600

/** Fewest characters of a server key: it keys every App Secret digest and the session cookies. */
export const minServerKeyLength = 32

/** A setting that cannot be used; `field` names it. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  field: Schema.String,
  message: Schema.String
}) {}

/**
 * Check an issuer identifier (RFC 8414 §2): an absolute `https` (or, for local
 * use, `http`) URL without query or fragment, and without a trailing slash, so
 * endpoint URLs and the `iss` of RFC 9207 compare exactly.
 */
export const validateIssuer = (issuer: string): Either.Either<string, InvalidConfig> => {
  const invalid = (message: string) => Either.left(new InvalidConfig({ field: "issuer", message }))
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    return invalid(`must be an absolute URL (got ${JSON.stringify(issuer)})`)
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.search !== "" || url.hash !== "") {
    return invalid("must be an http(s) URL without query or fragment (RFC 8414 §2)")
  }
  if (issuer.endsWith("/")) return invalid("must not end with a slash")
  return Either.right(issuer)
}

/** Build settings from an issuer and server key, with the documented defaults for the rest. */
export const make = (
  options: Pick<Settings, "issuer" | "serverKey"> & Partial<Omit<Settings, "issuer" | "serverKey">>
): Either.Either<Settings, InvalidConfig> => {
  const settings: Settings = { ...defaults, ...options }
  const invalid = (field: string, message: string) => Either.left(new InvalidConfig({ field, message }))
  const issuer = validateIssuer(settings.issuer)
  if (Either.isLeft(issuer)) return Either.left(issuer.left)
  if (settings.serverKey.length < minServerKeyLength) {
    return invalid("serverKey", `must be at least ${minServerKeyLength} characters`)
  }
  if (!(Number.isInteger(settings.codeTtl) && settings.codeTtl > 0 && settings.codeTtl <= maxCodeTtl)) {
    return invalid("codeTtl", `must be a whole number of seconds between 1 and ${maxCodeTtl}`)
  }
  for (const k of [
    "accessTokenTtl",
    "refreshTokenTtl",
    "sessionTtl",
    "sessionMaxAge",
    "idTokenTtl",
    "jwtAccessTokenTtl"
  ] as const) {
    if (!(Number.isInteger(settings[k]) && settings[k] > 0)) return invalid(k, "must be a positive integer")
  }
  if (!SigningAlgorithm.literals.includes(settings.signingAlgorithm)) {
    return invalid("signingAlgorithm", `must be one of ${SigningAlgorithm.literals.join(", ")}`)
  }
  if (!MfaPolicy.literals.includes(settings.mfa)) {
    return invalid("mfa", `must be one of ${MfaPolicy.literals.join(", ")}`)
  }
  if (!(settings.refreshReuseGrace >= 0)) return invalid("refreshReuseGrace", "must be >= 0")
  return Either.right(settings)
}

/** A layer providing `make(options)`; it fails to build with InvalidConfig. */
export const layer = (options: Parameters<typeof make>[0]): Layer.Layer<Config, InvalidConfig> =>
  Layer.effect(Config, make(options))

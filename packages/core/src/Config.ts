/**
 * Server-wide settings: issuer, lifetimes, PKCE policy and the server key.
 */
import { Context, Layer } from "effect"

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
}

/** The server settings service. */
export class Config extends Context.Tag("@latchkey/core/Config")<Config, Settings>() {}

/** Default lifetimes and policies of SPEC.md. */
export const defaults = {
  codeTtl: 60,
  accessTokenTtl: 3600,
  refreshTokenTtl: 30 * 24 * 3600,
  refreshReuseGrace: 0,
  allowPlainPkce: false,
  sessionTtl: 1800
} as const

/** Longest code lifetime allowed (RFC 6749 §4.1.2 recommends at most ten minutes). */
export const maxCodeTtl = 600

/** Build settings from an issuer and server key, with SPEC defaults for the rest. */
export const make = (
  options: Pick<Settings, "issuer" | "serverKey"> & Partial<Omit<Settings, "issuer" | "serverKey">>
): Settings => {
  const settings: Settings = { ...defaults, ...options }
  if (!(settings.codeTtl > 0 && settings.codeTtl <= maxCodeTtl)) {
    throw new RangeError(`codeTtl must be between 1 and ${maxCodeTtl} seconds`)
  }
  for (const k of ["accessTokenTtl", "refreshTokenTtl", "sessionTtl"] as const) {
    if (!(Number.isInteger(settings[k]) && settings[k] > 0))
      throw new RangeError(`${k} must be a positive integer`)
  }
  if (!(settings.refreshReuseGrace >= 0)) throw new RangeError("refreshReuseGrace must be >= 0")
  return settings
}

/** A layer providing `make(options)`. */
export const layer = (options: Parameters<typeof make>[0]): Layer.Layer<Config> =>
  Layer.sync(Config, () => make(options))

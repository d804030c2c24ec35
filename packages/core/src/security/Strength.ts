/**
 * How strong a sign-in was, as applications learn it and as requests ask for it: the methods
 * (RFC 8176 `amr`) and the level (`acr`) a session's sign-in method gives, the level an
 * authorization request needs (its `acr_values`, the application's and the operator's policy),
 * and whether a sign-in meets it. One table, weakest first; everything else is derived from it.
 */
import type { SignInMethod } from "../storage/SessionStore.js"

/** A password alone. */
export const passwordAcr = "urn:latchkey:acr:password"
/** Two factors: a password and an authenticator app's code (or a recovery code). */
export const mfaAcr = "urn:latchkey:acr:mfa"
/** Phishing-resistant (OpenID Enhanced Authentication Profile ACR values): a passkey with user verification. */
export const phishingResistantAcr = "phr"

/** Every `acr` this server issues, weakest first: discovery's `acr_values_supported`. */
export const acrValuesSupported = [passwordAcr, mfaAcr, phishingResistantAcr] as const

/** An `acr` this server issues. */
export type Acr = (typeof acrValuesSupported)[number]

const rank = (acr: Acr): number => acrValuesSupported.indexOf(acr)

const isAcr = (value: string): value is Acr => (acrValuesSupported as ReadonlyArray<string>).includes(value)

/**
 * The `acr` of a sign-in by `method` (absent: a password alone). A passkey verified its user
 * (user verification is required), so it is two factors and phishing-resistant.
 */
export const acrOf = (method: SignInMethod | undefined): Acr =>
  method === "passkey" || method === "passkey-device"
    ? phishingResistantAcr
    : method === "totp"
      ? mfaAcr
      : passwordAcr

/**
 * The RFC 8176 `amr` of a sign-in by `method`: `pwd`; `pwd otp mfa` with an authenticator
 * app; a passkey is `swk` when it may be synced to other devices (backup eligible) and `hwk`
 * when bound to one device, with `user` (user verification) and `mfa`.
 */
export const amrOf = (method: SignInMethod | undefined): ReadonlyArray<string> => {
  switch (method) {
    case "passkey":
      return ["swk", "user", "mfa"]
    case "passkey-device":
      return ["hwk", "user", "mfa"]
    case "totp":
      return ["pwd", "otp", "mfa"]
    default:
      return ["pwd"]
  }
}

/**
 * The level an authorization request needs: the weakest of its `acr_values` this server knows
 * (the request accepts any of them; values it does not know are ignored, OpenID Connect Core
 * §3.1.2.1 makes them voluntary), and at least two factors when `mfaRequired` (the operator's
 * `LATCHKEY_MFA=required` or the application's `require_mfa`). Null: any sign-in will do.
 */
export const required = (acrValues: string | undefined, mfaRequired: boolean): Acr | null => {
  const known = (acrValues ?? "").split(" ").filter(isAcr)
  const asked = known.length === 0 ? null : known.reduce((a, b) => (rank(b) < rank(a) ? b : a))
  if (!mfaRequired) return asked
  return asked === null || rank(asked) < rank(mfaAcr) ? mfaAcr : asked
}

/** Whether a sign-in by `method` meets `needed` (null: anything does). */
export const meets = (method: SignInMethod | undefined, needed: Acr | null): boolean =>
  needed === null || rank(acrOf(method)) >= rank(needed)

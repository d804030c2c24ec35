/**
 * How a user signed in, as a session keeps it and as the codes and tokens issued from the
 * session record it: the method (`security/Strength.ts` derives the `acr` and `amr` applications
 * learn of it) and when.
 */
import { Schema } from "effect"

/**
 * How a session's user signed in, when it was not with a password alone: `passkey` (one that may
 * be synced to other devices), `passkey-device` (bound to one device), `totp` (a password, then an
 * authenticator app's code or a recovery code). `security/Strength.ts` derives `acr` and `amr`.
 */
export const SignInMethod = Schema.Literal("passkey", "passkey-device", "totp")
/** How a session's user signed in, when it was not with a password. */
export type SignInMethod = typeof SignInMethod.Type

/**
 * How the sign-in a code or token came from was made, as they record it: `password` (a password
 * alone) or a `SignInMethod`. A code or token that records none came from no sign-in it knows of.
 */
export const SignedInWith = Schema.Literal("password", ...SignInMethod.literals)
/** How the sign-in a code or token came from was made. */
export type SignedInWith = typeof SignedInWith.Type

/** The sign-in a code or token came from: when (epoch seconds, OpenID Connect `auth_time`) and how. */
export interface SignIn {
  readonly authTime: number
  readonly method: SignedInWith
}

/** What a code or token records of a session's method (absent: a password alone). */
export const recorded = (method: SignInMethod | undefined): SignedInWith => method ?? "password"

/** The session's method a code or token recorded (`Strength.acrOf` and `amrOf` read it). */
export const sessionMethod = (method: SignedInWith): SignInMethod | undefined =>
  method === "password" ? undefined : method

/**
 * The sign-in a code or token records: both its `authTime` and its `signInMethod`, or none (a
 * record of a plain OAuth 2.0 request, or from before sign-ins were recorded).
 */
export const of = (record: {
  readonly authTime?: number | null | undefined
  readonly signInMethod?: SignedInWith | undefined
}): SignIn | undefined =>
  record.authTime === undefined || record.authTime === null || record.signInMethod === undefined
    ? undefined
    : { authTime: record.authTime, method: record.signInMethod }

/**
 * A user's second factor: an authenticator app (TOTP, RFC 6238) and its recovery codes.
 */
import { Schema } from "effect"

/**
 * A user's authenticator app. Enrolled as pending (`confirmedAt` null) until a valid code
 * confirms it; a user has at most one.
 */
export const TotpFactor = Schema.Struct({
  userId: Schema.String,
  /** The shared secret (base32), sealed under the server key like a signing key's private key: never stored or logged in the clear. */
  sealedSecret: Schema.String,
  createdAt: Schema.Number,
  /** When a valid code confirmed the enrolment, or null while it is pending. */
  confirmedAt: Schema.NullOr(Schema.Number),
  /** The last time step a code was accepted at (RFC 6238 §5.2: none at or before it is accepted again), or null. */
  lastStep: Schema.NullOr(Schema.Number)
})
/** A user's authenticator app. */
export type TotpFactor = typeof TotpFactor.Type

/** Whether the enrolment is confirmed: only then does a sign-in ask for a code. */
export const isConfirmed = (factor: TotpFactor): boolean => factor.confirmedAt !== null

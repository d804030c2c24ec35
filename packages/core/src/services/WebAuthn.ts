/**
 * The WebAuthn ceremonies (passkeys) as a service port: making the options a browser passes to
 * `navigator.credentials.create()` and `.get()`, and verifying what it answers (the attestation of
 * a new passkey, the assertion of a sign-in). The core decides everything around them (who may
 * register, the challenge, its lifetime and single use, the throttle, the session); the
 * cryptography and the CBOR live in an implementation outside the core (`@latchkey/node`'s
 * `WebAuthnServer`, over `@simplewebauthn/server`). Optional: a program without it has no passkeys.
 */
import { Context, Data, type Effect } from "effect"

/** The relying party and the challenge of a ceremony. */
export interface Ceremony {
  /** The RP ID: the issuer's host name. */
  readonly rpId: string
  /** The challenge, base64url (the core's, bound to the browser's session and form). */
  readonly challenge: string
}

/** What the options of a registration name. */
export interface RegistrationRequest extends Ceremony {
  /** The relying party's name shown by the browser. */
  readonly rpName: string
  /** The user handle: the user's id (its UTF-8 bytes). */
  readonly userId: string
  readonly userName: string
  /** The user's passkeys already registered, not to be registered again on the same authenticator. */
  readonly exclude: ReadonlyArray<{
    readonly credentialId: string
    readonly transports: ReadonlyArray<string>
  }>
}

/** What a ceremony's answer is checked against. */
export interface Expected extends Ceremony {
  /** The origins the browser may have run the ceremony on (the issuer's). */
  readonly origins: ReadonlyArray<string>
}

/** A passkey a registration created, verified: user verification was done, attestation `none` accepted. */
export interface Registered {
  readonly credentialId: string
  /** COSE public key, base64url. */
  readonly publicKey: string
  readonly counter: number
  readonly transports: ReadonlyArray<string>
  readonly deviceType: "singleDevice" | "multiDevice"
  readonly backedUp: boolean
}

/** The stored passkey an assertion is verified against. */
export interface Credential {
  readonly credentialId: string
  readonly publicKey: string
  readonly counter: number
  readonly transports: ReadonlyArray<string>
}

/** A verified assertion: the authenticator's new counter and backup state. */
export interface Asserted {
  readonly counter: number
  readonly deviceType: "singleDevice" | "multiDevice"
  readonly backedUp: boolean
}

/** A ceremony's answer did not verify; `reason` is for logs and audit details (never a secret). */
export class CeremonyFailed extends Data.TaggedError("CeremonyFailed")<{ readonly reason: string }> {}

/** The WebAuthn ceremonies. Every answer (`response`) is the browser's JSON, untrusted. */
export class WebAuthn extends Context.Tag("@latchkey/core/WebAuthn")<
  WebAuthn,
  {
    /** The JSON options of `navigator.credentials.create()`: discoverable, user verification required, attestation `none`. */
    readonly registrationOptions: (request: RegistrationRequest) => Effect.Effect<unknown>
    /** Verify a registration's answer. */
    readonly verifyRegistration: (
      response: unknown,
      expected: Expected
    ) => Effect.Effect<Registered, CeremonyFailed>
    /** The JSON options of `navigator.credentials.get()`: any discoverable passkey, user verification required. */
    readonly authenticationOptions: (ceremony: Ceremony) => Effect.Effect<unknown>
    /** Verify a sign-in's answer against the stored passkey its credential id names. */
    readonly verifyAuthentication: (
      response: unknown,
      expected: Expected,
      credential: Credential
    ) => Effect.Effect<Asserted, CeremonyFailed>
  }
>() {}

/**
 * The core's WebAuthn service port (`WebAuthn.WebAuthn`) over `@simplewebauthn/server` 13.x: the
 * options of the two ceremonies and the verification of their answers (CBOR, COSE keys,
 * signatures, flags). Attestation `none` is asked for (no attestation statement is judged), user
 * verification is required, and passkeys are discoverable (resident keys), so the sign-in page
 * offers them without a username. The challenge, the RP ID and the origins are the core's.
 */
import { WebAuthn } from "@latchkey/core"
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransportFuture,
  RegistrationResponseJSON
} from "@simplewebauthn/server"
import { Effect, Layer } from "effect"

/** The library, as `import()` gives it. */
type Library = typeof import("@simplewebauthn/server")

/** How long the browser waits for the user (ms): the core's challenge lifetime. */
const timeout = 300_000

const bytes = (base64url: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(Buffer.from(base64url, "base64url"))
const base64url = (b: Uint8Array): string => Buffer.from(b).toString("base64url")

// A library's throw (a malformed answer, a failed check) is the ceremony's refusal, with its message
const failed = (e: unknown) =>
  new WebAuthn.CeremonyFailed({ reason: e instanceof Error ? e.message.slice(0, 200) : "not verified" })

const transportsOf = (t: ReadonlyArray<string>) => t as Array<AuthenticatorTransportFuture>

type Service = WebAuthn.WebAuthn["Type"]

/** The registration ceremony over the loaded library. */
const registration = ({
  generateRegistrationOptions,
  verifyRegistrationResponse
}: Library): Pick<Service, "registrationOptions" | "verifyRegistration"> => ({
  registrationOptions: (r) =>
    Effect.promise(() =>
      generateRegistrationOptions({
        rpName: r.rpName,
        rpID: r.rpId,
        userID: new TextEncoder().encode(r.userId),
        userName: r.userName,
        // Bytes, so that the options carry the core's challenge as it is (a string would be UTF-8 encoded)
        challenge: bytes(r.challenge),
        timeout,
        attestationType: "none",
        excludeCredentials: r.exclude.map((c) => ({
          id: c.credentialId,
          transports: transportsOf(c.transports)
        })),
        authenticatorSelection: { residentKey: "required", userVerification: "required" }
      })
    ),
  verifyRegistration: (response, expected) =>
    Effect.tryPromise({
      try: () =>
        verifyRegistrationResponse({
          response: response as RegistrationResponseJSON,
          expectedChallenge: expected.challenge,
          expectedOrigin: [...expected.origins],
          expectedRPID: expected.rpId,
          requireUserVerification: true
        }),
      catch: failed
    }).pipe(
      Effect.flatMap(({ verified, registrationInfo }) =>
        !verified || registrationInfo === undefined
          ? Effect.fail(new WebAuthn.CeremonyFailed({ reason: "registration not verified" }))
          : Effect.succeed({
              credentialId: registrationInfo.credential.id,
              publicKey: base64url(registrationInfo.credential.publicKey),
              counter: registrationInfo.credential.counter,
              transports: registrationInfo.credential.transports ?? [],
              deviceType: registrationInfo.credentialDeviceType,
              backedUp: registrationInfo.credentialBackedUp
            })
      )
    )
})

/** The authentication ceremony over the loaded library. */
const authentication = ({
  generateAuthenticationOptions,
  verifyAuthenticationResponse
}: Library): Pick<Service, "authenticationOptions" | "verifyAuthentication"> => ({
  authenticationOptions: (c) =>
    Effect.promise(() =>
      generateAuthenticationOptions({
        rpID: c.rpId,
        challenge: bytes(c.challenge),
        timeout,
        userVerification: "required",
        allowCredentials: []
      })
    ),
  verifyAuthentication: (response, expected, credential) =>
    Effect.tryPromise({
      try: () =>
        verifyAuthenticationResponse({
          response: response as AuthenticationResponseJSON,
          expectedChallenge: expected.challenge,
          expectedOrigin: [...expected.origins],
          expectedRPID: expected.rpId,
          credential: {
            id: credential.credentialId,
            publicKey: bytes(credential.publicKey),
            counter: credential.counter,
            transports: transportsOf(credential.transports)
          },
          requireUserVerification: true
        }),
      catch: failed
    }).pipe(
      Effect.flatMap(({ verified, authenticationInfo }) =>
        verified
          ? Effect.succeed({
              counter: authenticationInfo.newCounter,
              deviceType: authenticationInfo.credentialDeviceType,
              backedUp: authenticationInfo.credentialBackedUp
            })
          : Effect.fail(new WebAuthn.CeremonyFailed({ reason: "assertion not verified" }))
      )
    )
})

/**
 * The WebAuthn service over `@simplewebauthn/server`, loaded now: a server without passkeys never
 * loads the library and what it brings (about 20 MiB of resident memory).
 */
export const make: Effect.Effect<Service> = Effect.map(
  Effect.promise(() => import("@simplewebauthn/server")),
  (library) => ({ ...registration(library), ...authentication(library) })
)

/** A layer of the WebAuthn service: passkeys on (the core's passkey endpoints answer only with it). */
export const layer: Layer.Layer<WebAuthn.WebAuthn> = Layer.effect(WebAuthn.WebAuthn, make)

/**
 * The rules of passkeys (WebAuthn) as a first factor: the relying party (derived from the issuer),
 * the challenge of a ceremony (bound to the browser's session and to the good-once form ticket it
 * was issued with, short-lived), and a passkey sign-in's throttle budget, which is its own: no
 * password guess at the username, from any address, counts against it, and it never waits in the
 * password checks' queue (`PasswordChecks`). docs/sign-in.md, "Passkeys".
 */
import { Effect, Option } from "effect"
import { Config } from "../model/Config.js"
import type { SignInMethod } from "../model/SignIn.js"
import { hmac } from "../services/Digest.js"
import { encode, utf8 } from "../services/internal/base64url.js"
import type { Passkey } from "../storage/PasskeyStore.js"
import type { Key } from "../storage/ThrottleStore.js"

/** Seconds a ceremony's challenge is good for, from the ticket it was issued with (WebAuthn's recommended 300 s timeout). */
export const challengeTtl = 300

/** What a challenge is for: a sign-in, or a signed-in user's registration. */
export type Purpose = "signin" | "register"

/** The relying party of an issuer: its host name is the RP ID, its origin the only origin a ceremony may run on. */
export const relyingParty = (issuer: string) => {
  const url = new URL(issuer)
  return { rpId: url.hostname, rpName: url.host, origins: [url.origin] as ReadonlyArray<string> }
}

/**
 * The sign-in method a sign-in with `passkey` records: `passkey-device` when the credential is
 * bound to one device (not backup eligible: a hardware key, RFC 8176 `hwk`), `passkey` when it
 * may be synced to other devices (`swk`).
 */
export const signInMethodOf = (passkey: Pick<Passkey, "deviceType">): SignInMethod =>
  passkey.deviceType === "singleDevice" ? "passkey-device" : "passkey"

/**
 * The challenge of a ceremony for `purpose`, issued with the form ticket `txn` of the session
 * `sessionHash` (base64url): an HMAC under the server key, so nothing but the ticket is stored;
 * good once, as the ticket is taken by the ceremony's answer, and for `challengeTtl` seconds from
 * the ticket's creation.
 */
export const challengeOf = (purpose: Purpose, sessionHash: string, txn: string) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    hmac(
      `${serverKey}\u0000latchkey-passkey-challenge`,
      `latchkey-passkey-v1\u0000${purpose}\u0000${sessionHash}\u0000${txn}`
    )
  )

/**
 * Whether a ticket created at `createdAt` (an issue time, rounded up: it may be a second past
 * `now`, rounded down) still carries a live challenge at `now`.
 */
export const isLive = (createdAt: number, now: number): boolean => now - createdAt <= challengeTtl

/**
 * The throttle keys of a passkey sign-in: a budget per credential id and one per address, both its
 * own (`passkey:`), so failed passwords at the same username never lock or slow a passkey down.
 */
export const throttleKeys = (credentialId: string, address: string | undefined): ReadonlyArray<Key> => [
  { key: `passkey:cred:${credentialId}`, kind: "identifier" },
  ...(address === undefined ? [] : [{ key: `passkey:ip:${address}`, kind: "shared" } as const])
]

/** The WebAuthn user handle of a user: their id's UTF-8 bytes, base64url. */
export const userHandleOf = (userId: string): string => encode(utf8(userId))

/** Longest credential id accepted (base64url of WebAuthn's 1023-byte maximum). */
export const maxCredentialId = 1364

/** Longest passkey name kept. */
export const maxName = 64

/** The name the user typed for a passkey (trimmed, at most `maxName`); none when blank. */
export const typedName = (typed: string | undefined): Option.Option<string> => {
  const name = (typed ?? "").trim().slice(0, maxName)
  return name === "" ? Option.none() : Option.some(name)
}

/** The passkey's name: what the user typed (`typedName`), else a default. */
export const nameOf = (typed: string | undefined, count: number): string =>
  Option.getOrElse(typedName(typed), () => `Passkey ${count + 1}`)

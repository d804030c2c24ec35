/**
 * A fake WebAuthn service and authenticator for the core's passkey tests: the ceremony's
 * cryptography is not the point here (`@latchkey/node`'s tests verify real attestations and
 * assertions), what the core decides around it is. The fake checks what the real one checks that
 * the core supplies: the challenge, the origin, the stored key and the counter.
 */
import { randomUUID } from "node:crypto"
import { Effect, Layer } from "effect"
import * as Passkeys from "../src/security/Passkeys.js"
import { CeremonyFailed, WebAuthn } from "../src/services/WebAuthn.js"
import { issuer } from "./fixtures.js"

interface Answer {
  readonly id: string
  readonly response: {
    readonly challenge: string
    readonly origin: string
    readonly publicKey?: string
    readonly signature?: string
    readonly counter: number
    readonly userHandle?: string
    /** Registration: whether the credential may be synced (backup eligible) or is bound to this device. */
    readonly deviceType?: "singleDevice" | "multiDevice"
  }
}

const check = (ok: boolean, reason: string) =>
  ok ? Effect.void : Effect.fail(new CeremonyFailed({ reason }))

/** What every ceremony checks: the challenge and the origin it was run on. */
const ceremony = (r: Answer, expected: { challenge: string; origins: ReadonlyArray<string> }) =>
  Effect.zipRight(
    check(r.response.challenge === expected.challenge, "challenge"),
    check(expected.origins.includes(r.response.origin), "origin")
  )

/** How many verifications the fake ran. */
export const verifications = { count: 0 }

/** The fake service. */
export const FakeWebAuthn = Layer.succeed(WebAuthn, {
  registrationOptions: (r) =>
    Effect.succeed({
      challenge: r.challenge,
      rp: { id: r.rpId, name: r.rpName },
      user: { id: Passkeys.userHandleOf(r.userId), name: r.userName },
      excludeCredentials: r.exclude.map((e) => ({ id: e.credentialId }))
    }),
  verifyRegistration: (response, expected) => {
    verifications.count++
    const r = response as Answer
    return Effect.as(ceremony(r, expected), {
      credentialId: r.id,
      publicKey: r.response.publicKey ?? "",
      counter: r.response.counter,
      transports: ["internal"],
      deviceType: r.response.deviceType ?? "singleDevice",
      backedUp: r.response.deviceType === "multiDevice"
    })
  },
  authenticationOptions: (c) =>
    Effect.succeed({ challenge: c.challenge, rpId: c.rpId, userVerification: "required" }),
  verifyAuthentication: (response, expected, credential) => {
    verifications.count++
    const r = response as Answer
    return ceremony(r, expected).pipe(
      Effect.zipRight(
        check(r.response.signature === `sig:${credential.publicKey}:${r.response.challenge}`, "signature")
      ),
      Effect.zipRight(
        check(
          r.response.counter > credential.counter || (r.response.counter === 0 && credential.counter === 0),
          "counter"
        )
      ),
      Effect.as({ counter: r.response.counter, deviceType: "singleDevice" as const, backedUp: false })
    )
  }
})

/**
 * An authenticator holding passkeys: it answers the options of `create()` and `get()` as the
 * browser's JSON. Its passkeys are bound to it (`singleDevice`) unless it syncs them (`multiDevice`).
 */
export class Authenticator {
  readonly passkeys = new Map<string, { publicKey: string; counter: number; userHandle: string }>()
  constructor(
    readonly origin: string = new URL(issuer).origin,
    readonly deviceType: "singleDevice" | "multiDevice" = "singleDevice"
  ) {}

  create(options: unknown): string {
    const o = options as { challenge: string; user: { id: string } }
    const id = Buffer.from(randomUUID()).toString("base64url")
    const publicKey = Buffer.from(randomUUID()).toString("base64url")
    this.passkeys.set(id, { publicKey, counter: 0, userHandle: o.user.id })
    return JSON.stringify({
      id,
      rawId: id,
      type: "public-key",
      response: {
        challenge: o.challenge,
        origin: this.origin,
        publicKey,
        counter: 0,
        deviceType: this.deviceType
      }
    })
  }

  get(options: unknown, id: string = [...this.passkeys.keys()][0] ?? "", counter?: number): string {
    const o = options as { challenge: string }
    const p = this.passkeys.get(id)
    if (p === undefined) throw new Error("no such passkey")
    p.counter = counter ?? p.counter + 1
    return JSON.stringify({
      id,
      rawId: id,
      type: "public-key",
      response: {
        challenge: o.challenge,
        origin: this.origin,
        signature: `sig:${p.publicKey}:${o.challenge}`,
        counter: p.counter,
        userHandle: p.userHandle
      }
    })
  }
}

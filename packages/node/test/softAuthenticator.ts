/**
 * A software authenticator for the WebAuthn tests: a real P-256 key, real CBOR, real signatures,
 * with attestation `none`, as a platform authenticator answers (flags and counter chosen by the test).
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto"
import { isoCBOR } from "@simplewebauthn/server/helpers"

const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64url")
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest()

/** Authenticator data flags (WebAuthn §6.1). */
export const flags = { up: 0x01, uv: 0x04, be: 0x08, bs: 0x10, at: 0x40 } as const

/** One credential of a software authenticator, for `rpId` on `origin`. */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16)
  private readonly keys = generateKeyPairSync("ec", { namedCurve: "P-256" })
  constructor(
    readonly rpId: string,
    readonly origin: string
  ) {}

  private cose(): Uint8Array {
    const jwk = this.keys.publicKey.export({ format: "jwk" })
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x ?? "", "base64url"))],
        [-3, new Uint8Array(Buffer.from(jwk.y ?? "", "base64url"))]
      ])
    )
  }

  private authData(f: number, counter: number, attested: boolean): Buffer {
    const count = Buffer.alloc(4)
    count.writeUInt32BE(counter)
    const parts = [sha256(this.rpId), Buffer.from([f]), count]
    if (attested) {
      const len = Buffer.alloc(2)
      len.writeUInt16BE(this.credentialId.length)
      parts.push(Buffer.alloc(16), len, this.credentialId, Buffer.from(this.cose()))
    }
    return Buffer.concat(parts)
  }

  private clientData(type: string, challenge: string, origin: string): string {
    return JSON.stringify({ type, challenge, origin, crossOrigin: false })
  }

  /** The browser's JSON answer to `create()` with this challenge. */
  register(challenge: string, o: { f?: number; origin?: string } = {}) {
    const authData = this.authData(o.f ?? flags.up | flags.uv | flags.at, 0, true)
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", new Uint8Array(authData)]
      ])
    )
    return {
      id: b64(this.credentialId),
      rawId: b64(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64(this.clientData("webauthn.create", challenge, o.origin ?? this.origin)),
        attestationObject: b64(attestationObject),
        transports: ["internal"]
      },
      clientExtensionResults: {}
    }
  }

  /** The browser's JSON answer to `get()` with this challenge, signed with the credential's key. */
  assert(challenge: string, counter: number, o: { f?: number; userHandle?: string } = {}) {
    const authData = this.authData(o.f ?? flags.up | flags.uv, counter, false)
    const clientDataJSON = this.clientData("webauthn.get", challenge, this.origin)
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), this.keys.privateKey)
    return {
      id: b64(this.credentialId),
      rawId: b64(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authData),
        signature: b64(signature),
        userHandle: o.userHandle ?? b64("user-1")
      },
      clientExtensionResults: {}
    }
  }
}

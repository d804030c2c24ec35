/**
 * Time-based one-time passwords (TOTP, RFC 6238) over HOTP (RFC 4226) with HMAC-SHA-1, 6 digits,
 * 30-second steps: what every authenticator app computes. Plain functions for the rules; the
 * HMAC is the `HmacSha1` service's, the time the Clock's.
 */
import { Effect } from "effect"
import { timingSafeEqual } from "../services/Digest.js"
import * as HmacSha1 from "../services/HmacSha1.js"

/** Seconds in a time step (RFC 6238 §4.1, X). */
export const period = 30

/** Digits in a code. */
export const digits = 6

/** Bytes of a generated secret: 160 bits, the HMAC-SHA-1 key length RFC 4226 §4 recommends. */
export const secretBytes = 20

/** The steps around the current one a code is accepted at (RFC 6238 §5.2: one step of drift either way). */
export const drift: ReadonlyArray<number> = [-1, 0, 1]

const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** Base32 without padding (RFC 4648 §6), as authenticator apps read secrets. */
export const base32 = (bytes: Uint8Array): string => {
  let out = ""
  let bits = 0
  let value = 0
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += base32Alphabet[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += base32Alphabet[(value << (5 - bits)) & 31]
  return out
}

/** The bytes of a base32 text (case, spaces and padding ignored); undefined for any other character. */
export const fromBase32 = (text: string): Uint8Array | undefined => {
  const clean = text.toUpperCase().replace(/[\s=]/g, "")
  const out: Array<number> = []
  let bits = 0
  let value = 0
  for (const c of clean) {
    const v = base32Alphabet.indexOf(c)
    if (v < 0) return undefined
    value = ((value << 5) | v) & 0xffff
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return new Uint8Array(out)
}

/** The time step of `seconds` (epoch seconds): RFC 6238's T. */
export const stepAt = (seconds: number): number => Math.floor(seconds / period)

/** The 8-byte big-endian counter of `step`. */
const counter = (step: number): Uint8Array => {
  const bytes = new Uint8Array(8)
  let n = step
  for (let i = 7; i >= 0; i--) {
    bytes[i] = n % 256
    n = Math.floor(n / 256)
  }
  return bytes
}

/** HOTP's dynamic truncation (RFC 4226 §5.3) of an HMAC-SHA-1 to `length` digits. */
export const truncate = (mac: Uint8Array, length: number = digits): string => {
  const offset = (mac[mac.length - 1] as number) & 0x0f
  const binary =
    (((mac[offset] as number) & 0x7f) << 24) |
    ((mac[offset + 1] as number) << 16) |
    ((mac[offset + 2] as number) << 8) |
    (mac[offset + 3] as number)
  return String(binary % 10 ** length).padStart(length, "0")
}

/** The code of `secret` (raw bytes) at time step `step`, of `length` digits. */
export const codeAt = (secret: Uint8Array, step: number, length: number = digits): Effect.Effect<string> =>
  Effect.map(HmacSha1.sign(secret, counter(step)), (mac) => truncate(mac, length))

/** Whether `code` has the form of a code: exactly `digits` ASCII digits. */
export const isCodeShaped = (code: string): boolean => code.length === digits && /^[0-9]+$/.test(code)

/**
 * The step among `step - 1`, `step`, `step + 1` whose code is `code`, if any. Every candidate is
 * computed and compared in constant time, so how long it takes tells nothing of which matched.
 */
export const matchingStep = (
  secret: Uint8Array,
  code: string,
  step: number
): Effect.Effect<number | undefined> =>
  isCodeShaped(code)
    ? Effect.map(
        Effect.forEach(drift, (d) => codeAt(secret, step + d)),
        (codes) => {
          let found: number | undefined
          codes.forEach((c, i) => {
            if (timingSafeEqual(c, code) && found === undefined) found = step + (drift[i] as number)
          })
          return found
        }
      )
    : Effect.succeed(undefined)

/**
 * The `otpauth://totp/` URI an authenticator app reads (as text or a QR code): the label is the
 * issuer and the account, each escaped, joined by a colon; the secret, issuer, algorithm, digits
 * and period as parameters.
 */
export const otpauthUri = (issuer: string, account: string, secret: string): string => {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const query = `secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${digits}&period=${period}`
  return `otpauth://totp/${label}?${query}`
}

/**
 * HTTP Basic client credentials (RFC 7617, RFC 6749 Appendix B).
 */
import { Either } from "effect"
import { InvalidClient } from "../OAuthError.js"

/** App Key and App Secret from an Authorization header. */
export interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

const fail = () => Either.left(new InvalidClient({ description: "client authentication failed" }))
const formDecode = (s: string): string => decodeURIComponent(s.replace(/\+/g, " "))

/**
 * Decode `Basic base64(appKey:appSecret)`: split at the first colon, form-urldecode
 * each part (RFC 6749 Appendix B). Anything malformed is `invalid_client`.
 */
export const decode = (header: string | undefined): Either.Either<Credentials, InvalidClient> => {
  if (header === undefined || header.length > 2048) return fail()
  const m = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header)
  if (m === null) return fail()
  let text: string
  try {
    const bin = atob(m[1] as string)
    text = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)))
  } catch {
    return fail()
  }
  const colon = text.indexOf(":")
  if (colon <= 0) return fail()
  try {
    const appKey = formDecode(text.slice(0, colon))
    const appSecret = formDecode(text.slice(colon + 1))
    if (appKey === "" || appSecret === "") return fail()
    return Either.right({ appKey, appSecret })
  } catch {
    return fail()
  }
}

/** Encode credentials the way a client should send them. */
export const encode = (c: Credentials): string => {
  const bytes = new TextEncoder().encode(`${encodeURIComponent(c.appKey)}:${encodeURIComponent(c.appSecret)}`)
  return `Basic ${btoa(String.fromCharCode(...bytes))}`
}

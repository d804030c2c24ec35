/**
 * HTTP Basic client credentials (RFC 7617, RFC 6749 Appendix B).
 */
import { Either } from "effect"
import { InvalidClient } from "../../model/OAuthError.js"
import { isPlainText } from "./Params.js"

/** App Key and App Secret from an Authorization header. */
export interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

const fail = () => Either.left(new InvalidClient({ description: "client authentication failed" }))
const formDecode = (s: string): string =>
  s.includes("%") || s.includes("+") ? decodeURIComponent(s.replace(/\+/g, " ")) : s
const utf8 = new TextDecoder("utf-8", { fatal: true })

// The decoded bytes as UTF-8 text; plain ASCII (the usual case) is already its own text
const utf8Text = (bin: string): string => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/^[\x00-\x7f]*$/.test(bin)) return bin
  const bytes = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
  return utf8.decode(bytes)
}

/**
 * Decode `Basic base64(appKey:appSecret)`: split at the first colon, form-urldecode
 * each part (RFC 6749 Appendix B). Anything malformed, or a part that is not plain text
 * (`Params.isPlainText`), is `invalid_client`.
 */
export const decode = (header: string | undefined): Either.Either<Credentials, InvalidClient> => {
  if (header === undefined || header.length > 2048) return fail()
  const m = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header)
  if (m === null) return fail()
  let text: string
  try {
    text = utf8Text(atob(m[1] as string))
  } catch {
    return fail()
  }
  const colon = text.indexOf(":")
  if (colon <= 0) return fail()
  try {
    const appKey = formDecode(text.slice(0, colon))
    const appSecret = formDecode(text.slice(colon + 1))
    if (appKey === "" || appSecret === "" || !isPlainText(appKey) || !isPlainText(appSecret)) return fail()
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

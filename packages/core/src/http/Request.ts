/**
 * A request as a binding hands it over, and how its headers and body are read before any rule
 * runs: size, content encoding, media type and JSON nesting (docs/security.md T8).
 */
import { utf8 } from "../services/internal/base64url.js"
import type { Refusal } from "./Response.js"

/** A request as a binding hands it over. Header names are lower-case. */
export interface HttpRequest {
  readonly method: string
  readonly path: string
  /** The raw query string, without `?`. */
  readonly query: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The raw body (empty when `bodyTooLarge`). */
  readonly body: string
  /**
   * The binding stopped reading the body because it was, or was declared, longer than
   * `maxBodyBytes`: the request is answered 413 without its body.
   */
  readonly bodyTooLarge?: boolean | undefined
  readonly remoteAddress?: string | undefined
  /** The binding's id for this request, copied into audit events and logs. */
  readonly requestId?: string | undefined
}

/** Whether a binding reads the body of a request with this method: POST, and PUT (RFC 7592 §2.2). */
export const carriesBody = (method: string): boolean => method === "POST" || method === "PUT"

/** Largest accepted body, 16 KiB: larger is 413. */
export const maxBodyBytes = 16 * 1024

/** Header value by lower-case name; a repeated header counts as absent-and-malformed (`null`). */
export const header = (req: HttpRequest, name: string): string | undefined | null => {
  const v = req.headers[name]
  if (v === undefined || typeof v === "string") return v
  return v.length === 1 ? v[0] : null
}

const byteLength = (s: string): number => utf8(s).length

/**
 * What every request body is refused for before its content type is read: a compressed body
 * (415; T8 in docs/security.md: never inflated) and one over `maxBodyBytes` (413), whether the
 * binding stopped reading it (`bodyTooLarge`) or handed it over whole.
 */
export const bodyRefusal = (req: HttpRequest): Refusal | undefined => {
  const encoding = header(req, "content-encoding")
  if (encoding !== undefined && encoding?.toLowerCase() !== "identity") {
    return { status: 415, description: "content encoding is not supported", headers: {} }
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8: a short body is not counted in bytes
  if (
    req.bodyTooLarge === true ||
    req.body.length > maxBodyBytes ||
    (req.body.length * 3 > maxBodyBytes && byteLength(req.body) > maxBodyBytes)
  ) {
    return { status: 413, description: "request body is too large", headers: {} }
  }
  return undefined
}

/** The media type of the request's `Content-Type` (lower case, without parameters), and whether its charset, if any, is UTF-8. */
export const mediaType = (req: HttpRequest): { readonly mime: string; readonly charsetOk: boolean } => {
  const [mime, ...rest] = (header(req, "content-type") ?? "")
    .toLowerCase()
    .split(";")
    .map((s) => s.trim())
  return {
    mime: mime ?? "",
    charsetOk: rest.every(
      (p) => !p.startsWith("charset=") || p === "charset=utf-8" || p === 'charset="utf-8"'
    )
  }
}

/** Deepest nesting of arrays and objects a JSON body may have: a deeper one is refused before it is parsed. */
export const maxJsonDepth = 32

/**
 * Whether JSON text nests arrays and objects deeper than `max`, by one scan of the text that
 * counts brackets outside strings: nothing recursive (parser, decoder, formatter) ever sees a
 * deep body. Malformed text is left for the parser to refuse.
 */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      depth++
      if (depth > max) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}

/**
 * Strict `application/x-www-form-urlencoded` parsing (also used for query strings):
 * malformed percent-encoding and invalid UTF-8 are refused, a repeated parameter
 * is refused (RFC 6749 §3.1, §3.2), an empty value counts as absent.
 */
import { Either } from "effect"
import { InvalidRequest } from "../../model/OAuthError.js"

/** Decoded parameters: one plain string per name, empty values dropped. */
export type Params = Readonly<Record<string, string>>

const decode = (s: string): string => decodeURIComponent(s.replace(/\+/g, " "))

/** The decoded name of one `name=value` part of a form or query string; `null` when it is not decodable. */
export const partName = (part: string): string | null => {
  const eq = part.indexOf("=")
  try {
    return decode(eq === -1 ? part : part.slice(0, eq))
  } catch {
    return null
  }
}

/** Parse a form body or query string. */
export const parse = (input: string): Either.Either<Params, InvalidRequest> => {
  const seen = new Set<string>()
  const out: Record<string, string> = Object.create(null)
  for (const part of input.split("&")) {
    if (part === "") continue
    const eq = part.indexOf("=")
    let name: string
    let value: string
    try {
      name = decode(eq === -1 ? part : part.slice(0, eq))
      value = eq === -1 ? "" : decode(part.slice(eq + 1))
    } catch {
      return Either.left(new InvalidRequest({ description: "malformed percent-encoding or invalid UTF-8" }))
    }
    if (seen.has(name)) {
      return Either.left(new InvalidRequest({ description: `parameter ${JSON.stringify(name)} is repeated` }))
    }
    seen.add(name)
    if (value !== "") out[name] = value
  }
  return Either.right(out)
}

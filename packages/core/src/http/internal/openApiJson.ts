/**
 * The JSON pieces both OpenAPI documents (the server's and the admin API's) are built from.
 */
import { maxBodyBytes } from "../Http.js"

/** A JSON value of the document. */
export type Json = Record<string, unknown>

/** The schema of a header value: the fixed value a response carries, or whole seconds for `retry-after`. */
export const headerOf = (name: string, value: string): Json =>
  name === "retry-after"
    ? { description: "seconds to wait", schema: { type: "string", pattern: "^[1-9][0-9]*$" } }
    : { schema: { type: "string", const: value } }

/** The documented headers of a response: all it carries but its content type. */
export const headersOf = (headers: Readonly<Record<string, string>>): Json =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => name !== "content-type")
      .map(([name, value]) => [name, headerOf(name, value)])
  )

/** The schema of a JSON error body whose `error` is one of `codes`, with `extra` properties. */
export const errorBody = (codes: ReadonlyArray<string>, extra: Json = {}): Json => ({
  type: "object",
  required: ["error"],
  properties: {
    error: { type: "string", enum: [...new Set(codes)].sort() },
    error_description: { type: "string" },
    ...extra
  }
})

/** Form bodies are parsed strictly: a repeated or malformed parameter is 400, a body over the cap 413. */
export const formBody = (schema: Json, description: string): Json => ({
  required: true,
  description: `${description} At most ${maxBodyBytes} bytes, UTF-8, not compressed.`,
  content: { "application/x-www-form-urlencoded": { schema } }
})

/** An HTML page answer. */
export const html = (description: string, headers: Json = {}): Json => ({
  description,
  headers,
  content: { "text/html": { schema: { type: "string" } } }
})

/** A redirect answer with its `location`. */
export const redirect = (status: 302 | 303, description: string): Json => ({
  [status]: {
    description,
    headers: { location: { required: true, schema: { type: "string", format: "uri" } } }
  }
})

/** The `retry-after` header of a 429 or 503. */
export const retryAfter = { "retry-after": headerOf("retry-after", "1") }

/** A 200 JSON answer with this body schema and these headers. */
export const jsonOk = (description: string, body: Json, headers: Readonly<Record<string, string>>): Json => ({
  200: { description, headers: headersOf(headers), content: { "application/json": { schema: body } } }
})

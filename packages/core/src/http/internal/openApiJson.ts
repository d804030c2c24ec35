/**
 * The JSON pieces both OpenAPI documents (the server's and the admin API's) are built from.
 */

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

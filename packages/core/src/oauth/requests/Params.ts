/**
 * Reading single parameters through their Schemas, with the RFC 6749 error a
 * malformed one deserves.
 */
import { Either, Option, Schema } from "effect"
import { InvalidRequest } from "../../model/OAuthError.js"
import type { Params } from "./Form.js"

/**
 * Whether `s` is plain text, the one rule every text passes before a store is asked about it
 * (docs/security.md T13): no control character (C0, DEL, C1) and no lone surrogate, which no
 * store keeps as sent (PostgreSQL refuses NUL, and UTF-8 has no lone surrogates).
 */
export const isPlainText = (s: string): boolean => !/[\p{Cc}\p{Cs}]/u.test(s)

/** A string of at most `max` characters of plain text (`isPlainText`). */
export const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max), Schema.filter(isPlainText))

/** Length caps of every parameter (docs/security.md, catalogue S6, P-5, P-6, A35). */
export const caps = {
  code: 512,
  refresh_token: 512,
  token: 512,
  username: 128,
  password: 1024,
  redirect_uri: 2048,
  state: 2048,
  client_id: 256
} as const

/** The optional parameter `name`, decoded by `schema`; a value it refuses is `invalid_request`. */
export const optional = <A>(
  params: Params,
  name: string,
  schema: Schema.Schema<A, string>
): Either.Either<Option.Option<A>, InvalidRequest> => {
  const raw = params[name]
  if (raw === undefined) return Either.right(Option.none())
  return Schema.decodeEither(schema)(raw).pipe(
    Either.map(Option.some),
    Either.mapLeft(() => new InvalidRequest({ description: `parameter ${name} is malformed` }))
  )
}

/** The required parameter `name`; absent (or empty) is `invalid_request`. */
export const required = <A>(
  params: Params,
  name: string,
  schema: Schema.Schema<A, string>
): Either.Either<A, InvalidRequest> =>
  Either.flatMap(optional(params, name, schema), (o) =>
    Option.match(o, {
      onNone: () => Either.left(new InvalidRequest({ description: `parameter ${name} is required` })),
      onSome: Either.right
    })
  )

/**
 * Scopes: parsed from comma- or space-separated input, held as a sorted set,
 * written comma-joined (the format of Latchkey's token responses), or space-joined for an
 * application that registered `Application.ScopeDelimiter` `space`.
 */
import { Either, ParseResult, Schema } from "effect"
import type { ScopeDelimiter } from "./Application.js"
import { InvalidScope } from "./OAuthError.js"

/** Most items a scope parameter may carry. */
export const maxItems = 64
/** Longest scope parameter accepted, in characters. */
export const maxLength = 2048

/** One scope token: RFC 6749 §3.3 NQCHAR characters, without comma (our separator), 1–128 long. */
export const ScopeToken = Schema.String.pipe(
  Schema.pattern(/^[\x21\x23-\x2B\x2D-\x5B\x5D-\x7E]{1,128}$/),
  Schema.brand("ScopeToken")
)
/** A single scope token. */
export type ScopeToken = typeof ScopeToken.Type

/** A normalised scope set: unique tokens in ascending code-unit order. */
export const ScopeSet = Schema.Array(ScopeToken).pipe(
  Schema.filter((items) => items.every((s, i) => i === 0 || (items[i - 1] as string) < s), {
    message: () => "scope set must be sorted and free of duplicates"
  }),
  Schema.brand("ScopeSet")
)
/** A normalised scope set. */
export type ScopeSet = typeof ScopeSet.Type

const isToken = Schema.is(ScopeToken)

/** Normalise any tokens into a set: duplicates collapsed, sorted. */
export const make = (tokens: Iterable<ScopeToken>): ScopeSet =>
  Array.from(new Set(tokens)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) as unknown as ScopeSet

/** The empty scope set. */
export const empty: ScopeSet = make([])

/**
 * Parse a scope parameter: items separated by commas or spaces, empty items
 * ignored, duplicates collapsed (docs/decisions.md, scope syntax). Case-sensitive (RFC 6749 §3.3).
 */
export const parse = (input: string): Either.Either<ScopeSet, InvalidScope> => {
  if (input.length > maxLength) {
    return Either.left(new InvalidScope({ description: `scope is longer than ${maxLength} characters` }))
  }
  const items = input.split(/[ ,]/).filter((s) => s.length > 0)
  if (items.length > maxItems) {
    return Either.left(new InvalidScope({ description: `scope has more than ${maxItems} items` }))
  }
  const bad = items.find((s) => !isToken(s))
  if (bad !== undefined) {
    return Either.left(new InvalidScope({ description: "scope contains a malformed item" }))
  }
  return Either.right(make(items as Array<ScopeToken>))
}

/**
 * A scope parameter of a request, decoded by `parse`: a refusal carries `parse`'s own
 * description as its message.
 */
export const Param = Schema.transformOrFail(
  Schema.String.annotations({ description: "scope tokens separated by commas or spaces" }),
  Schema.typeSchema(ScopeSet),
  {
    strict: true,
    decode: (input, _, ast) =>
      Either.mapLeft(parse(input), (e) => new ParseResult.Type(ast, input, e.description)),
    encode: (scope) => ParseResult.succeed(format(scope))
  }
)

const separators: Readonly<Record<ScopeDelimiter, string>> = { comma: ",", space: " " }

/** Write a scope set joined with the delimiter (comma unless told), in its stable sorted order. */
export const format = (scope: ScopeSet, delimiter: ScopeDelimiter = "comma"): string =>
  scope.join(separators[delimiter])

/** Whether every item of `narrow` is also in `wide`. */
export const isSubset = (narrow: ScopeSet, wide: ScopeSet): boolean => {
  const all = new Set<string>(wide)
  return narrow.every((s) => all.has(s))
}

/** The union of two scope sets. */
export const union = (a: ScopeSet, b: ScopeSet): ScopeSet => make([...a, ...b])

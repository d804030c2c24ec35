/**
 * Reading the parameters of a request through the request's Schema, and the one place
 * that chooses the RFC 6749 error a refused parameter deserves (`refusal`).
 */
import { Data, Either, type ParseResult, Schema } from "effect"
import { isPlainText } from "../../model/DisplayText.js"
import { InvalidRequest, InvalidScope, UnsupportedGrantType } from "../../model/OAuthError.js"
import type { Params } from "./Form.js"

/** Whether `s` is plain text (`DisplayText.isPlainText`, docs/security.md T13). */
export { isPlainText }

/** A string of at most `max` characters of plain text (`isPlainText`). */
export const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max), Schema.filter(isPlainText))

/** Length caps of every parameter (docs/security.md, catalogue S6, P-5, P-6, A35). */
export const caps = {
  code: 512,
  refresh_token: 512,
  // A JWT access token fits: 500-800 characters as a rule, under 3,800 with the longest scope
  // (Scope.maxLength), App Key and open_id signed RS256, leaving room for issuer and audience
  token: 4096,
  username: 128,
  password: 1024,
  redirect_uri: 2048,
  state: 2048,
  client_id: 256,
  // The longest App Secret an application can hold (`Admin.AppSecretPattern`)
  client_secret: 512,
  nonce: 512,
  acr_values: 512
} as const

/**
 * RFC 6749 §4.1.2.1 `unsupported_response_type`: only ever sent to a validated redirect URI,
 * never answered as JSON.
 */
export class UnsupportedResponseType extends Data.TaggedError("UnsupportedResponseType")<{
  readonly description: string
}> {
  readonly error = "unsupported_response_type"
}

/** The first parameter a request's Schema refused, in the order the Schema declares them. */
export interface ParamFailure {
  /** The parameter's name, as the request spells it. */
  readonly name: string
  /** Absent (or empty, which counts as absent) while required; else present and refused. */
  readonly missing: boolean
  /** Why, in the refusing Schema's own words, when it gives them (a scope's); never the value received. */
  readonly message: string | undefined
}

/** The parameters whose refusal is not `invalid_request`, with the error it is. */
interface Refusals {
  readonly grant_type: UnsupportedGrantType
  readonly response_type: UnsupportedResponseType
  readonly scope: InvalidScope
}

/** Every error a refused parameter can be. */
export type Refusal = InvalidRequest | Refusals[keyof Refusals]

/** The errors a request whose Schema reads the parameters `K` can be refused with. */
export type RefusalOf<K> = InvalidRequest | (K extends keyof Refusals ? Refusals[K] : never)

/** The description of a malformed parameter, where the rule says more than "malformed". */
const malformed: ReadonlyMap<string, string> = new Map([
  ["state", "state is too long"],
  ["client_type", "client_type must be PC or Mobile"],
  ["code_challenge", "code_challenge is malformed"],
  ["code_challenge_method", "code_challenge_method must be S256"],
  ["max_age", "max_age must be a non-negative integer"],
  ["nonce", "nonce is too long or not plain text"],
  ["acr_values", "acr_values is too long or not plain text"]
])

/**
 * The RFC 6749 error of a refused parameter, for every request: an unknown `grant_type` is
 * `unsupported_grant_type`, an unknown `response_type` `unsupported_response_type`, a bad
 * `scope` `invalid_scope` (with the scope rule's own description, as a refused `prompt` has); anything else missing or
 * malformed is `invalid_request`.
 */
export const refusal = (f: ParamFailure): Refusal => {
  if (f.missing) {
    const description = f.name === "response_type" ? "response_type is required" : undefined
    return new InvalidRequest({ description: description ?? `parameter ${f.name} is required` })
  }
  switch (f.name) {
    case "grant_type":
      return new UnsupportedGrantType({ description: "grant_type is not supported" })
    case "response_type":
      return new UnsupportedResponseType({ description: "response_type must be code or token" })
    case "scope":
      return new InvalidScope({ description: f.message ?? "scope is malformed" })
    case "prompt":
      return new InvalidRequest({ description: f.message ?? "prompt is malformed" })
    default:
      return new InvalidRequest({ description: malformed.get(f.name) ?? `parameter ${f.name} is malformed` })
  }
}

// The first of Schema's "one or more" (`SingleOrNonEmpty`): a path or the issues of a Composite
const head = <A>(value: A | readonly [A, ...Array<A>]): A =>
  Array.isArray(value) ? (value[0] as A) : (value as A)

/**
 * The first leaf of a decode error and the field it is under (undefined at the top), found by a
 * loop over the issue tree: Schema's formatters print the value received, which may be large,
 * secret or deep. The admin API's body errors and the request decoders both read it.
 */
export const firstIssue = (
  issue: ParseResult.ParseIssue
): { readonly leaf: ParseResult.ParseIssue; readonly field: PropertyKey | undefined } => {
  let field: PropertyKey | undefined
  let current = issue
  for (;;) {
    switch (current._tag) {
      case "Pointer":
        field ??= head(current.path)
        current = current.issue
        break
      case "Composite":
        current = head(current.issues)
        break
      case "Refinement":
      case "Transformation":
        current = current.issue
        break
      default:
        return { leaf: current, field }
    }
  }
}

/** The parameter a decode error is about. */
const failureOf = (issue: ParseResult.ParseIssue): ParamFailure => {
  const { leaf, field } = firstIssue(issue)
  return {
    name: String(field ?? ""),
    missing: leaf._tag === "Missing",
    message: leaf._tag === "Type" ? leaf.message : undefined
  }
}

/**
 * A decoder of requests whose parameters `schema` declares (its encoded side is the form or
 * query, one string per name): the first refused parameter, in declaration order, is the
 * error `refusal` chooses. Parameters the Schema does not name are ignored.
 */
export const decode = <A, I extends { readonly [K in keyof I]?: string }>(schema: Schema.Schema<A, I>) => {
  const run = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (params: Params): Either.Either<A, RefusalOf<keyof I>> =>
    // A failure names a parameter of I, so its refusal is one of RefusalOf<keyof I>
    Either.mapLeft(run(params), (e) => refusal(failureOf(e.issue)) as RefusalOf<keyof I>)
}

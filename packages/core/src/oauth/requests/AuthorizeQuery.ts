/**
 * The authorize endpoint's query (RFC 6749 §4.1.1, §4.2.1, RFC 7636 §4.3): one Schema that
 * `Authorize.validate` decodes the request with, a part at a time in the order its rules
 * run, and that the OpenAPI document lists as the endpoint's parameters.
 */
import { Either, ParseResult, Schema } from "effect"
import * as Pkce from "../../model/Pkce.js"
import * as Scope from "../../model/Scope.js"
import * as Strength from "../../security/Strength.js"
import { caps, decode, Text } from "./Params.js"

/** An optional parameter: absent, or present with a value. */
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** The values of OpenID Connect's `prompt` (OpenID Connect Core 1.0 §3.1.2.1). */
export const promptValues = ["none", "login", "consent", "select_account"] as const

/** One `prompt` value. */
export type Prompt = (typeof promptValues)[number]

const isPrompt = (v: string): v is Prompt => (promptValues as ReadonlyArray<string>).includes(v)

/** The values of a `prompt` parameter, or why it is refused: an unknown value, or `none` with another. */
const promptsOf = (input: string): Either.Either<ReadonlyArray<Prompt>, string> => {
  const values = [...new Set(input.split(" ").filter((v) => v !== ""))]
  if (!values.every(isPrompt)) return Either.left(`prompt values are ${promptValues.join(", ")}`)
  if (values.includes("none") && values.length > 1)
    return Either.left("prompt=none cannot be combined with another value")
  return Either.right(values)
}

/** `prompt`: space-delimited `promptValues`, `none` only alone; decoded to its distinct values. */
const PromptParam = Schema.transformOrFail(
  Schema.String.pipe(Schema.maxLength(64)).annotations({
    description: `OpenID Connect: space-delimited, of ${promptValues.join(", ")}; none only alone`
  }),
  Schema.Array(Schema.Literal(...promptValues)),
  {
    strict: true,
    decode: (input, _, ast) =>
      Either.mapLeft(promptsOf(input), (message) => new ParseResult.Type(ast, input, message)),
    encode: (values) => ParseResult.succeed(values.join(" "))
  }
)

/** `max_age`: a non-negative number of seconds, decimal digits only. */
const MaxAgeParam = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[0-9]{1,10}$/)).annotations({
    description: "OpenID Connect: the longest time since the user signed in, in seconds"
  }),
  Schema.Number,
  { strict: true, decode: Number, encode: String }
)

/** The parameters of an authorize request. */
export const AuthorizeQuery = Schema.Struct({
  response_type: Schema.Literal("code", "token"),
  client_id: Text(caps.client_id),
  redirect_uri: Text(caps.redirect_uri),
  scope: optional(Scope.Param),
  state: optional(Schema.String.pipe(Schema.maxLength(caps.state))),
  client_type: optional(Schema.Literal("PC", "Mobile")),
  code_challenge: optional(Pkce.Verifier),
  code_challenge_method: optional(Pkce.Method),
  /**
   * The pages' language preference, space-separated BCP 47 tags (OpenID Connect's
   * `ui_locales`); read by the pages (`Locale.parseUiLocales`), never refused.
   */
  ui_locales: optional(Schema.String.pipe(Schema.maxLength(256))),
  /** OpenID Connect (read only for an OpenID request): which pages to show or never show. */
  prompt: optional(PromptParam),
  /** OpenID Connect (read only for an OpenID request): a sign-in older than this many seconds is redone. */
  max_age: optional(MaxAgeParam),
  /**
   * OpenID Connect (read only for an OpenID request): the sign-in strengths the application asks
   * for, space-separated, the weakest known one needed (`Strength.required`); unknown values ignored.
   */
  acr_values: optional(
    Text(caps.acr_values).annotations({
      description: `OpenID Connect: space-separated ACR values, of ${Strength.acrValuesSupported.join(", ")} (others ignored); the sign-in is stepped up to the weakest known one`
    })
  ),
  /** OpenID Connect (read only for an OpenID request): kept on the code for the ID token. */
  nonce: optional(
    Text(caps.nonce).annotations({
      description: `OpenID Connect: plain text of at most ${caps.nonce} characters, returned in the ID token`
    })
  )
})

/** The parameters only an OpenID request reads. */
const openIdOnly: ReadonlySet<string> = new Set(["prompt", "max_age", "nonce", "acr_values"])

/** The name of every authorize parameter of OAuth 2.0 (what a request that is not OpenID reads). */
export const names: ReadonlySet<string> = new Set(
  Object.keys(AuthorizeQuery.fields).filter((name) => !openIdOnly.has(name))
)

/** The name of every authorize parameter an OpenID request reads: `names` and OpenID Connect's. */
export const openIdNames: ReadonlySet<string> = new Set(Object.keys(AuthorizeQuery.fields))

/** Decoders of the parts of the query, one per step of `Authorize.validate`. */
export const parts = {
  clientId: decode(AuthorizeQuery.pick("client_id")),
  redirectUri: decode(AuthorizeQuery.pick("redirect_uri")),
  response: decode(AuthorizeQuery.pick("state", "response_type")),
  options: decode(AuthorizeQuery.pick("client_type", "scope")),
  challengeMethod: decode(AuthorizeQuery.pick("code_challenge_method")),
  challenge: decode(AuthorizeQuery.pick("code_challenge")),
  openId: decode(AuthorizeQuery.pick("prompt", "max_age", "nonce", "acr_values"))
}

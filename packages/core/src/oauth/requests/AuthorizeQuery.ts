/**
 * The authorize endpoint's query (RFC 6749 §4.1.1, §4.2.1, RFC 7636 §4.3): one Schema that
 * `Authorize.validate` decodes the request with, a part at a time in the order its rules
 * run, and that the OpenAPI document lists as the endpoint's parameters.
 */
import { Schema } from "effect"
import * as Pkce from "../../model/Pkce.js"
import * as Scope from "../../model/Scope.js"
import { caps, decode, Text } from "./Params.js"

/** An optional parameter: absent, or present with a value. */
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

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
  ui_locales: optional(Schema.String.pipe(Schema.maxLength(256)))
})

/** The name of every authorize parameter. */
export const names: ReadonlySet<string> = new Set(Object.keys(AuthorizeQuery.fields))

/** Decoders of the parts of the query, one per step of `Authorize.validate`. */
export const parts = {
  clientId: decode(AuthorizeQuery.pick("client_id")),
  redirectUri: decode(AuthorizeQuery.pick("redirect_uri")),
  response: decode(AuthorizeQuery.pick("state", "response_type")),
  options: decode(AuthorizeQuery.pick("client_type", "scope")),
  challengeMethod: decode(AuthorizeQuery.pick("code_challenge_method")),
  challenge: decode(AuthorizeQuery.pick("code_challenge"))
}

/**
 * How the admin API reads a request: its JSON body decoded with an endpoint's Schema and its query
 * checked against the parameters the endpoint takes. Every refusal names the field at fault and
 * never echoes the value received.
 */
import { Either, type ParseResult, Schema } from "effect"
import * as Request from "../../http/Request.js"
import * as Response from "../../http/Response.js"
import { GrantType, ScopeDelimiter, TokenEndpointAuthMethod } from "../../model/Application.js"
import * as Form from "../../oauth/requests/Form.js"
import { firstIssue, isPlainText } from "../../oauth/requests/Params.js"
import { InvalidField } from "./fields.js"

/** Why a request is refused before or instead of its operation; the route answers its response. */
export class Refused {
  readonly _tag = "Refused"
  constructor(readonly response: Response.HttpResponse) {}
}

/** A 400 naming `field`. */
export const badField = (field: string, description: string) => new InvalidField({ field, description })

const refusal = (status: 400 | 413 | 415, description: string) =>
  new Refused(Response.refusalResponse({ status, description, headers: {} }))

/** What each field of a request body must be, for the 400 that names it (never the value received). */
const expected: Readonly<Record<string, string>> = {
  name: "a string",
  redirect_uris: "an array of strings",
  scopes: "an array of scope tokens, or one string of them",
  grant_types: `an array of ${GrantType.literals.join(", ")}`,
  require_pkce: "true or false",
  access_token_ttl: "a whole number of seconds, or null for the server default",
  refresh_token_ttl: "a whole number of seconds, or null for the server default",
  web_origins: "an array of origins like https://app.example",
  post_logout_redirect_uris: "an array of URIs like https://app.example/signed-out",
  token_endpoint_auth_method: TokenEndpointAuthMethod.literals.join(" or "),
  scope_delimiter: ScopeDelimiter.literals.join(" or "),
  grace_seconds: "a whole number of seconds",
  uses: "a whole number",
  expires_in: "a whole number of seconds",
  username: "a string",
  password: "a string",
  disabled: "true or false"
}

/** A decode error as the field it names: never the value received (Schema's formatters print it). */
const describeIssue = (
  issue: ParseResult.ParseIssue,
  fields: Readonly<Record<string, string>> = expected
): InvalidField => {
  const first = firstIssue(issue)
  const tag = first.leaf._tag
  const field = first.field === undefined ? "body" : String(first.field)
  // docs/security.md T13: a name that is not plain text is never echoed
  if (!isPlainText(field)) return badField("body", "a field name contains control characters")
  switch (tag) {
    case "Missing":
      return badField(field, `${field} is required`)
    case "Unexpected":
      return badField(field, `unknown field ${JSON.stringify(field)}`)
    default:
      return badField(field, `${field} must be ${fields[field] ?? "of another type"}`)
  }
}

/** The JSON value of the body of `req`, refused as `readBody` says; `{}` when it is empty without a content type. */
const bodyValue = (req: Request.HttpRequest): Either.Either<unknown, Refused | InvalidField> => {
  const refused = Request.bodyRefusal(req)
  if (refused !== undefined) return Either.left(new Refused(Response.refusalResponse(refused)))
  if (req.body === "" && Request.header(req, "content-type") === undefined) return Either.right({})
  const { mime, charsetOk } = Request.mediaType(req)
  if (mime !== "application/json" || !charsetOk) {
    return Either.left(refusal(415, "content type must be application/json (UTF-8)"))
  }
  if (Request.nestsDeeperThan(req.body, Request.maxJsonDepth)) {
    return Either.left(badField("body", `the body nests deeper than ${Request.maxJsonDepth} levels`))
  }
  try {
    return Either.right(JSON.parse(req.body))
  } catch {
    return Either.left(badField("body", "the body is not valid JSON"))
  }
}

/** How `readBody` reads a body other than the admin API's. */
export interface ReadOptions {
  /** Fields the schema does not name: refused (the default) or ignored (RFC 7591 §2). */
  readonly excess?: "error" | "ignore"
  /** What each field must be, for the 400 that names it (default: the admin API's fields). */
  readonly expected?: Readonly<Record<string, string>>
}

/**
 * The JSON body of `req`, decoded with `schema`: compressed bodies and other content types are
 * 415, a body over `Request.maxBodyBytes` 413, one nesting deeper than `Request.maxJsonDepth` 400,
 * malformed JSON, a wrong type or an unknown field 400 naming the field (never the value
 * received). An empty body without a content type reads as `{}`.
 */
export const readBody = <A, I>(
  req: Request.HttpRequest,
  schema: Schema.Schema<A, I>,
  options: ReadOptions = {}
): Either.Either<A, Refused | InvalidField> =>
  Either.flatMap(bodyValue(req), (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return Either.left(badField("body", "the body must be a JSON object"))
    }
    return Either.mapLeft(
      Schema.decodeUnknownEither(schema, { onExcessProperty: options.excess ?? "error", errors: "first" })(
        value
      ),
      (e) => describeIssue(e.issue, options.expected)
    )
  })

/** The query of `req`, refusing a repeated, malformed or unknown parameter (400 naming it). */
export const readQuery = (
  req: Request.HttpRequest,
  known: ReadonlyArray<string>
): Either.Either<Form.Params, InvalidField> =>
  Either.flatMap(
    Either.mapLeft(Form.parse(req.query), (e) => badField("query", e.description)),
    (params) => {
      const unknown = Object.keys(params).find((name) => !known.includes(name))
      if (unknown === undefined) return Either.right(params)
      // docs/security.md T13: a name that is not plain text is never echoed
      return Either.left(
        isPlainText(unknown)
          ? badField(unknown, `unknown query parameter ${JSON.stringify(unknown)}`)
          : badField("query", "a query parameter name contains control characters")
      )
    }
  )

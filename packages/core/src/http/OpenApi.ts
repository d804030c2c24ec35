/**
 * The OpenAPI 3.1 description of every endpoint the reference server serves, as a
 * plain JSON value. Parameter and body schemas come from the Schemas the decoders
 * read with (`JSONSchema`), error codes, statuses and headers of the JSON endpoints
 * from the errors and functions that build those responses (`OAuthError`, `Http`), paths from
 * `Paths`; what the core holds no value for (page statuses) is kept here and checked against the
 * real endpoints by the tests. The admin API, served on a listener of its own, has a document of
 * its own (`adminDocument`).
 */
import { JSONSchema, Schema } from "effect"
import { maxAuthorizeQuery } from "../interaction/Interaction.js"
import * as OAuthError from "../model/OAuthError.js"
import { OpenIdParam } from "../model/OpenId.js"
import * as Pkce from "../model/Pkce.js"
import type * as Authorize from "../oauth/Authorize.js"
import * as AuthorizationCodeGrant from "../oauth/grants/AuthorizationCodeGrant.js"
import * as ClientCredentialsGrant from "../oauth/grants/ClientCredentialsGrant.js"
import * as PasswordGrant from "../oauth/grants/PasswordGrant.js"
import * as RefreshTokenGrant from "../oauth/grants/RefreshTokenGrant.js"
import * as Metadata from "../oauth/Metadata.js"
import { caps, Text } from "../oauth/requests/Params.js"
import * as Http from "./Http.js"
import * as Paths from "./Paths.js"

/** The OpenAPI document of the admin API, which is served on a listener of its own. */
export { adminDocument } from "../admin/AdminOpenApi.js"

/** A scope parameter: scope tokens separated by commas or spaces (docs/decisions.md). */
const ScopeParam = Schema.String.annotations({
  description: "scope tokens separated by commas or spaces"
})

/**
 * The parameters of each grant type at the token endpoint, with the Schemas
 * `TokenRequest` decodes them with; `grant_type` is read by the grant table.
 */
export const tokenRequests = {
  [AuthorizationCodeGrant.grantType]: Schema.Struct({
    grant_type: Schema.Literal(AuthorizationCodeGrant.grantType),
    code: Text(caps.code),
    redirect_uri: Text(caps.redirect_uri),
    code_verifier: Schema.optional(Pkce.Verifier)
  }).annotations({ identifier: "AuthorizationCodeRequest" }),
  [PasswordGrant.grantType]: Schema.Struct({
    grant_type: Schema.Literal(PasswordGrant.grantType),
    username: Text(caps.username),
    password: Text(caps.password)
  }).annotations({ identifier: "PasswordRequest" }),
  [ClientCredentialsGrant.grantType]: Schema.Struct({
    grant_type: Schema.Literal(ClientCredentialsGrant.grantType),
    open_id: Schema.optional(OpenIdParam)
  }).annotations({ identifier: "ClientCredentialsRequest" }),
  [RefreshTokenGrant.grantType]: Schema.Struct({
    grant_type: Schema.Literal(RefreshTokenGrant.grantType),
    refresh_token: Text(caps.refresh_token),
    scope: Schema.optional(ScopeParam)
  }).annotations({ identifier: "RefreshTokenRequest" })
} as const

/** The token response (RFC 6749 §5.1); the tests check its type equals `Grants.TokenResponse`. */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  scope: Schema.String,
  refresh_token: Schema.optionalWith(Schema.String, { exact: true }),
  open_id: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "TokenResponse" })

/** The introspection response (RFC 7662 §2.2); the tests check its type equals `Introspection.IntrospectionResponse`. */
export const IntrospectionResponse = Schema.Union(
  Schema.Struct({ active: Schema.Literal(false) }),
  Schema.Struct({
    active: Schema.Literal(true),
    scope: Schema.String,
    client_id: Schema.String,
    token_type: Schema.String,
    exp: Schema.Int,
    iat: Schema.Int,
    sub: Schema.optionalWith(Schema.String, { exact: true }),
    subject_type: Schema.optionalWith(Schema.Literal("user", "application"), { exact: true })
  })
).annotations({ identifier: "IntrospectionResponse" })

/** The parameters of the authorize endpoint's query (RFC 6749 §4.1.1, §4.2.1, RFC 7636). */
export const AuthorizeQuery = Schema.Struct({
  response_type: Schema.Literal("code", "token"),
  client_id: Text(caps.client_id),
  redirect_uri: Text(caps.redirect_uri),
  scope: Schema.optional(ScopeParam),
  state: Schema.optional(Text(caps.state)),
  client_type: Schema.optional(Schema.Literal("PC", "Mobile")),
  code_challenge: Schema.optional(Pkce.Verifier),
  code_challenge_method: Schema.optional(Pkce.Method),
  /** The pages' language preference, space-separated BCP 47 tags (OpenID Connect's `ui_locales`). */
  ui_locales: Schema.optional(Schema.String.pipe(Schema.maxLength(256)))
})

/** The sign-in form (`POST /oauth2/oauth2/login`). */
const SignInForm = Schema.Struct({
  txn: Schema.String,
  csrf_token: Schema.String,
  username: Schema.optional(Schema.String),
  password: Schema.optional(Schema.String),
  switch_account: Schema.optional(Schema.String)
}).annotations({ identifier: "SignInForm" })

/** The consent form (`POST /oauth2/oauth2/authorize`). */
const ConsentForm = Schema.Struct({
  txn: Schema.String,
  csrf_token: Schema.String,
  decision: Schema.Literal("allow", "deny")
}).annotations({ identifier: "ConsentForm" })

/** A form of the consents page (`POST /oauth2/oauth2/consents`). */
const ConsentsForm = Schema.Struct({
  txn: Schema.String,
  csrf_token: Schema.String,
  action: Schema.Literal("signin", "withdraw", "signout"),
  username: Schema.optional(Schema.String),
  password: Schema.optional(Schema.String),
  app_key: Schema.optional(Schema.String)
}).annotations({ identifier: "ConsentsForm" })

/** `/api/me`'s body. */
const Me = Schema.Struct({
  open_id: Schema.NullOr(Schema.String),
  client_id: Schema.String,
  scope: Schema.String
}).annotations({ identifier: "Me" })

const Status = Schema.Struct({ status: Schema.Literal("ok", "unavailable") }).annotations({
  identifier: "Status"
})

type ByTag<E extends { readonly _tag: string }> = {
  readonly [K in E["_tag"]]: Extract<E, { readonly _tag: K }>
}

/** One of every error the form endpoints answer: a new member of `OAuthError.OAuthError` must be added here. */
const formErrors: ByTag<OAuthError.OAuthError> = {
  InvalidRequest: new OAuthError.InvalidRequest({ description: "" }),
  InvalidClient: new OAuthError.InvalidClient({ description: "" }),
  InvalidGrant: new OAuthError.InvalidGrant({ description: "" }),
  UnauthorizedClient: new OAuthError.UnauthorizedClient({ description: "" }),
  UnsupportedGrantType: new OAuthError.UnsupportedGrantType({ description: "" }),
  InvalidScope: new OAuthError.InvalidScope({ description: "" }),
  ServerError: new OAuthError.ServerError({ description: "" }),
  TemporarilyUnavailable: new OAuthError.TemporarilyUnavailable({ description: "", retryAfter: 1 }),
  RateLimited: new OAuthError.RateLimited({ description: "", retryAfter: 1 })
}

/** One of every error a bearer request is refused with: a new member of `OAuthError.BearerError` must be added here. */
const bearerErrors: ByTag<OAuthError.BearerError> = {
  InvalidRequest: new OAuthError.InvalidRequest({ description: "" }),
  InvalidToken: new OAuthError.InvalidToken({ description: "" }),
  InsufficientScope: new OAuthError.InsufficientScope({ description: "", scope: "" }),
  TemporarilyUnavailable: new OAuthError.TemporarilyUnavailable({ description: "", retryAfter: 1 })
}

/** Every status a request is refused with before any OAuth rule runs (exhaustive by type). */
const refusalStatuses: { readonly [S in Http.Refusal["status"]]: null } = {
  400: null,
  405: null,
  413: null,
  415: null
}

/** The redirect error codes of the authorize endpoint (exhaustive by type). */
const redirectErrors: { readonly [C in Authorize.RedirectErrorCode]: null } = {
  invalid_request: null,
  unauthorized_client: null,
  access_denied: null,
  unsupported_response_type: null,
  invalid_scope: null,
  server_error: null,
  temporarily_unavailable: null
}

/** Every error response of a form endpoint (token, introspection, revocation), as `Http` builds it. */
const formErrorResponses = (): ReadonlyArray<Http.HttpResponse> => [
  ...Object.values(formErrors).map(Http.errorResponse),
  ...Object.keys(refusalStatuses).map((s) => {
    const status = Number(s) as Http.Refusal["status"]
    return Http.refusalResponse(
      status === 405 ? Http.methodNotAllowed("POST") : { status, description: "", headers: {} }
    )
  })
]

type Json = Record<string, unknown>

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

/** The error responses of a form endpoint, grouped by status. */
const formErrorsByStatus = (): Json => {
  const out: Record<string, { codes: Array<string>; headers: Record<string, string> }> = {}
  for (const res of formErrorResponses()) {
    const entry = out[res.status] ?? { codes: [], headers: {} }
    out[res.status] = entry
    entry.codes.push((JSON.parse(res.body) as { error: string }).error)
    Object.assign(entry.headers, res.headers)
  }
  return Object.fromEntries(
    Object.entries(out).map(([status, { codes, headers }]) => [
      status,
      {
        description: "an OAuth error (RFC 6749 §5.2)",
        headers: headersOf(headers),
        content: { "application/json": { schema: errorBody(codes) } }
      }
    ])
  )
}

/** Form bodies are parsed strictly: a repeated or malformed parameter is 400, a body over the cap 413. */
const formBody = (schema: Json, description: string): Json => ({
  required: true,
  description: `${description} At most ${Http.maxBodyBytes} bytes, UTF-8, not compressed.`,
  content: { "application/x-www-form-urlencoded": { schema } }
})

const html = (description: string, headers: Json = {}): Json => ({
  description,
  headers,
  content: { "text/html": { schema: { type: "string" } } }
})

const redirect = (status: 302 | 303, description: string): Json => ({
  [status]: {
    description,
    headers: { location: { required: true, schema: { type: "string", format: "uri" } } }
  }
})

const retryAfter = { "retry-after": headerOf("retry-after", "1") }

/** The OpenAPI 3.1 document of the server whose issuer is `options.issuer` (its path prefixes every endpoint but the health probes). */
export const document = (options: { readonly issuer: string }): Json => {
  const issuer = options.issuer.replace(/\/+$/, "")
  const origin = new URL(issuer).origin
  const schemas: Record<string, JSONSchema.JsonSchema7> = {}
  const schema = (s: Schema.Schema.AnyNoContext): Json =>
    JSONSchema.fromAST(s.ast, {
      definitions: schemas,
      definitionPath: "#/components/schemas/",
      target: "openApi3.1",
      additionalPropertiesStrategy: "allow"
    }) as unknown as Json
  const jsonOk = (description: string, body: Json, headers: Readonly<Record<string, string>>): Json => ({
    200: { description, headers: headersOf(headers), content: { "application/json": { schema: body } } }
  })
  const noStore = Http.json(200, null).headers
  const formErrorsJson = formErrorsByStatus()
  const clientAuth = [{ clientBasic: [] }]
  const grantTypes = Object.keys(tokenRequests) as Array<keyof typeof tokenRequests>
  const bearerByStatus = new Map<number, Array<string>>([[401, ["invalid_request"]]])
  for (const e of Object.values(bearerErrors))
    bearerByStatus.set(e.status, [...(bearerByStatus.get(e.status) ?? []), e.error])
  const query = JSONSchema.fromAST(AuthorizeQuery.ast, { definitions: schemas, target: "openApi3.1" }) as {
    readonly properties?: Record<string, unknown>
    readonly required?: ReadonlyArray<string>
  }
  const challenge = { "www-authenticate": { required: true, schema: { type: "string", pattern: "^Bearer" } } }
  // introspection and revocation take the same form
  const tokenBody = formBody(
    {
      type: "object",
      required: ["token"],
      properties: {
        token: schema(Text(caps.token)),
        token_type_hint: { type: "string", enum: ["access_token", "refresh_token"] }
      }
    },
    "The token, never in the query string."
  )

  const paths: Json = {
    [Metadata.paths.token]: {
      post: {
        operationId: "token",
        summary: "Token endpoint (RFC 6749 §3.2)",
        security: clientAuth,
        requestBody: formBody(
          {
            oneOf: grantTypes.map((g) => schema(tokenRequests[g])),
            discriminator: { propertyName: "grant_type" }
          },
          "The parameters of one grant type; client credentials go only in the Authorization header (a client_secret parameter, or a client_id other than the App Key, is invalid_request)."
        ),
        responses: {
          ...jsonOk("the token response (RFC 6749 §5.1)", schema(TokenResponse), noStore),
          ...formErrorsJson
        }
      }
    },
    [Metadata.paths.introspect]: {
      post: {
        operationId: "introspect",
        summary: "Token introspection (RFC 7662) of the application's own tokens",
        security: clientAuth,
        requestBody: tokenBody,
        responses: {
          ...jsonOk("the introspection response", schema(IntrospectionResponse), noStore),
          ...formErrorsJson
        }
      }
    },
    [Metadata.paths.revoke]: {
      post: {
        operationId: "revoke",
        summary: "Token revocation (RFC 7009); a refresh token revokes its family",
        security: clientAuth,
        requestBody: tokenBody,
        responses: {
          200: {
            description: "revoked, or not a token of this application: an empty body",
            headers: headersOf({ "cache-control": "no-store", pragma: "no-cache" })
          },
          ...formErrorsJson
        }
      }
    },
    [Metadata.paths.metadata]: {
      get: {
        operationId: "metadata",
        summary: "Authorization server metadata (RFC 8414)",
        responses: jsonOk(
          "the metadata document",
          { type: "object", required: ["issuer", "token_endpoint", "authorization_endpoint"] },
          { "cache-control": "public, max-age=3600" }
        )
      }
    },
    [Metadata.paths.authorize]: {
      get: {
        operationId: "authorize",
        summary: "Authorization endpoint (RFC 6749 §3.1): the code (query) and implicit (fragment) flows",
        parameters: Object.entries(query.properties ?? {}).map(([name, s]) => ({
          name,
          in: "query",
          required: query.required?.includes(name) ?? false,
          schema: s
        })),
        responses: {
          200: html("the sign-in or consent page"),
          ...redirect(
            302,
            `to redirect_uri: code, state and iss in the query (code), or access_token, token_type, expires_in, scope, state and iss in the fragment (token); errors as error, error_description, state and iss, error one of ${Object.keys(redirectErrors).join(", ")}`
          ),
          400: html(
            "an error page (invalid_request): the client or redirect_uri cannot be trusted, so no redirect"
          ),
          414: html(`the query is longer than ${maxAuthorizeQuery} characters (invalid_request)`),
          503: html("storage is unavailable (temporarily_unavailable)", retryAfter)
        }
      },
      post: {
        operationId: "consent",
        summary: "The consent form",
        requestBody: formBody(schema(ConsentForm), "Posted by the consent page with the session cookie."),
        responses: {
          ...redirect(303, "to redirect_uri with the code, the token or access_denied"),
          400: html("the decision is neither allow nor deny, or the form is malformed"),
          403: html("the form's ticket, CSRF token, session or origin is not valid"),
          413: html("the body is too large"),
          415: html("the body is compressed"),
          503: html("storage is unavailable", retryAfter)
        }
      }
    },
    [Metadata.paths.login]: {
      post: {
        operationId: "signIn",
        summary: "The sign-in form",
        requestBody: formBody(schema(SignInForm), "Posted by the sign-in page with the session cookie."),
        responses: {
          ...redirect(303, "signed in (or switching account): back to the authorize endpoint"),
          400: html("wrong username or password: the sign-in page again"),
          403: html("the form's ticket, CSRF token, session or origin is not valid"),
          413: html("the body is too large"),
          415: html("the body is compressed"),
          429: html("too many failed sign-ins", retryAfter),
          503: html("storage is unavailable", retryAfter)
        }
      }
    },
    [Paths.consents]: {
      get: {
        operationId: "consents",
        summary: "The consents page: a signed-in user's authorised applications, or a sign-in form",
        parameters: ["client_type", "ui_locales"].map((name) => ({
          name,
          in: "query",
          required: false,
          schema: query.properties?.[name]
        })),
        responses: {
          200: html("the consents page, or its sign-in form when nobody is signed in"),
          503: html("storage is unavailable (temporarily_unavailable)", retryAfter)
        }
      },
      post: {
        operationId: "consentsForm",
        summary: "Sign in, withdraw a consent (revoking that application's tokens for the user) or sign out",
        requestBody: formBody(schema(ConsentsForm), "Posted by the consents page with the session cookie."),
        responses: {
          ...redirect(303, "back to the consents page"),
          400: html("wrong username or password, or an unknown action"),
          403: html("the form's ticket, CSRF token, session or origin is not valid"),
          413: html("the body is too large"),
          415: html("the body is compressed"),
          429: html("too many failed sign-ins", retryAfter),
          503: html("storage is unavailable", retryAfter)
        }
      }
    },
    [Paths.me]: {
      get: {
        operationId: "me",
        summary: "The example protected resource",
        security: [{ bearer: [] }],
        responses: {
          200: {
            description: "the principal of the token",
            headers: {
              "latchkey-subject-type": {
                description: "how open_id was established, when there is one",
                schema: { type: "string", enum: ["user", "application"] }
              }
            },
            content: { "application/json": { schema: schema(Me) } }
          },
          ...Object.fromEntries(
            [...bearerByStatus].map(([status, codes]) => [
              status,
              {
                description: "a bearer error (RFC 6750 §3.1)",
                headers: status === 503 ? { ...challenge, ...retryAfter } : challenge,
                content: {
                  "application/json": {
                    schema: errorBody(codes, status === 403 ? { scope: { type: "string" } } : {})
                  }
                }
              }
            ])
          )
        }
      }
    },
    [Paths.openapi]: {
      get: {
        operationId: "openapi",
        summary: "This document",
        responses: {
          200: { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } }
        }
      }
    },
    [Paths.healthz]: {
      servers: [{ url: origin }],
      get: {
        operationId: "healthz",
        summary: "Liveness",
        responses: jsonOk("the process is up", schema(Status), { "cache-control": "no-store" })
      }
    },
    [Paths.readyz]: {
      servers: [{ url: origin }],
      get: {
        operationId: "readyz",
        summary: "Readiness: a query on the store succeeds",
        responses: {
          ...jsonOk("ready", schema(Status), { "cache-control": "no-store" }),
          503: {
            description: "the store is unavailable",
            content: { "application/json": { schema: schema(Status) } }
          }
        }
      }
    }
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Latchkey",
      version: "1",
      description:
        "An OAuth 2.0 authorization server. Every JSON answer carries the error and error_description of RFC 6749 §5.2 when it fails."
    },
    servers: [{ url: issuer }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        clientBasic: {
          type: "http",
          scheme: "basic",
          description: "App Key and App Secret (RFC 6749 §2.3.1); the only client authentication"
        },
        bearer: { type: "http", scheme: "bearer", description: "an access token (RFC 6750)" }
      }
    }
  }
}

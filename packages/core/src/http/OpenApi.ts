/**
 * The OpenAPI 3.1 description of every endpoint the reference server serves, as a
 * plain JSON value. Parameter and body schemas come from the Schemas the decoders
 * read with (`JSONSchema`), error codes, statuses and headers of the JSON endpoints
 * from the errors and functions that build those responses (`OAuthError`, `Http`);
 * what the core holds no value for (page statuses, the server's own paths) is kept
 * here and checked against the real endpoints by the tests. The admin API, served on a
 * listener of its own, has a document of its own (`adminDocument`).
 */
import { JSONSchema, Schema } from "effect"
import * as AdminJson from "../admin/AdminJson.js"
import { ConsentForm, ConsentsForm, SignInForm } from "../interaction/Forms.js"
import { consentsPath, maxAuthorizeQuery } from "../interaction/Interaction.js"
import * as OAuthError from "../model/OAuthError.js"
import type * as Authorize from "../oauth/Authorize.js"
import { TokenResponse } from "../oauth/grants/Issue.js"
import { IntrospectionResponse, TokenForm } from "../oauth/Introspection.js"
import * as Metadata from "../oauth/Metadata.js"
import { AuthorizeQuery } from "../oauth/requests/AuthorizeQuery.js"
import * as TokenRequest from "../oauth/requests/TokenRequest.js"
import { EventType } from "../security/AuditEvent.js"
import * as Http from "./Http.js"

/** The paths the reference server adds to the core's (`Metadata.paths`), relative to the issuer. */
export const serverPaths = {
  me: "/api/me",
  openapi: "/openapi.json",
  /** Health probes answer at the root of the origin, whatever the issuer's path. */
  healthz: "/healthz",
  readyz: "/readyz"
} as const

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
const headerOf = (name: string, value: string): Json =>
  name === "retry-after"
    ? { description: "seconds to wait", schema: { type: "string", pattern: "^[1-9][0-9]*$" } }
    : { schema: { type: "string", const: value } }

/** The documented headers of a response: all it carries but its content type. */
const headersOf = (headers: Readonly<Record<string, string>>): Json =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => name !== "content-type")
      .map(([name, value]) => [name, headerOf(name, value)])
  )

const errorBody = (codes: ReadonlyArray<string>, extra: Json = {}): Json => ({
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

/** What the path builders share: a Schema's JSON Schema (named ones go to the document's components). */
interface Build {
  readonly schema: (s: Schema.Schema.AnyNoContext) => Json
  /** The authorize endpoint's query parameters, by name, from `AuthorizeQuery`. */
  readonly query: { readonly properties?: Record<string, unknown>; readonly required?: ReadonlyArray<string> }
}

/** A 200 JSON answer with this body schema and these headers. */
const jsonOk = (description: string, body: Json, headers: Readonly<Record<string, string>>): Json => ({
  200: { description, headers: headersOf(headers), content: { "application/json": { schema: body } } }
})

const noStore = () => Http.json(200, null).headers

const clientAuth = [{ clientBasic: [] }]

/** The token endpoint: one request body per grant type, from `TokenRequest.requests`. */
const tokenPath = (b: Build): Json => ({
  post: {
    operationId: "token",
    summary: "Token endpoint (RFC 6749 §3.2)",
    security: clientAuth,
    requestBody: formBody(
      {
        oneOf: Object.values(TokenRequest.requests).map((request) => b.schema(request)),
        discriminator: { propertyName: "grant_type" }
      },
      "The parameters of one grant type; client credentials go only in the Authorization header (a client_secret parameter, or a client_id other than the App Key, is invalid_request)."
    ),
    responses: {
      ...jsonOk("the token response (RFC 6749 §5.1)", b.schema(TokenResponse), noStore()),
      ...formErrorsByStatus()
    }
  }
})

/** Introspection and revocation, which take the same form (`Introspection.TokenForm`). */
const tokenFormPaths = (b: Build): Json => {
  const requestBody = formBody(b.schema(TokenForm), "The token, never in the query string.")
  return {
    [Metadata.paths.introspect]: {
      post: {
        operationId: "introspect",
        summary: "Token introspection (RFC 7662) of the application's own tokens",
        security: clientAuth,
        requestBody,
        responses: {
          ...jsonOk("the introspection response", b.schema(IntrospectionResponse), noStore()),
          ...formErrorsByStatus()
        }
      }
    },
    [Metadata.paths.revoke]: {
      post: {
        operationId: "revoke",
        summary: "Token revocation (RFC 7009); a refresh token revokes its family",
        security: clientAuth,
        requestBody,
        responses: {
          200: {
            description: "revoked, or not a token of this application: an empty body",
            headers: headersOf({ "cache-control": "no-store", pragma: "no-cache" })
          },
          ...formErrorsByStatus()
        }
      }
    }
  }
}

const metadataPath: Json = {
  get: {
    operationId: "metadata",
    summary: "Authorization server metadata (RFC 8414)",
    responses: jsonOk(
      "the metadata document",
      { type: "object", required: ["issuer", "token_endpoint", "authorization_endpoint"] },
      { "cache-control": "public, max-age=3600" }
    )
  }
}

/** The answers of a page form besides its own: a bad ticket, a body refused, storage down. */
const pageFormResponses = (): Json => ({
  403: html("the form's ticket, CSRF token, session or origin is not valid"),
  413: html("the body is too large"),
  415: html("the body is compressed"),
  503: html("storage is unavailable", retryAfter)
})

/** A page form's operation: its body Schema, posted with the session cookie. */
const pageForm = (
  b: Build,
  operation: { readonly id: string; readonly summary: string; readonly page: string },
  form: Schema.Schema.AnyNoContext,
  responses: Json
): Json => ({
  operationId: operation.id,
  summary: operation.summary,
  requestBody: formBody(b.schema(form), `Posted by the ${operation.page} with the session cookie.`),
  responses: { ...responses, ...pageFormResponses() }
})

/** The authorize endpoint: its query parameters from `AuthorizeQuery`, and the consent form. */
const authorizePath = (b: Build): Json => ({
  get: {
    operationId: "authorize",
    summary: "Authorization endpoint (RFC 6749 §3.1): the code (query) and implicit (fragment) flows",
    parameters: Object.entries(b.query.properties ?? {}).map(([name, s]) => ({
      name,
      in: "query",
      required: b.query.required?.includes(name) ?? false,
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
  post: pageForm(b, { id: "consent", summary: "The consent form", page: "consent page" }, ConsentForm, {
    ...redirect(303, "to redirect_uri with the code, the token or access_denied"),
    400: html("the decision is neither allow nor deny, or the form is malformed")
  })
})

/** The sign-in form. */
const loginPath = (b: Build): Json => ({
  post: pageForm(b, { id: "signIn", summary: "The sign-in form", page: "sign-in page" }, SignInForm, {
    ...redirect(303, "signed in (or switching account): back to the authorize endpoint"),
    400: html("wrong username or password: the sign-in page again"),
    429: html("too many failed sign-ins", retryAfter)
  })
})

/** The consents page and its forms. */
const consentsPagePath = (b: Build): Json => ({
  get: {
    operationId: "consents",
    summary: "The consents page: a signed-in user's authorised applications, or a sign-in form",
    parameters: ["client_type", "ui_locales"].map((name) => ({
      name,
      in: "query",
      required: false,
      schema: b.query.properties?.[name]
    })),
    responses: {
      200: html("the consents page, or its sign-in form when nobody is signed in"),
      503: html("storage is unavailable (temporarily_unavailable)", retryAfter)
    }
  },
  post: pageForm(
    b,
    {
      id: "consentsForm",
      summary: "Sign in, withdraw a consent (revoking that application's tokens for the user) or sign out",
      page: "consents page"
    },
    ConsentsForm,
    {
      ...redirect(303, "back to the consents page"),
      400: html("wrong username or password, or an unknown action"),
      429: html("too many failed sign-ins", retryAfter)
    }
  )
})

/** The bearer errors of a protected resource, by status (RFC 6750 §3.1). */
const bearerResponses = (): Json => {
  const byStatus = new Map<number, Array<string>>([[401, ["invalid_request"]]])
  for (const e of Object.values(bearerErrors))
    byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e.error])
  const challenge = { "www-authenticate": { required: true, schema: { type: "string", pattern: "^Bearer" } } }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
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

/** The example protected resource. */
const mePath = (b: Build): Json => ({
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
        content: { "application/json": { schema: b.schema(Me) } }
      },
      ...bearerResponses()
    }
  }
})

/** This document, and the health probes at the root of the origin. */
const serverOwnPaths = (b: Build, origin: string): Json => ({
  [serverPaths.openapi]: {
    get: {
      operationId: "openapi",
      summary: "This document",
      responses: {
        200: { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } }
      }
    }
  },
  [serverPaths.healthz]: {
    servers: [{ url: origin }],
    get: {
      operationId: "healthz",
      summary: "Liveness",
      responses: jsonOk("the process is up", b.schema(Status), { "cache-control": "no-store" })
    }
  },
  [serverPaths.readyz]: {
    servers: [{ url: origin }],
    get: {
      operationId: "readyz",
      summary: "Readiness: a query on the store succeeds",
      responses: {
        ...jsonOk("ready", b.schema(Status), { "cache-control": "no-store" }),
        503: {
          description: "the store is unavailable",
          content: { "application/json": { schema: b.schema(Status) } }
        }
      }
    }
  }
})

/** Every path of the server, relative to the issuer. */
const paths = (b: Build, origin: string): Json => ({
  [Metadata.paths.token]: tokenPath(b),
  ...tokenFormPaths(b),
  [Metadata.paths.metadata]: metadataPath,
  [Metadata.paths.authorize]: authorizePath(b),
  [Metadata.paths.login]: loginPath(b),
  [consentsPath]: consentsPagePath(b),
  [serverPaths.me]: mePath(b),
  ...serverOwnPaths(b, origin)
})

/** The OpenAPI 3.1 document of the server whose issuer is `options.issuer` (its path prefixes every endpoint but the health probes). */
export const document = (options: { readonly issuer: string }): Json => {
  const issuer = options.issuer.replace(/\/+$/, "")
  const schemas: Record<string, JSONSchema.JsonSchema7> = {}
  const schema = (s: Schema.Schema.AnyNoContext): Json =>
    JSONSchema.fromAST(s.ast, {
      definitions: schemas,
      definitionPath: "#/components/schemas/",
      target: "openApi3.1",
      additionalPropertiesStrategy: "allow"
    }) as unknown as Json
  const query = JSONSchema.fromAST(AuthorizeQuery.ast, {
    definitions: schemas,
    target: "openApi3.1"
  }) as Build["query"]
  return {
    openapi: "3.1.0",
    info: {
      title: "Latchkey",
      version: "1",
      description:
        "An OAuth 2.0 authorization server. Every JSON answer carries the error and error_description of RFC 6749 §5.2 when it fails."
    },
    servers: [{ url: issuer }],
    paths: paths({ schema, query }, new URL(issuer).origin),
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

/** The operations of the admin API: path (under `AdminJson.basePath`) to methods, in the order `AdminApi` answers `Allow` with. */
export const adminOperations = {
  "/applications": ["GET", "POST"],
  "/applications/{app_key}": ["GET", "PATCH", "DELETE"],
  "/applications/{app_key}/secret": ["POST"],
  "/applications/{app_key}/subjects/{open_id}/tokens": ["DELETE"],
  "/applications/{app_key}/consents/{user_id}": ["DELETE"],
  "/users": ["GET", "POST"],
  "/users/{user_id}": ["GET", "PATCH", "DELETE"],
  "/users/{user_id}/consents": ["GET"],
  "/audit": ["GET"],
  "/openapi.json": ["GET"]
} as const

/**
 * The OpenAPI 3.1 document of the admin API (`AdminApi`): every operation needs the admin
 * token (`bearerAuth`). `options.server` is the admin listener's URL, when known.
 */
export const adminDocument = (options: { readonly server?: string } = {}): Json => {
  const schemas: Record<string, JSONSchema.JsonSchema7> = {}
  const schemaWith =
    (additionalPropertiesStrategy: "strict" | "allow") =>
    (s: Schema.Schema.AnyNoContext): Json =>
      JSONSchema.fromAST(s.ast, {
        definitions: schemas,
        definitionPath: "#/components/schemas/",
        target: "openApi3.1",
        additionalPropertiesStrategy
      }) as unknown as Json
  // request bodies refuse unknown fields; responses may gain fields
  const request = schemaWith("strict")
  const response = schemaWith("allow")
  const noStore = headersOf(Http.json(200, null).headers)
  const json = (description: string, body: Json, headers: Json = noStore): Json => ({
    description,
    headers,
    content: { "application/json": { schema: body } }
  })
  const error = (
    description: string,
    codes: ReadonlyArray<string>,
    headers: Json = noStore,
    extra: Json = {}
  ) => json(description, errorBody(codes, extra), headers)
  const location = {
    ...noStore,
    location: { required: true, description: "the new resource", schema: { type: "string" } }
  }
  const body = (s: Schema.Schema.AnyNoContext, description: string): Json => ({
    required: true,
    description: `${description} A JSON object of at most ${Http.maxBodyBytes} bytes, UTF-8, not compressed; an unknown field is 400.`,
    content: { "application/json": { schema: request(s) } }
  })
  const param = (name: string, description: string): Json => ({
    name,
    in: "path",
    required: true,
    description,
    schema: { type: "string" }
  })
  const params: Record<string, Json> = {
    app_key: param("app_key", "the App Key"),
    open_id: param("open_id", "the subject's open_id in that application"),
    user_id: param("user_id", "the user id")
  }
  const list = (s: Schema.Schema.AnyNoContext) => ({ type: "array", items: response(s) })

  type Operation = {
    readonly operationId: string
    readonly summary: string
    readonly ok: Json
    readonly body?: Json
    readonly conflict?: string
    readonly query?: ReadonlyArray<Json>
  }
  const operations: { readonly [P in keyof typeof adminOperations]: Record<string, Operation> } = {
    "/applications": {
      GET: {
        operationId: "listApplications",
        summary: "Every application, oldest first (cli app list --json)",
        ok: { 200: json("the applications", list(AdminJson.ApplicationJson)) }
      },
      POST: {
        operationId: "createApplication",
        summary: "Register an application (cli app create); its App Secret is shown this once",
        body: body(
          AdminJson.CreateApplication,
          "The registration; grant types default to authorization_code, refresh_token and client_credentials."
        ),
        conflict: "an application with this App Key exists already",
        ok: { 201: json("created", response(AdminJson.CreatedApplication), location) }
      }
    },
    "/applications/{app_key}": {
      GET: {
        operationId: "getApplication",
        summary: "One application (cli app show --json)",
        ok: { 200: json("the application", response(AdminJson.ApplicationJson)) }
      },
      PATCH: {
        operationId: "updateApplication",
        summary: "Change a registration (cli app update); tokens issued before keep working",
        body: body(
          AdminJson.UpdateApplication,
          "The fields to change; a null lifetime returns to the server default."
        ),
        ok: { 200: json("the application as it is now", response(AdminJson.ApplicationJson)) }
      },
      DELETE: {
        operationId: "deleteApplication",
        summary: "Delete an application and revoke every token it holds (cli app delete)",
        ok: { 200: json("deleted", response(AdminJson.DeletedApplication)) }
      }
    },
    "/applications/{app_key}/secret": {
      POST: {
        operationId: "rotateSecret",
        summary: "Give the application a new App Secret (cli app rotate-secret), shown this once",
        body: { ...body(AdminJson.RotateSecret, "An empty body rotates without grace."), required: false },
        ok: { 200: json("the new secret", response(AdminJson.RotatedSecret)) }
      }
    },
    "/applications/{app_key}/subjects/{open_id}/tokens": {
      DELETE: {
        operationId: "revokeSubjectTokens",
        summary: "Revoke every token of one subject of the application (cli token revoke)",
        ok: { 200: json("how many tokens were revoked", response(AdminJson.RevokedTokens)) }
      }
    },
    "/applications/{app_key}/consents/{user_id}": {
      DELETE: {
        operationId: "withdrawConsent",
        summary:
          "Withdraw a user's consent, revoking the application's tokens of the user (cli consent revoke)",
        ok: { 200: json("withdrawn", response(AdminJson.WithdrawnConsent)) }
      }
    },
    "/users": {
      GET: {
        operationId: "listUsers",
        summary: "Every user, oldest first (cli user list --json)",
        ok: { 200: json("the users", list(AdminJson.UserJson)) }
      },
      POST: {
        operationId: "createUser",
        summary: "Create a user (cli user create)",
        body: body(AdminJson.CreateUser, "The username and password; the password is never recorded."),
        conflict: "a user with this username exists already",
        ok: { 201: json("created", response(AdminJson.CreatedUser), location) }
      }
    },
    "/users/{user_id}": {
      GET: {
        operationId: "getUser",
        summary: "One user",
        ok: { 200: json("the user", response(AdminJson.UserJson)) }
      },
      PATCH: {
        operationId: "updateUser",
        summary:
          "Disable (revoking every token, ending every sign-in session), enable, or set the password of a user, ending their sign-in sessions unless keep_sessions (cli user disable, enable, set-password)",
        body: body(AdminJson.UpdateUser, "What to change; the password is set first."),
        ok: { 200: json("the user as they are now", response(AdminJson.UserJson)) }
      },
      DELETE: {
        operationId: "deleteUser",
        summary:
          "Delete a user, revoking their tokens, forgetting their consents and ending their sign-in sessions (cli user delete)",
        ok: { 200: json("deleted", response(AdminJson.DeletedUser)) }
      }
    },
    "/users/{user_id}/consents": {
      GET: {
        operationId: "listConsents",
        summary: "Every consent the user has given (cli consent list --json)",
        ok: { 200: json("the consents, by App Key", list(AdminJson.ConsentJson)) }
      }
    },
    "/audit": {
      GET: {
        operationId: "queryAudit",
        summary: "The newest audit events matching every filter given, newest first (cli audit tail)",
        query: [
          { name: "app_key", in: "query", required: false, schema: { type: "string" } },
          {
            name: "type",
            in: "query",
            required: false,
            schema: { type: "string", enum: [...EventType.literals] }
          },
          {
            name: "since",
            in: "query",
            required: false,
            description: "events at or after: ISO 8601 (2026-01-31, 2026-01-31T12:00:00Z) or epoch seconds",
            schema: { type: "string" }
          },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: AdminJson.maxAuditLimit, default: 100 }
          }
        ],
        ok: { 200: json("the events", list(AdminJson.AuditEventJson)) }
      }
    },
    "/openapi.json": {
      GET: {
        operationId: "adminOpenapi",
        summary: "This document",
        ok: { 200: json("OpenAPI 3.1", { type: "object" }) }
      }
    }
  }

  const paths: Json = {}
  for (const [path, methods] of Object.entries(adminOperations) as Array<
    [keyof typeof adminOperations, ReadonlyArray<string>]
  >) {
    const names = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1] as string)
    const item: Json = {}
    for (const method of methods) {
      const op = operations[path][method] as Operation
      item[method.toLowerCase()] = {
        operationId: op.operationId,
        summary: op.summary,
        ...(op.query !== undefined ? { parameters: op.query } : {}),
        ...(op.body !== undefined ? { requestBody: op.body } : {}),
        responses: {
          ...op.ok,
          400: error(
            "a field of the body, or a query parameter, is not acceptable",
            ["invalid_request"],
            noStore,
            {
              field: { type: "string", description: "the field or parameter at fault" }
            }
          ),
          401: error("no admin token, or the wrong one", ["unauthorized"], {
            ...noStore,
            "www-authenticate": { required: true, schema: { type: "string", pattern: "^Bearer" } }
          }),
          ...(names.length > 0 ? { 404: error("no such application, user or consent", ["not_found"]) } : {}),
          405: error("the path does not take this method", ["invalid_request"], {
            ...noStore,
            allow: headerOf("allow", methods.join(", "))
          }),
          ...(op.conflict !== undefined ? { 409: error(op.conflict, ["conflict"]) } : {}),
          ...(op.body !== undefined
            ? {
                413: error(`the body is over ${Http.maxBodyBytes} bytes`, ["invalid_request"]),
                415: error("the body is not application/json, or is compressed", ["invalid_request"])
              }
            : {}),
          500: error("an unexpected failure, logged", ["server_error"]),
          503: error("storage is unavailable", ["temporarily_unavailable"], { ...noStore, ...retryAfter })
        }
      }
    }
    if (names.length > 0) item.parameters = names.map((n) => params[n])
    paths[`${AdminJson.basePath}${path}`] = item
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Latchkey admin API",
      version: "1",
      description:
        "Management of applications, users, tokens, consents and the audit trail, on the admin listener only. Every change is recorded in the audit trail with the actor admin-api; secrets and passwords never are."
    },
    ...(options.server !== undefined ? { servers: [{ url: options.server.replace(/\/+$/, "") }] } : {}),
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "the admin token (LATCHKEY_ADMIN_TOKEN), compared in constant time"
        }
      }
    }
  }
}

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
import { AccountForm, ConsentForm, ConsentsForm, SignInForm } from "../interaction/Forms.js"
import { maxAuthorizeQuery } from "../interaction/Interaction.js"
import * as OAuthError from "../model/OAuthError.js"
import * as Authorize from "../oauth/Authorize.js"
import { TokenResponse } from "../oauth/grants/Issue.js"
import { IntrospectionResponse, TokenForm } from "../oauth/Introspection.js"
import { AuthorizeQuery } from "../oauth/requests/AuthorizeQuery.js"
import * as TokenRequest from "../oauth/requests/TokenRequest.js"
import * as Http from "./Http.js"
import { logoutPath } from "./internal/logoutOpenApi.js"
import {
  errorBody,
  formBody,
  headersOf,
  html,
  type Json,
  jsonOk,
  redirect,
  retryAfter
} from "./internal/openApiJson.js"
import { type Build, ownPagePath, pageForm } from "./internal/openApiPages.js"
import { registrationPath } from "./internal/registrationOpenApi.js"
import * as Paths from "./Paths.js"

/** The OpenAPI document of the admin API, which is served on a listener of its own. */
export { adminDocument } from "../admin/AdminOpenApi.js"

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

/** Every error response of a form endpoint (token, introspection, revocation), as `Http` builds it. */
const formErrorResponses = (): ReadonlyArray<Http.HttpResponse> => [
  ...Object.values(formErrors).map(Http.errorResponse),
  ...Http.refusalStatuses.map((status) =>
    Http.refusalResponse(
      status === 405 ? Http.methodNotAllowed("POST") : { status, description: "", headers: {} }
    )
  )
]

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

const noStore = () => Http.json(200, null).headers

/**
 * Basic, or credentials in the body: an application registered for `client_secret_post` sends
 * `client_id` and `client_secret` there (RFC 6749 §2.3.1), a public one (RFC 6749 §2.1) only `client_id`.
 */
const clientAuthOrBody = [{ clientBasic: [] }, {}]

/** How a confidential application authenticates, for the descriptions of the form endpoints. */
const registeredMethod =
  "A confidential application authenticates with the method it registered: client_secret_basic (the default), its App Key and App Secret only in the Authorization header (with it, a client_secret parameter or a client_id other than the App Key is invalid_request), or client_secret_post, client_id and client_secret in the body and no Authorization header; the other method is invalid_client naming the registered one."

/** The token endpoint: one request body per grant type, from `TokenRequest.requests`. */
const tokenPath = (b: Build): Json => ({
  post: {
    operationId: "token",
    summary: "Token endpoint (RFC 6749 §3.2)",
    security: clientAuthOrBody,
    requestBody: formBody(
      {
        oneOf: Object.values(TokenRequest.requests).map((request) => b.schema(request)),
        discriminator: { propertyName: "grant_type" }
      },
      `The parameters of one grant type. ${registeredMethod} A public application sends no Authorization header and no client_secret, only client_id (its App Key), and uses authorization_code with PKCE S256 and refresh_token.`
    ),
    responses: {
      ...jsonOk("the token response (RFC 6749 §5.1)", b.schema(TokenResponse), noStore()),
      ...formErrorsByStatus()
    }
  }
})

/** Introspection and revocation, which take the same form (`Introspection.TokenForm`). */
const tokenFormPaths = (b: Build): Json => {
  const requestBody = formBody(
    b.schema(TokenForm),
    `The token, never in the query string. ${registeredMethod}`
  )
  return {
    [Paths.oauth.introspect]: {
      post: {
        operationId: "introspect",
        summary:
          "Token introspection (RFC 7662) of the application's own tokens; confidential applications only (a public one is invalid_client)",
        security: clientAuthOrBody,
        requestBody,
        responses: {
          ...jsonOk("the introspection response", b.schema(IntrospectionResponse), noStore()),
          ...formErrorsByStatus()
        }
      }
    },
    [Paths.oauth.revoke]: {
      post: {
        operationId: "revoke",
        summary:
          "Token revocation (RFC 7009); a refresh token revokes its family. A public application sends client_id in the body instead of Basic",
        security: clientAuthOrBody,
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
        `to redirect_uri: code, state and iss in the query (code), or access_token, token_type, expires_in, scope, state and iss in the fragment (token); errors as error, error_description, state and iss, error one of ${Authorize.redirectErrorCodes.join(", ")}`
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

/** The userinfo answer (OpenID Connect Core §5.3.2): `sub` and the claims of the token's scope (`Claims`). */
const UserinfoResponse = Schema.Struct({
  sub: Schema.String,
  preferred_username: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "UserinfoResponse" })

/** The userinfo endpoint: GET, or POST with the token in the header or the body (RFC 6750 §2.2). */
const userinfoPath = (b: Build): Json => {
  const challenge = { "www-authenticate": { required: true, schema: { type: "string", pattern: "^Bearer" } } }
  const refused = (description: string) => ({
    description,
    headers: challenge,
    content: { "application/json": { schema: errorBody(["invalid_request"]) } }
  })
  const operation = (method: string, extra: Json) => ({
    operationId: `userinfo${method}`,
    summary: "The claims about the user an access token with the openid scope was granted by",
    security: [{ bearer: [] }],
    ...extra,
    responses: {
      ...jsonOk("sub and the claims of the token's scope", b.schema(UserinfoResponse), noStore()),
      ...bearerResponses(),
      405: {
        description: "neither GET nor POST",
        headers: headersOf(Http.methodNotAllowed("GET, POST").headers),
        content: { "application/json": { schema: errorBody(["invalid_request"]) } }
      },
      413: refused("the body is too large"),
      415: refused("the body is compressed")
    }
  })
  return {
    get: operation("Get", {}),
    post: operation("Post", {
      requestBody: {
        required: false,
        description: `Empty, or a form carrying the access token as access_token instead of the header (RFC 6750 §2.2). At most ${Http.maxBodyBytes} bytes.`,
        content: {
          "application/x-www-form-urlencoded": {
            schema: { type: "object", properties: { access_token: { type: "string" } } }
          }
        }
      }
    })
  }
}

/** The JWK Set and the OpenID provider configuration (the metadata document again). */
const keyPaths: Json = {
  [Paths.oauth.jwks]: {
    get: {
      operationId: "jwks",
      summary: "The published signing keys (RFC 7517 JWK Set) the ID tokens verify with",
      responses: {
        ...jsonOk(
          "the JWK Set: public keys only",
          { type: "object", required: ["keys"], properties: { keys: { type: "array" } } },
          { "cache-control": `public, max-age=${Http.jwksMaxAge}` }
        ),
        503: {
          description: "storage is unavailable",
          headers: retryAfter,
          content: { "application/json": { schema: errorBody(["temporarily_unavailable"]) } }
        }
      }
    }
  },
  [Paths.oauth.openidConfiguration]: {
    get: {
      ...(metadataPath.get as Json),
      operationId: "openidConfiguration",
      summary: "OpenID provider configuration (OpenID Connect Discovery 1.0 §4): the metadata document"
    }
  }
}

/** This document, and the health probes at the root of the origin. */
const serverOwnPaths = (b: Build, origin: string): Json => ({
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
      responses: jsonOk("the process is up", b.schema(Status), { "cache-control": "no-store" })
    }
  },
  [Paths.readyz]: {
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
  [Paths.oauth.token]: tokenPath(b),
  ...tokenFormPaths(b),
  [Paths.oauth.metadata]: metadataPath,
  [Paths.oauth.userinfo]: userinfoPath(b),
  ...keyPaths,
  [Paths.oauth.authorize]: authorizePath(b),
  [Paths.oauth.login]: loginPath(b),
  [Paths.consents]: ownPagePath(
    b,
    {
      id: "consents",
      name: "consents page",
      shows: "a signed-in user's authorised applications",
      does: "Sign in, withdraw a consent (revoking that application's tokens for the user) or sign out"
    },
    ConsentsForm,
    "wrong username or password, or an unknown action"
  ),
  [Paths.account]: ownPagePath(
    b,
    {
      id: "account",
      name: "account page",
      shows: "a signed-in user's password form and sign-in sessions, and a link to the consents page",
      does: "Sign in, change the password (ending the user's other sessions), end one or every other sign-in session, or sign out"
    },
    AccountForm,
    "wrong username or password, a wrong current password, a new password refused, or an unknown action"
  ),
  [Paths.oauth.logout]: logoutPath(b.schema),
  [Paths.me]: mePath(b),
  ...serverOwnPaths(b, origin)
})

/**
 * The OpenAPI 3.1 document of the server whose issuer is `options.issuer` (its path prefixes every
 * endpoint but the health probes); the client registration endpoint only with `registration`
 * (`Settings.registration`), as the metadata names it only then.
 */
export const document = (options: { readonly issuer: string; readonly registration?: boolean }): Json => {
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
    paths: {
      ...paths({ schema, query }, new URL(issuer).origin),
      ...(options.registration === true ? { [Paths.oauth.register]: registrationPath(schema) } : {})
    },
    components: {
      schemas,
      securitySchemes: {
        clientBasic: {
          type: "http",
          scheme: "basic",
          description:
            "App Key and App Secret (RFC 6749 §2.3.1); the only client authentication of a confidential application"
        },
        bearer: { type: "http", scheme: "bearer", description: "an access token (RFC 6750)" }
      }
    }
  }
}

/**
 * The endpoints of the admin API, declared once: for each, its method and path, the body or query
 * it reads (Schemas), what it answers on success (a Schema and a status) and the refusal it adds
 * to the ones every endpoint has. `AdminApi` routes by this table, answering `Allow` with a path's
 * methods in the table's order, and `AdminOpenApi` documents it.
 */
import { Schema, type SchemaAST } from "effect"
import { EventType } from "../security/AuditEvent.js"
import * as AdminJson from "./AdminJson.js"
import { defaultAuditLimit, maxAuditLimit } from "./internal/audit.js"
import * as ReviewJson from "./ReviewJson.js"

/** A method the admin API answers. */
export type Method = "GET" | "POST" | "PATCH" | "DELETE"

/** What each path parameter is: a path names its parameters `{name}`, one segment each. */
export const pathParameters = {
  app_key: "the App Key",
  open_id: "the subject's open_id in that application",
  scope: "the scope's name in the scope catalogue",
  user: "the user id, or else the username (the id is tried first; POST /users refuses a username that is another user's id)",
  id: "the initial access token's id (rt_ and the SHA-256 of the token, base64url)"
} as const

/** The name of a path parameter. */
export type PathParameter = keyof typeof pathParameters

/** The names of the parameters of `P`, a path like `/applications/{app_key}`. */
export type ParameterNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | ParameterNames<Rest>
  : never

/** The JSON body an endpoint reads: a JSON object decoded with `schema`, unknown fields refused. */
export interface Body<B extends Schema.Schema.AnyNoContext> {
  readonly schema: B
  readonly description: string
  /** False when an empty body is accepted (read as `{}`); true by default. */
  readonly required?: boolean
}

/** The query parameters an endpoint takes: a Struct of optional fields (their values are text). */
export interface Query {
  readonly fields: Schema.Struct.Fields
  readonly ast: SchemaAST.AST
}

type AnySchema = Schema.Schema.AnyNoContext

/**
 * One endpoint. Besides `conflict` (409), its refusals follow from the rest: 404 when the path
 * has a parameter, 413 and 415 when it reads a body; 400, 401, 405, 500 and 503 for every one.
 */
export interface Endpoint<
  P extends string = string,
  B extends AnySchema = AnySchema,
  Q extends Query = Query,
  R extends AnySchema = AnySchema
> {
  readonly method: Method
  /** Under `AdminJson.basePath`. */
  readonly path: P
  readonly summary: string
  readonly body?: Body<B>
  /** The query parameters it takes; any other is 400. */
  readonly query?: Q
  readonly status: 200 | 201
  /** The success body. */
  readonly response: R
  /** What the success body is. */
  readonly description: string
  /** With 201: where the new resource is, under `AdminJson.basePath`. */
  readonly location?: (created: Schema.Schema.Type<R>) => string
  /** When a 409 can answer: why. */
  readonly conflict?: string
}

/** An endpoint whose path names only known parameters (`pathParameters`), its types inferred (no body: `Schema.Undefined`). */
const endpoint = <
  P extends string,
  R extends AnySchema,
  B extends AnySchema = typeof Schema.Undefined,
  Q extends Query = Query
>(
  e: Endpoint<P, B, Q, R> & ([ParameterNames<P>] extends [PathParameter] ? unknown : never)
): Endpoint<P, B, Q, R> => e

const seg = encodeURIComponent

const optional = <S extends Schema.Schema.All>(s: S) => Schema.optionalWith(s, { exact: true })

/** The query of `GET /audit`: every filter given must match. */
export const AuditQuery = Schema.Struct({
  app_key: optional(Schema.String),
  type: optional(EventType),
  since: optional(
    Schema.String.annotations({
      description: "events at or after: ISO 8601 (2026-01-31, 2026-01-31T12:00:00Z) or epoch seconds"
    })
  ),
  limit: optional(
    Schema.Int.pipe(Schema.between(1, maxAuditLimit)).annotations({
      jsonSchema: { type: "integer", minimum: 1, maximum: maxAuditLimit, default: defaultAuditLimit }
    })
  )
})

/** Any JSON object (the OpenAPI document). */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { type: "object" }
})

/** Every endpoint by its OpenAPI `operationId`, grouped by path, each path's methods in `Allow` order. */
export const endpoints = {
  listApplications: endpoint({
    method: "GET",
    path: "/applications",
    summary: "Every application, oldest first (cli app list --json)",
    status: 200,
    response: Schema.Array(AdminJson.ApplicationJson),
    description: "the applications"
  }),
  createApplication: endpoint({
    method: "POST",
    path: "/applications",
    summary: "Register an application (cli app create); its App Secret (none when public) is shown this once",
    body: {
      schema: AdminJson.CreateApplication,
      description:
        "The registration; grant types default to authorization_code, refresh_token and client_credentials (for a public application: authorization_code and refresh_token)."
    },
    status: 201,
    response: AdminJson.CreatedApplication,
    description: "created",
    location: (created) => `/applications/${seg(created.app_key)}`,
    conflict: "an application with this App Key exists already"
  }),
  getApplication: endpoint({
    method: "GET",
    path: "/applications/{app_key}",
    summary: "One application (cli app show --json)",
    status: 200,
    response: AdminJson.ApplicationJson,
    description: "the application"
  }),
  updateApplication: endpoint({
    method: "PATCH",
    path: "/applications/{app_key}",
    summary: "Change a registration (cli app update); tokens issued before keep working",
    body: {
      schema: AdminJson.UpdateApplication,
      description:
        "The fields to change; a null lifetime returns to the server default. public false gives a public application a new App Secret, answered once."
    },
    status: 200,
    response: AdminJson.UpdatedApplication,
    description: "the application as it is now"
  }),
  deleteApplication: endpoint({
    method: "DELETE",
    path: "/applications/{app_key}",
    summary: "Delete an application and revoke every token it holds (cli app delete)",
    status: 200,
    response: AdminJson.DeletedApplication,
    description: "deleted"
  }),
  rotateSecret: endpoint({
    method: "POST",
    path: "/applications/{app_key}/secret",
    summary: "Give the application a new App Secret (cli app rotate-secret), shown this once",
    body: {
      schema: AdminJson.RotateSecret,
      description: "An empty body rotates without grace.",
      required: false
    },
    status: 200,
    response: AdminJson.RotatedSecret,
    description: "the new secret"
  }),
  approveApplication: endpoint({
    method: "POST",
    path: "/applications/{app_key}/approve",
    summary: "Approve a pending application: it becomes active (cli app approve)",
    status: 200,
    response: AdminJson.ApplicationJson,
    description: "the application as it is now",
    conflict: "the application is not pending"
  }),
  rejectApplication: endpoint({
    method: "POST",
    path: "/applications/{app_key}/reject",
    summary: "Reject a pending application with a reason (cli app reject --reason)",
    body: { schema: ReviewJson.Reason, description: "Why, shown to the application's owners." },
    status: 200,
    response: AdminJson.ApplicationJson,
    description: "the application as it is now",
    conflict: "the application is not pending"
  }),
  suspendApplication: endpoint({
    method: "POST",
    path: "/applications/{app_key}/suspend",
    summary:
      "Suspend an active application with a reason, revoking every token and code it holds in the same write (cli app suspend --reason)",
    body: { schema: ReviewJson.Reason, description: "Why, shown to the application's owners." },
    status: 200,
    response: AdminJson.ApplicationJson,
    description: "the application as it is now",
    conflict: "the application is not active"
  }),
  reinstateApplication: endpoint({
    method: "POST",
    path: "/applications/{app_key}/reinstate",
    summary:
      "Reinstate a suspended application: it becomes active; nothing revoked comes back (cli app reinstate)",
    status: 200,
    response: AdminJson.ApplicationJson,
    description: "the application as it is now",
    conflict: "the application is not suspended"
  }),
  listOwners: endpoint({
    method: "GET",
    path: "/applications/{app_key}/owners",
    summary: "The users who own the application, in the order they were added (cli app owner list)",
    status: 200,
    response: ReviewJson.OwnersJson,
    description: "the owners' user ids; none for an application an operator registered"
  }),
  addOwner: endpoint({
    method: "POST",
    path: "/applications/{app_key}/owners",
    summary: "Make a user a co-owner of the application (cli app owner add)",
    body: { schema: ReviewJson.NewOwner, description: "The user to add." },
    status: 200,
    response: ReviewJson.OwnerChange,
    description: "the user, an owner now"
  }),
  removeOwner: endpoint({
    method: "DELETE",
    path: "/applications/{app_key}/owners/{user}",
    summary: "Remove a user from the application's owners (cli app owner remove)",
    status: 200,
    response: ReviewJson.OwnerChange,
    description: "the user, no longer an owner"
  }),
  revokeSubjectTokens: endpoint({
    method: "DELETE",
    path: "/applications/{app_key}/subjects/{open_id}/tokens",
    summary: "Revoke every token of one subject of the application (cli token revoke)",
    status: 200,
    response: AdminJson.RevokedTokens,
    description: "how many tokens were revoked"
  }),
  withdrawConsent: endpoint({
    method: "DELETE",
    path: "/applications/{app_key}/consents/{user}",
    summary: "Withdraw a user's consent, revoking the application's tokens of the user (cli consent revoke)",
    status: 200,
    response: AdminJson.WithdrawnConsent,
    description: "withdrawn"
  }),
  listUsers: endpoint({
    method: "GET",
    path: "/users",
    summary: "Every user, oldest first (cli user list --json)",
    status: 200,
    response: Schema.Array(AdminJson.UserJson),
    description: "the users"
  }),
  createUser: endpoint({
    method: "POST",
    path: "/users",
    summary: "Create a user (cli user create)",
    body: {
      schema: AdminJson.CreateUser,
      description: "The username and password; the password is never recorded."
    },
    status: 201,
    response: AdminJson.CreatedUser,
    description: "created",
    location: (created) => `/users/${seg(created.user_id)}`,
    conflict: "a user with this username exists already"
  }),
  getUser: endpoint({
    method: "GET",
    path: "/users/{user}",
    summary: "One user",
    status: 200,
    response: AdminJson.UserJson,
    description: "the user"
  }),
  updateUser: endpoint({
    method: "PATCH",
    path: "/users/{user}",
    summary:
      "Disable (revoking every token, ending every sign-in session), enable, or set the password of a user, ending their sign-in sessions unless keep_sessions (cli user disable, enable, set-password)",
    body: { schema: AdminJson.UpdateUser, description: "What to change; the password is set first." },
    status: 200,
    response: AdminJson.UserJson,
    description: "the user as they are now"
  }),
  deleteUser: endpoint({
    method: "DELETE",
    path: "/users/{user}",
    summary:
      "Delete a user, revoking their tokens, forgetting their consents and ending their sign-in sessions (cli user delete)",
    status: 200,
    response: AdminJson.DeletedUser,
    description: "deleted"
  }),
  resetFactors: endpoint({
    method: "DELETE",
    path: "/users/{user}/mfa",
    summary:
      "Reset a user's second factor: their authenticator app and every recovery code are removed, audited as mfa_reset (cli user mfa-reset)",
    status: 200,
    response: AdminJson.ResetFactors,
    description: "reset"
  }),
  listConsents: endpoint({
    method: "GET",
    path: "/users/{user}/consents",
    summary: "Every consent the user has given (cli consent list --json)",
    status: 200,
    response: Schema.Array(AdminJson.ConsentJson),
    description: "the consents, by App Key, with the application's name"
  }),
  queryAudit: endpoint({
    method: "GET",
    path: "/audit",
    summary:
      "The newest audit events matching every filter given, oldest first (the newest last), as cli audit tail prints them; to follow the trail, ask again with since at the last event's time",
    query: AuditQuery,
    status: 200,
    response: Schema.Array(AdminJson.AuditEventJson),
    description: "the events, with the application's name and the username beside their ids"
  }),
  listKeys: endpoint({
    method: "GET",
    path: "/keys",
    summary:
      "Every signing key, newest first, never a private part (cli keys list --json); the first call creates the first key",
    status: 200,
    response: Schema.Array(AdminJson.SigningKeyJson),
    description: "the keys"
  }),
  rotateKey: endpoint({
    method: "POST",
    path: "/keys/rotate",
    summary:
      "Make a new signing key the one new tokens are signed with (cli keys rotate); the replaced key stays published while tokens it signed live",
    body: {
      schema: AdminJson.RotateKey,
      description: "An empty body uses the configured signing algorithm.",
      required: false
    },
    status: 200,
    response: AdminJson.SigningKeyJson,
    description: "the new signing key"
  }),
  listScopes: endpoint({
    method: "GET",
    path: "/scopes",
    summary: "The scope catalogue, by name (cli scope list --json)",
    status: 200,
    response: Schema.Array(AdminJson.ScopeJson),
    description: "the scopes"
  }),
  createScope: endpoint({
    method: "POST",
    path: "/scopes",
    summary:
      "Add a scope to the catalogue (cli scope create); once the catalogue has scopes, an application's scopes must be in it",
    body: {
      schema: AdminJson.CreateScope,
      description: "The scope, what it allows by language, and its flags."
    },
    status: 201,
    response: AdminJson.ScopeJson,
    description: "created",
    location: (created) => `/scopes/${seg(created.name)}`,
    conflict: "the catalogue has a scope of this name already"
  }),
  getScope: endpoint({
    method: "GET",
    path: "/scopes/{scope}",
    summary: "One scope of the catalogue",
    status: 200,
    response: AdminJson.ScopeJson,
    description: "the scope"
  }),
  updateScope: endpoint({
    method: "PATCH",
    path: "/scopes/{scope}",
    summary: "Change a scope of the catalogue (cli scope update)",
    body: {
      schema: AdminJson.UpdateScope,
      description: "The fields to change; descriptions replaces them all."
    },
    status: 200,
    response: AdminJson.ScopeJson,
    description: "the scope as it is now"
  }),
  deleteScope: endpoint({
    method: "DELETE",
    path: "/scopes/{scope}",
    summary: "Remove a scope from the catalogue (cli scope delete); applications that registered it keep it",
    status: 200,
    response: AdminJson.DeletedScope,
    description: "deleted"
  }),
  listRegistrationTokens: endpoint({
    method: "GET",
    path: "/registration-tokens",
    summary:
      "The initial access tokens of dynamic client registration with a use left and unexpired, the latest expiry first (cli registration-token list --json); never a token",
    status: 200,
    response: Schema.Array(AdminJson.RegistrationTokenJson),
    description: "the tokens"
  }),
  createRegistrationToken: endpoint({
    method: "POST",
    path: "/registration-tokens",
    summary:
      "Issue an initial access token with which clients register themselves (RFC 7591) while LATCHKEY_REGISTRATION is on (cli registration-token create); shown this once",
    body: { schema: AdminJson.CreateRegistrationToken, description: "How many registrations, for how long." },
    status: 201,
    response: AdminJson.CreatedRegistrationToken,
    description: "issued",
    location: (t) => `/registration-tokens/${seg(t.id)}`
  }),
  revokeRegistrationToken: endpoint({
    method: "DELETE",
    path: "/registration-tokens/{id}",
    summary:
      "Revoke an initial access token: it authorises no further registration; clients it registered stay (cli registration-token revoke)",
    status: 200,
    response: Schema.Struct({ id: Schema.String, revoked: Schema.Literal(true) }),
    description: "revoked"
  }),
  adminOpenapi: endpoint({
    method: "GET",
    path: "/openapi.json",
    summary: "This document",
    status: 200,
    response: JsonObject,
    description: "OpenAPI 3.1"
  })
}

/** The name of an endpoint: its OpenAPI `operationId`. */
export type OperationId = keyof typeof endpoints

/** A path of the table and its endpoints, in the table's order. */
export interface PathItem {
  readonly path: string
  readonly endpoints: ReadonlyArray<readonly [OperationId, Endpoint]>
}

/** The table by path, paths and each path's methods in the table's order. */
export const byPath = (): ReadonlyArray<PathItem> => {
  const items = new Map<string, Array<readonly [OperationId, Endpoint]>>()
  for (const [id, e] of Object.entries(endpoints) as Array<[OperationId, Endpoint]>) {
    items.set(e.path, [...(items.get(e.path) ?? []), [id, e]])
  }
  return [...items].map(([path, endpoints]) => ({ path, endpoints }))
}

/** The parameter names of `path`, in order. */
export const parameterNames = (path: string): ReadonlyArray<PathParameter> =>
  [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1] as PathParameter)

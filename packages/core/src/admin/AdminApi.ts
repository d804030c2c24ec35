/**
 * The admin API: JSON under `/admin/v1` for what the management CLI does, as one route from a
 * plain request value to a response, for a binding to serve on a listener of its own (never on
 * the public port). Every request carries `Authorization: Bearer <token>`, compared in constant
 * time; every change goes through `Admin` and is recorded in the audit trail with the actor
 * `admin-api`. Bodies are `application/json` objects of at most `Http.maxBodyBytes`, nested at
 * most `Http.maxJsonDepth` levels, decoded with the Schemas of `AdminJson`, unknown fields refused.
 * Errors: 400 naming the field, 404, 405 with `Allow`, 409, 413, 415, 503 with `Retry-After`; a
 * defect is 500 and logged. The endpoints are the table of `AdminEndpoints`, which the OpenAPI
 * document (`OpenApi.adminDocument`, served at `Paths.admin` + `/openapi.json`) describes too.
 */
import { Effect, type Schema } from "effect"
import * as Http from "../http/Http.js"
import type * as Review from "../model/Review.js"
import * as Accounts from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import { timingSafeEqual } from "../services/Digest.js"
import { span } from "../services/internal/span.js"
import { nowSeconds } from "../services/internal/time.js"
import type { AuditStore } from "../storage/AuditStore.js"
import type { KeyStore } from "../storage/KeyStore.js"
import type { StorageError } from "../storage/StorageError.js"
import * as Admin from "./Admin.js"
import * as AdminEndpoints from "./AdminEndpoints.js"
import * as AdminJson from "./AdminJson.js"
import { adminDocument } from "./AdminOpenApi.js"
import { badField, type Refused, readBody, readQuery } from "./internal/request.js"
import * as ReviewJson from "./ReviewJson.js"

/** The path every admin endpoint is under. */
export const basePath: string = AdminJson.basePath

/** Every service the admin API needs. */
export type Requirements = Http.Requirements | Audit.AuditLog | AuditStore | KeyStore

/** What the route needs to know. */
export interface Options {
  /** The bearer token every request must carry. */
  readonly token: string
}

/** The actor recorded with every change made through the admin API. */
export const actor = "admin-api"

const bearerPrefix = /^Bearer +/i

/** Whether `req` carries `Authorization: Bearer <token>`, compared in constant time. */
export const authorized = (req: Http.HttpRequest, token: string): boolean => {
  const value = Http.header(req, "authorization")
  if (typeof value !== "string" || !bearerPrefix.test(value) || token.length === 0) return false
  return timingSafeEqual(value.replace(bearerPrefix, ""), token)
}

/** 401 with the challenge of RFC 6750 §3. */
export const unauthorized: Http.HttpResponse = Http.json(
  401,
  { error: "unauthorized", error_description: "this endpoint needs Authorization: Bearer <admin token>" },
  { "www-authenticate": 'Bearer realm="latchkey-admin"' }
)

const notFound: Http.HttpResponse = Http.json(404, {
  error: "not_found",
  error_description: "no such admin endpoint"
})

/** Every failure an operation can end with. */
type Failure =
  | Refused
  | Admin.InvalidField
  | Admin.NotFound
  | Review.IllegalTransition
  | Review.NotEditable
  | { readonly _tag: "AppKeyTaken"; readonly appKey: string }
  | { readonly _tag: "UsernameTaken"; readonly username: string }
  | { readonly _tag: "ScopeTaken"; readonly name: string }
  | StorageError

const failureResponse = (e: Http.Settled<Failure>): Http.HttpResponse => {
  switch (e._tag) {
    case "Refused":
      return e.response
    case "InvalidField":
      return Http.json(400, { error: e.error, error_description: e.description, field: e.field })
    case "NotFound":
      return Http.json(404, { error: e.error, error_description: e.description })
    case "IllegalTransition":
    case "NotEditable":
      return Http.json(409, { error: e.error, error_description: e.description })
    case "AppKeyTaken":
      return Http.json(409, {
        error: "conflict",
        error_description: `an application with App Key ${JSON.stringify(e.appKey)} exists already`
      })
    case "UsernameTaken":
      return Http.json(409, {
        error: "conflict",
        error_description: `a user named ${JSON.stringify(e.username)} exists already`
      })
    case "ScopeTaken":
      return Http.json(409, {
        error: "conflict",
        error_description: `the scope catalogue has a scope ${JSON.stringify(e.name)} already`
      })
    case "TemporarilyUnavailable":
    case "ServerError":
      return Http.errorResponse(e)
  }
}

/** What a handler is given: the request, its path parameters, its query and its decoded body. */
interface Input<E extends AdminEndpoints.Endpoint> {
  readonly req: Http.HttpRequest
  readonly params: { readonly [K in AdminEndpoints.ParameterNames<E["path"]>]: string }
  readonly query: { readonly [K in keyof NonNullable<E["query"]>["fields"]]?: string }
  readonly body: NonNullable<E["body"]>["schema"]["Type"]
}

/** What an endpoint does once its request is read: the value of its success body. */
type Handler<E extends AdminEndpoints.Endpoint> = (
  input: Input<E>
) => Effect.Effect<Schema.Schema.Type<E["response"]>, Failure, Requirements>

type Operation = Effect.Effect<Http.HttpResponse, Failure, Requirements>

const applicationJson = (app: Parameters<typeof AdminJson.application>[0]) =>
  Effect.map(nowSeconds, (now) => AdminJson.application(app, now))

/** The optional fields of an application body, as `Admin` names them. */
const applicationFields = (body: typeof AdminJson.UpdateApplication.Type): Admin.ApplicationPatch => ({
  ...(body.name !== undefined ? { name: body.name } : {}),
  ...(body.redirect_uris !== undefined ? { redirectUris: body.redirect_uris } : {}),
  ...(body.scopes !== undefined ? { scope: body.scopes } : {}),
  ...(body.grant_types !== undefined ? { grantTypes: body.grant_types } : {}),
  ...(body.require_pkce !== undefined ? { requirePkce: body.require_pkce } : {}),
  ...(body.require_mfa !== undefined ? { requireMfa: body.require_mfa } : {}),
  ...(body.access_token_ttl !== undefined ? { accessTokenTtl: body.access_token_ttl } : {}),
  ...(body.refresh_token_ttl !== undefined ? { refreshTokenTtl: body.refresh_token_ttl } : {}),
  ...(body.public !== undefined ? { public: body.public } : {}),
  ...(body.access_token_format !== undefined ? { accessTokenFormat: body.access_token_format } : {}),
  ...(body.access_token_audience !== undefined ? { accessTokenAudience: body.access_token_audience } : {}),
  ...(body.web_origins !== undefined ? { webOrigins: body.web_origins } : {}),
  ...(body.post_logout_redirect_uris !== undefined
    ? { postLogoutRedirectUris: body.post_logout_redirect_uris }
    : {}),
  ...(body.token_endpoint_auth_method !== undefined
    ? { tokenEndpointAuthMethod: body.token_endpoint_auth_method }
    : {}),
  ...(body.scope_delimiter !== undefined ? { scopeDelimiter: body.scope_delimiter } : {}),
  ...(body.backchannel_logout_uri !== undefined ? { backchannelLogoutUri: body.backchannel_logout_uri } : {}),
  ...(body.backchannel_logout_session_required !== undefined
    ? { backchannelLogoutSessionRequired: body.backchannel_logout_session_required }
    : {})
})

/** The flags of a scope body, as `Admin` names them. */
const scopeFlags = (body: typeof AdminJson.UpdateScope.Type): Admin.ScopePatch => ({
  ...(body.developer_requestable !== undefined ? { developerRequestable: body.developer_requestable } : {}),
  ...(body.needs_review !== undefined ? { needsReview: body.needs_review } : {})
})

/** `PATCH /users/{user}`: the password first (checked before anything changes), then disabled. */
const updateUser: Handler<typeof AdminEndpoints.endpoints.updateUser> = ({ params, body }) =>
  Effect.gen(function* () {
    // Checked before anything changes, so a refused password changes nothing
    const problem = body.password === undefined ? null : Accounts.passwordProblem(body.password)
    if (problem !== null) return yield* Effect.fail(badField("password", problem))
    if (body.keep_sessions !== undefined && body.password === undefined) {
      return yield* Effect.fail(badField("keep_sessions", "keep_sessions is only allowed with password"))
    }
    let user = yield* Admin.findUser(params.user)
    if (body.password !== undefined) {
      const keepSessions = body.keep_sessions === true
      user = yield* Admin.setPassword(user, body.password, { keepSessions })
    }
    if (body.disabled === true) user = yield* Admin.disableUser(user)
    if (body.disabled === false) user = yield* Admin.enableUser(user)
    return AdminJson.user(user)
  })

/** `GET /audit`: the limit checked first, then since, then the rest by `Admin.queryAudit`. */
const queryAudit: Handler<typeof AdminEndpoints.endpoints.queryAudit> = ({ query }) =>
  Effect.gen(function* () {
    const limit = yield* Admin.auditLimit(
      query.limit === undefined ? undefined : /^\d+$/.test(query.limit) ? Number(query.limit) : Number.NaN
    )
    const since = query.since === undefined ? undefined : Admin.parseSince(query.since)
    if (since === null) {
      return yield* Effect.fail(
        badField("since", "since must be ISO 8601 (2026-01-31 or 2026-01-31T12:00:00Z) or epoch seconds")
      )
    }
    return yield* Admin.auditEventsJson({ limit, appKey: query.app_key, type: query.type, since })
  })

/** What each endpoint of the table does. */
const handlers: {
  readonly [K in AdminEndpoints.OperationId]: Handler<(typeof AdminEndpoints.endpoints)[K]>
} = {
  listApplications: () =>
    Effect.flatMap(Admin.listApplications, (apps) =>
      Effect.map(nowSeconds, (now) => apps.map((a) => AdminJson.application(a, now)))
    ),
  createApplication: ({ body }) =>
    Effect.map(
      Admin.createApplication({
        ...applicationFields(body),
        name: body.name,
        redirectUris: body.redirect_uris
      }),
      ({ app, appSecret }) => AdminJson.createdApplication(app, appSecret)
    ),
  getApplication: ({ params }) => Effect.flatMap(Admin.findApplication(params.app_key), applicationJson),
  updateApplication: ({ params, body }) =>
    Effect.flatMap(Admin.updateApplication(params.app_key, applicationFields(body)), ({ app, appSecret }) =>
      Effect.map(nowSeconds, (now) => AdminJson.updatedApplication(app, appSecret, now))
    ),
  deleteApplication: ({ params }) =>
    Effect.as(Admin.deleteApplication(params.app_key), { app_key: params.app_key, deleted: true as const }),
  rotateSecret: ({ params, body }) =>
    Effect.map(Admin.rotateSecret(params.app_key, body.grace_seconds ?? 0), (r) =>
      AdminJson.rotatedSecret(params.app_key, r.appSecret, r.previousSecretExpiresAt)
    ),
  approveApplication: ({ params }) =>
    Effect.flatMap(Admin.reviewApplication(params.app_key, "approve"), applicationJson),
  rejectApplication: ({ params, body }) =>
    Effect.flatMap(Admin.reviewApplication(params.app_key, "reject", body.reason), applicationJson),
  suspendApplication: ({ params, body }) =>
    Effect.flatMap(Admin.reviewApplication(params.app_key, "suspend", body.reason), applicationJson),
  reinstateApplication: ({ params }) =>
    Effect.flatMap(Admin.reviewApplication(params.app_key, "reinstate"), applicationJson),
  listOwners: ({ params }) =>
    Effect.map(Admin.listOwners(params.app_key), (owners) => ({
      app_key: params.app_key,
      owners: [...owners]
    })),
  addOwner: ({ params, body }) =>
    Effect.map(Admin.addOwner(params.app_key, body.user), ({ user, added }) =>
      ReviewJson.ownerChange(params.app_key, user, true, added)
    ),
  removeOwner: ({ params }) =>
    Effect.map(Admin.removeOwner(params.app_key, params.user), (user) =>
      ReviewJson.ownerChange(params.app_key, user, false, true)
    ),
  revokeSubjectTokens: ({ params }) =>
    Effect.flatMap(Admin.revokeSubjectTokens(params.app_key, params.open_id), (revoked) =>
      Admin.revokedTokensJson(params.app_key, params.open_id, revoked)
    ),
  withdrawConsent: ({ params }) =>
    Effect.flatMap(Admin.findUser(params.user), (user) =>
      Effect.as(Admin.withdrawConsent(user, params.app_key), AdminJson.withdrawnConsent(user, params.app_key))
    ),
  listRegistrationTokens: () =>
    Effect.map(Admin.listInitialAccessTokens, (tokens) => tokens.map(AdminJson.registrationToken)),
  createRegistrationToken: ({ body }) =>
    Effect.map(Admin.createInitialAccessToken({ uses: body.uses, expiresIn: body.expires_in }), (t) => ({
      ...AdminJson.registrationToken(t.record),
      token: t.token
    })),
  revokeRegistrationToken: ({ params }) =>
    Effect.as(Admin.revokeInitialAccessToken(params.id), { id: params.id, revoked: true as const }),
  listKeys: () => Effect.map(Admin.listSigningKeys, (keys) => keys.map(AdminJson.signingKey)),
  rotateKey: ({ body }) => Effect.map(Admin.rotateSigningKey(body.algorithm), AdminJson.signingKey),
  listUsers: () => Effect.map(Admin.listUsers, (users) => users.map(AdminJson.user)),
  createUser: ({ body }) =>
    Effect.map(Admin.createUser(body.username, body.password), (user) => ({
      user_id: user.userId,
      username: user.username
    })),
  getUser: ({ params }) => Effect.map(Admin.findUser(params.user), AdminJson.user),
  updateUser,
  deleteUser: ({ params }) =>
    Effect.flatMap(Admin.findUser(params.user), (user) =>
      Effect.as(Admin.deleteUser(user), {
        user_id: user.userId,
        username: user.username,
        deleted: true as const
      })
    ),
  resetFactors: ({ params }) =>
    Effect.map(Admin.resetFactors(params.user), ({ user, removed }) => ({
      user_id: user.userId,
      username: user.username,
      removed
    })),
  listConsents: ({ params }) =>
    Effect.flatMap(Admin.findUser(params.user), (user) =>
      Effect.flatMap(Admin.listConsents(user), ({ consents }) => Admin.consentsJson(consents))
    ),
  queryAudit,
  listScopes: () => Effect.map(Admin.listScopes, (scopes) => scopes.map(AdminJson.scope)),
  createScope: ({ body }) =>
    Effect.map(
      Admin.createScope({
        name: body.name,
        descriptions: body.descriptions,
        ...scopeFlags(body)
      }),
      AdminJson.scope
    ),
  getScope: ({ params }) => Effect.map(Admin.findScope(params.scope), AdminJson.scope),
  updateScope: ({ params, body }) =>
    Effect.map(
      Admin.updateScope(params.scope, {
        ...(body.descriptions !== undefined ? { descriptions: body.descriptions } : {}),
        ...scopeFlags(body)
      }),
      AdminJson.scope
    ),
  deleteScope: ({ params }) =>
    Effect.as(Admin.deleteScope(params.scope), { name: params.scope, deleted: true as const }),
  adminOpenapi: () => Effect.sync(() => adminDocument())
}

/** A path of the table with its segments (`*` for a parameter) and the names of its parameters. */
interface Route extends AdminEndpoints.PathItem {
  readonly pattern: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
}

const routes: ReadonlyArray<Route> = AdminEndpoints.byPath().map((item) => ({
  ...item,
  pattern: item.path
    .slice(1)
    .split("/")
    .map((s) => (s.startsWith("{") ? "*" : s)),
  names: AdminEndpoints.parameterNames(item.path)
}))

const matches = (pattern: ReadonlyArray<string>, segments: ReadonlyArray<string>): boolean =>
  pattern.length === segments.length && pattern.every((p, i) => p === "*" || p === segments[i])

/** The path's segments after `basePath`, percent-decoded; null when it is not under it or not decodable. */
const segmentsOf = (path: string): ReadonlyArray<string> | null => {
  if (!path.startsWith(`${basePath}/`)) return null
  const raw = path.slice(basePath.length + 1).split("/")
  try {
    const decoded = raw.map(decodeURIComponent)
    return decoded.some((s) => s === "") ? null : decoded
  } catch {
    return null
  }
}

/** Read the request as endpoint `id` takes it, run its handler and answer its success status and body. */
const serve = (
  id: AdminEndpoints.OperationId,
  req: Http.HttpRequest,
  params: Readonly<Record<string, string>>
): Operation =>
  Effect.gen(function* () {
    const e: AdminEndpoints.Endpoint = AdminEndpoints.endpoints[id]
    const handler = handlers[id] as unknown as (
      input: Input<AdminEndpoints.Endpoint>
    ) => Effect.Effect<unknown, Failure, Requirements>
    const query = yield* readQuery(req, e.query === undefined ? [] : Object.keys(e.query.fields))
    const body: unknown = e.body === undefined ? undefined : yield* readBody(req, e.body.schema)
    const value = yield* handler({ req, params, query, body })
    const location = e.location === undefined ? {} : { location: `${basePath}${e.location(value)}` }
    return Http.json(e.status, value, location)
  })

/** Turn every failure into its response: a defect is 500, logged, its cause never answered. */
const respond = (program: Operation): Effect.Effect<Http.HttpResponse, never, Requirements> =>
  Http.settle(program, "unexpected failure in the admin API").pipe(
    Effect.catchAll((e) => Effect.succeed(failureResponse(e)))
  )

/** Answer an admin request; never fails. */
export const route = (
  req: Http.HttpRequest,
  options: Options
): Effect.Effect<Http.HttpResponse, never, Requirements> => {
  if (!authorized(req, options.token)) return Effect.succeed(unauthorized)
  const segments = segmentsOf(req.path)
  const found = segments === null ? undefined : routes.find((r) => matches(r.pattern, segments))
  if (segments === null || found === undefined) return Effect.succeed(notFound)
  const endpoint = found.endpoints.find(([, e]) => e.method === req.method)
  if (endpoint === undefined) {
    const allow = found.endpoints.map(([, e]) => e.method).join(", ")
    return Effect.succeed(Http.refusalResponse(Http.methodNotAllowed(allow)))
  }
  const values = segments.filter((_, i) => found.pattern[i] === "*")
  const params = Object.fromEntries(found.names.map((name, i) => [name, values[i] ?? ""]))
  return respond(Effect.suspend(() => serve(endpoint[0], req, params))).pipe(
    span("AdminApi.route"),
    Effect.provideService(Audit.RequestInfo, {
      requestId: req.requestId ?? null,
      address: req.remoteAddress ?? null,
      actor
    })
  )
}

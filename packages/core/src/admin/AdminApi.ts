/**
 * The admin API: JSON under `/admin/v1` for what the management CLI does, as one route from a
 * plain request value to a response, for a binding to serve on a listener of its own (never on
 * the public port). Every request carries `Authorization: Bearer <token>`, compared in constant
 * time; every change goes through `Admin` and is recorded in the audit trail with the actor
 * `admin-api`. Bodies are `application/json` objects of at most `Http.maxBodyBytes`, nested at
 * most `Http.maxJsonDepth` levels, decoded with the Schemas of `AdminJson`, unknown fields refused. Errors: 400 naming the field, 404,
 * 405 with `Allow`, 409, 413, 415, 503 with `Retry-After`; a defect is 500 and logged. The
 * OpenAPI document of these endpoints is `OpenApi.adminDocument`, served at `openapiPath`.
 */
import { Effect, Either, type ParseResult, Schema } from "effect"
import * as Http from "../http/Http.js"
import * as OpenApi from "../http/OpenApi.js"
import { GrantType } from "../model/Application.js"
import * as Form from "../oauth/requests/Form.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Accounts from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import { timingSafeEqual } from "../services/Digest.js"
import { nowSeconds } from "../services/internal/time.js"
import type { AuditStore } from "../storage/AuditStore.js"
import type { StorageError } from "../storage/StorageError.js"
import * as Admin from "./Admin.js"
import * as AdminJson from "./AdminJson.js"

/** The path every admin endpoint is under. */
export const basePath: string = AdminJson.basePath

/** Where the route answers the OpenAPI document of the admin API (with the same bearer token). */
export const openapiPath = `${basePath}/openapi.json`

/** Most audit events one `GET /admin/v1/audit` returns. */
export const maxAuditLimit: number = AdminJson.maxAuditLimit

/** Every service the admin API needs. */
export type Requirements = Http.Requirements | Audit.AuditLog | AuditStore

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

/** Why a request is refused before or instead of its operation; the route turns it into a response. */
class Refused {
  readonly _tag = "Refused"
  constructor(readonly response: Http.HttpResponse) {}
}

const badField = (field: string, description: string) => new Admin.InvalidField({ field, description })

/** Every failure an operation can end with. */
type Failure =
  | Refused
  | Admin.InvalidField
  | Admin.NotFound
  | { readonly _tag: "AppKeyTaken"; readonly appKey: string }
  | { readonly _tag: "UsernameTaken"; readonly username: string }
  | StorageError

const failureResponse = (e: Http.Settled<Failure>): Http.HttpResponse => {
  switch (e._tag) {
    case "Refused":
      return e.response
    case "InvalidField":
      return Http.json(400, { error: e.error, error_description: e.description, field: e.field })
    case "NotFound":
      return Http.json(404, { error: e.error, error_description: e.description })
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
    case "TemporarilyUnavailable":
    case "ServerError":
      return Http.errorResponse(e)
  }
}

const refusal = (status: 400 | 413 | 415, description: string) =>
  new Refused(Http.refusalResponse({ status, description, headers: {} }))

/** What each field of a request body must be, for the 400 that names it (never the value received). */
const expected: Readonly<Record<string, string>> = {
  name: "a string",
  redirect_uris: "an array of strings",
  scopes: "an array of scope tokens, or one string of them",
  grant_types: `an array of ${GrantType.literals.join(", ")}`,
  require_pkce: "true or false",
  access_token_ttl: "a whole number of seconds, or null for the server default",
  refresh_token_ttl: "a whole number of seconds, or null for the server default",
  grace_seconds: "a whole number of seconds",
  username: "a string",
  password: "a string",
  disabled: "true or false"
}

// The first of Schema's "one or more" (`SingleOrNonEmpty`): a path or the issues of a Composite
const head = <A>(value: A | readonly [A, ...Array<A>]): A =>
  Array.isArray(value) ? (value[0] as A) : (value as A)

/**
 * The first leaf of a decode error and the field it is under, found by a loop over the issue
 * tree: Schema's formatters print the value received, which may be large, secret or deep.
 */
const firstIssue = (issue: ParseResult.ParseIssue): { readonly tag: string; readonly field: string } => {
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
        return { tag: current._tag, field: field === undefined ? "body" : String(field) }
    }
  }
}

const describeIssue = (issue: ParseResult.ParseIssue): Admin.InvalidField => {
  const { tag, field } = firstIssue(issue)
  // docs/security.md T13: a name that is not plain text is never echoed
  if (!isPlainText(field)) return badField("body", "a field name contains control characters")
  switch (tag) {
    case "Missing":
      return badField(field, `${field} is required`)
    case "Unexpected":
      return badField(field, `unknown field ${JSON.stringify(field)}`)
    default:
      return badField(field, `${field} must be ${expected[field] ?? "of another type"}`)
  }
}

/**
 * The JSON body of `req`, decoded with `schema`: compressed bodies and other content types are
 * 415, a body over `Http.maxBodyBytes` 413, one nesting deeper than `Http.maxJsonDepth` 400,
 * malformed JSON, a wrong type or an unknown field 400 naming the field (never the value received). An empty body without a content type reads as `{}`.
 */
const readBody = <A, I>(req: Http.HttpRequest, schema: Schema.Schema<A, I>): Either.Either<A, Failure> => {
  const refused = Http.bodyRefusal(req)
  if (refused !== undefined) return Either.left(new Refused(Http.refusalResponse(refused)))
  let value: unknown = {}
  if (!(req.body === "" && Http.header(req, "content-type") === undefined)) {
    const { mime, charsetOk } = Http.mediaType(req)
    if (mime !== "application/json" || !charsetOk) {
      return Either.left(refusal(415, "content type must be application/json (UTF-8)"))
    }
    if (Http.nestsDeeperThan(req.body, Http.maxJsonDepth)) {
      return Either.left(badField("body", `the body nests deeper than ${Http.maxJsonDepth} levels`))
    }
    try {
      value = JSON.parse(req.body)
    } catch {
      return Either.left(badField("body", "the body is not valid JSON"))
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left(badField("body", "the body must be a JSON object"))
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(schema, { onExcessProperty: "error", errors: "first" })(value),
    (e) => describeIssue(e.issue)
  )
}

const withBody = <A, I, R>(
  req: Http.HttpRequest,
  schema: Schema.Schema<A, I>,
  f: (body: A) => Effect.Effect<Http.HttpResponse, Failure, R>
): Effect.Effect<Http.HttpResponse, Failure, R> =>
  Either.match(readBody(req, schema), { onLeft: Effect.fail, onRight: f })

/** The query of `req`, refusing a repeated, malformed or unknown parameter (400 naming it). */
const readQuery = (
  req: Http.HttpRequest,
  known: ReadonlyArray<string>
): Either.Either<Form.Params, Failure> =>
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

const ok = (value: unknown) => Effect.succeed(Http.json(200, value))

const created = (value: unknown, location: string) =>
  Effect.succeed(Http.json(201, value, { location: `${basePath}${location}` }))

const seg = encodeURIComponent

const applicationJson = (app: Parameters<typeof AdminJson.application>[0]) =>
  Effect.map(nowSeconds, (now) => Http.json(200, AdminJson.application(app, now)))

/** The optional fields of an application body, as `Admin` names them. */
const applicationFields = (body: typeof AdminJson.UpdateApplication.Type): Admin.ApplicationPatch => ({
  ...(body.name !== undefined ? { name: body.name } : {}),
  ...(body.redirect_uris !== undefined ? { redirectUris: body.redirect_uris } : {}),
  ...(body.scopes !== undefined ? { scope: body.scopes } : {}),
  ...(body.grant_types !== undefined ? { grantTypes: body.grant_types } : {}),
  ...(body.require_pkce !== undefined ? { requirePkce: body.require_pkce } : {}),
  ...(body.access_token_ttl !== undefined ? { accessTokenTtl: body.access_token_ttl } : {}),
  ...(body.refresh_token_ttl !== undefined ? { refreshTokenTtl: body.refresh_token_ttl } : {})
})

type Operation = Effect.Effect<Http.HttpResponse, Failure, Requirements>
type Methods = Readonly<Record<string, (req: Http.HttpRequest, params: ReadonlyArray<string>) => Operation>>

const noQuery =
  (f: (req: Http.HttpRequest, params: ReadonlyArray<string>) => Operation) =>
  (req: Http.HttpRequest, params: ReadonlyArray<string>): Operation =>
    Either.match(readQuery(req, []), { onLeft: Effect.fail, onRight: () => f(req, params) })

const at = (params: ReadonlyArray<string>, i: number): string => params[i] ?? ""

/** The endpoints: path segments after `basePath` (`*` matches one segment) and their methods. */
const endpoints: ReadonlyArray<readonly [ReadonlyArray<string>, Methods]> = [
  [
    ["applications"],
    {
      GET: noQuery(() =>
        Effect.flatMap(Admin.listApplications, (apps) =>
          Effect.map(nowSeconds, (now) =>
            Http.json(
              200,
              apps.map((a) => AdminJson.application(a, now))
            )
          )
        )
      ),
      POST: noQuery((req) =>
        withBody(req, AdminJson.CreateApplication, (body) =>
          Effect.flatMap(
            Admin.createApplication({
              ...applicationFields(body),
              name: body.name,
              redirectUris: body.redirect_uris
            }),
            ({ app, appSecret }) =>
              created(AdminJson.createdApplication(app, appSecret), `/applications/${seg(app.appKey)}`)
          )
        )
      )
    }
  ],
  [
    ["applications", "*"],
    {
      GET: noQuery((_, p) => Effect.flatMap(Admin.findApplication(at(p, 0)), applicationJson)),
      PATCH: noQuery((req, p) =>
        withBody(req, AdminJson.UpdateApplication, (body) =>
          Effect.flatMap(Admin.updateApplication(at(p, 0), applicationFields(body)), applicationJson)
        )
      ),
      DELETE: noQuery((_, p) =>
        Effect.as(Admin.deleteApplication(at(p, 0)), Http.json(200, { app_key: at(p, 0), deleted: true }))
      )
    }
  ],
  [
    ["applications", "*", "secret"],
    {
      POST: noQuery((req, p) =>
        withBody(req, AdminJson.RotateSecret, (body) =>
          Effect.map(Admin.rotateSecret(at(p, 0), body.grace_seconds ?? 0), (r) =>
            Http.json(200, AdminJson.rotatedSecret(at(p, 0), r.appSecret, r.previousSecretExpiresAt))
          )
        )
      )
    }
  ],
  [
    ["applications", "*", "subjects", "*", "tokens"],
    {
      DELETE: noQuery((_, p) =>
        Effect.flatMap(Admin.revokeSubjectTokens(at(p, 0), at(p, 1)), (revoked) =>
          ok({ app_key: at(p, 0), open_id: at(p, 1), revoked })
        )
      )
    }
  ],
  [
    ["applications", "*", "consents", "*"],
    {
      DELETE: noQuery((_, p) =>
        Effect.flatMap(Admin.findUserById(at(p, 1)), (user) =>
          Effect.as(
            Admin.withdrawConsent(user, at(p, 0)),
            Http.json(200, { user_id: user.userId, app_key: at(p, 0), withdrawn: true })
          )
        )
      )
    }
  ],
  [
    ["users"],
    {
      GET: noQuery(() => Effect.flatMap(Admin.listUsers, (users) => ok(users.map(AdminJson.user)))),
      POST: noQuery((req) =>
        withBody(req, AdminJson.CreateUser, (body) =>
          Effect.flatMap(Admin.createUser(body.username, body.password), (user) =>
            created({ user_id: user.userId, username: user.username }, `/users/${seg(user.userId)}`)
          )
        )
      )
    }
  ],
  [
    ["users", "*"],
    {
      GET: noQuery((_, p) => Effect.flatMap(Admin.findUserById(at(p, 0)), (u) => ok(AdminJson.user(u)))),
      PATCH: noQuery((req, p) =>
        withBody(req, AdminJson.UpdateUser, (body) =>
          Effect.gen(function* () {
            // Checked before anything changes, so a refused password changes nothing
            const problem = body.password === undefined ? null : Accounts.passwordProblem(body.password)
            if (problem !== null) return yield* Effect.fail(badField("password", problem))
            if (body.keep_sessions !== undefined && body.password === undefined) {
              return yield* Effect.fail(
                badField("keep_sessions", "keep_sessions is only allowed with password")
              )
            }
            let user = yield* Admin.findUserById(at(p, 0))
            if (body.password !== undefined) {
              const keepSessions = body.keep_sessions === true
              user = yield* Admin.setPassword(user, body.password, { keepSessions })
            }
            if (body.disabled === true) user = yield* Admin.disableUser(user)
            if (body.disabled === false) user = yield* Admin.enableUser(user)
            return Http.json(200, AdminJson.user(user))
          })
        )
      ),
      DELETE: noQuery((_, p) =>
        Effect.flatMap(Admin.findUserById(at(p, 0)), (user) =>
          Effect.as(
            Admin.deleteUser(user),
            Http.json(200, { user_id: user.userId, username: user.username, deleted: true })
          )
        )
      )
    }
  ],
  [
    ["users", "*", "consents"],
    {
      GET: noQuery((_, p) =>
        Effect.flatMap(Admin.findUserById(at(p, 0)), (user) =>
          Effect.flatMap(Admin.listConsents(user), ({ consents }) => ok(consents.map(AdminJson.consent)))
        )
      )
    }
  ],
  [
    ["audit"],
    {
      GET: (req) =>
        Effect.gen(function* () {
          const query = yield* readQuery(req, ["app_key", "type", "since", "limit"])
          const limit = query.limit === undefined ? Admin.defaultAuditLimit : Number(query.limit)
          if (!/^\d{1,4}$/.test(query.limit ?? "100") || limit < 1 || limit > maxAuditLimit) {
            return yield* Effect.fail(
              badField("limit", `limit must be a whole number from 1 to ${maxAuditLimit}`)
            )
          }
          const since = query.since === undefined ? undefined : Admin.parseSince(query.since)
          if (since === null) {
            return yield* Effect.fail(
              badField(
                "since",
                "since must be ISO 8601 (2026-01-31 or 2026-01-31T12:00:00Z) or epoch seconds"
              )
            )
          }
          const events = yield* Admin.queryAudit({ limit, appKey: query.app_key, type: query.type, since })
          return Http.json(200, events.map(AdminJson.auditEvent))
        })
    }
  ],
  [
    ["openapi.json"],
    {
      GET: noQuery(() => ok(OpenApi.adminDocument()))
    }
  ]
]

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
  const endpoint = segments === null ? undefined : endpoints.find(([pattern]) => matches(pattern, segments))
  if (segments === null || endpoint === undefined) return Effect.succeed(notFound)
  const [pattern, methods] = endpoint
  const handler = methods[req.method]
  if (handler === undefined) {
    return Effect.succeed(Http.refusalResponse(Http.methodNotAllowed(Object.keys(methods).join(", "))))
  }
  const params = segments.filter((_, i) => pattern[i] === "*")
  return respond(Effect.suspend(() => handler(req, params))).pipe(
    Effect.withSpan("AdminApi.route", { captureStackTrace: false }),
    Effect.provideService(Audit.RequestInfo, {
      requestId: req.requestId ?? null,
      address: req.remoteAddress ?? null,
      actor
    })
  )
}

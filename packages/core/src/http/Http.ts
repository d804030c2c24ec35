/**
 * HTTP semantics of the JSON endpoints as pure functions from a plain request
 * value to a plain response value, so every binding (Express, node:http,
 * fetch-style) is a few lines of I/O and behaves the same (RFC 6749 §5, RFC 7662, RFC 7009,
 * RFC 8414, OpenID Connect Core §5.3 userinfo, RFC 7517 JWK Set).
 */
import { Cause, Effect, Either, Option } from "effect"
import { type Application, allowsWebOrigin } from "../model/Application.js"
import type { Config } from "../model/Config.js"
import * as OAuthError from "../model/OAuthError.js"
import * as Bearer from "../oauth/Bearer.js"
import * as Call from "../oauth/Call.js"
import { authenticateCall, authenticateConfidential } from "../oauth/ClientAuth.js"
import * as Grants from "../oauth/grants/index.js"
import { introspect, revoke } from "../oauth/Introspection.js"
import * as Form from "../oauth/requests/Form.js"
import * as Claims from "../openid/Claims.js"
import * as Userinfo from "../openid/Userinfo.js"
import type { PasswordChecks } from "../security/PasswordChecks.js"
import type { ThrottlePolicy, ThrottleStore } from "../security/Throttle.js"
import type { Entropy } from "../services/Entropy.js"
import type { PasswordHasher } from "../services/PasswordHasher.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { OpenIdStore } from "../storage/OpenIdStore.js"
import type { Stores } from "../storage/Stores.js"
import { UserStore } from "../storage/UserStore.js"
import * as Cors from "./Cors.js"
import { jwks, metadata } from "./Documents.js"
import * as Paths from "./Paths.js"
import * as Registration from "./Registration.js"
import { bodyRefusal, type HttpRequest, header, mediaType } from "./Request.js"
import {
  type HttpResponse,
  json,
  logDefect,
  methodNotAllowed,
  type Refusal,
  refusalResponse,
  respond,
  retryAfter,
  type StorageFailure,
  serverError,
  unavailable
} from "./Response.js"

/**
 * The metadata and JWK Set endpoints (`route` serves them).
 *
 * @public
 */
export { catalogueMaxAge, jwks, jwksMaxAge, metadata } from "./Documents.js"
/** The request value and how its headers and body are read. */
export {
  carriesBody,
  type HttpRequest,
  header,
  maxBodyBytes,
  maxJsonDepth,
  nestsDeeperThan
} from "./Request.js"
export {
  errorResponse,
  type HttpResponse,
  json,
  methodNotAllowed,
  type Refusal,
  refusalResponse,
  refusalStatuses,
  type Settled,
  serverError,
  settle,
  unavailable
} from "./Response.js"

/** Every service the endpoints need. */
export type Requirements =
  | Stores
  | Config
  | Entropy
  | PasswordHasher
  | ThrottleStore
  | ThrottlePolicy
  | PasswordChecks

/** Check the size and content type of a form POST, then parse its body. */
export const readForm = (req: HttpRequest): Either.Either<Form.Params, Refusal> => {
  const refused = bodyRefusal(req)
  if (refused !== undefined) return Either.left(refused)
  const { mime, charsetOk } = mediaType(req)
  if (mime !== "application/x-www-form-urlencoded" || !charsetOk) {
    return Either.left({
      status: 400,
      description: "content type must be application/x-www-form-urlencoded",
      headers: {}
    })
  }
  return Either.mapLeft(Form.parse(req.body), (e) => ({
    status: 400,
    description: e.description,
    headers: {}
  }))
}

/**
 * A form POST answered by `f` in the request's `Call` (its services read once), in a span when the
 * runtime traces; a request refused before any OAuth rule runs is answered at once.
 */
const withForm = <R>(
  name: string,
  req: HttpRequest,
  f: (
    call: Call.Call<Requirements>,
    params: Form.Params
  ) => Effect.Effect<HttpResponse, OAuthError.OAuthError | StorageFailure, R>
): Effect.Effect<HttpResponse, never, R | Requirements> => {
  const form = req.method === "POST" ? readForm(req) : Either.left(methodNotAllowed("POST"))
  if (Either.isLeft(form)) return Effect.succeed(refusalResponse(form.left))
  return Call.run(req, (call: Call.Call<Requirements>) => {
    const answer = respond(f(call, form.right))
    return Call.traced(call, name, answer)
  })
}

// The Authorization header; null when it came more than once (never a public client's request)
const authorization = (req: HttpRequest): string | null | undefined => header(req, "authorization")

// The request's `Origin` when the application registered it (one value, compared exactly)
const grantedOrigin = (req: HttpRequest, app: Application): string | undefined => {
  const origin = header(req, "origin")
  return typeof origin === "string" && allowsWebOrigin(app, origin) ? origin : undefined
}

/**
 * The answer of an endpoint once it knows the application: success and OAuth error alike
 * readable by a page of an origin the application registered; otherwise `answer` as it is,
 * without one more step.
 */
const forApplication = <E extends OAuthError.OAuthError | StorageFailure, R>(
  req: HttpRequest,
  app: Application,
  policy: Cors.Policy,
  answer: Effect.Effect<HttpResponse, E, R>
): Effect.Effect<HttpResponse, E, R> => {
  const origin = grantedOrigin(req, app)
  return origin === undefined ? answer : Effect.map(respond(answer), (r) => Cors.grant(r, origin, policy))
}

/** `POST /oauth2/oauth2/token` (`Paths.oauth.token`). */
export const token = (req: HttpRequest): Effect.Effect<HttpResponse, never, Requirements> =>
  withForm("Http.token", req, (call, params) =>
    Effect.flatMap(authenticateCall(call, authorization(req), params), (app) =>
      forApplication(
        req,
        app,
        Cors.applicationPost,
        Effect.map(Grants.serve(call, params, app), (body) => json(200, body))
      )
    )
  )

// Whether a raw query string names the parameter `name`, however its name is percent-encoded
const queryNames = (query: string, name: string): boolean =>
  query.split("&").some((part) => Form.partName(part) === name)

const tokenInQuery = new OAuthError.InvalidRequest({ description: "the token must be sent in the body" })

// I-6 (docs/security.md): a token in the URL is refused (`?%74oken=` too), never read
const withoutTokenInQuery = <A, E, R>(
  req: HttpRequest,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | OAuthError.InvalidRequest, R> =>
  queryNames(req.query, "token") ? Effect.fail(tokenInQuery) : effect

/** `POST /oauth2/oauth2/introspect` (RFC 7662). */
export const introspection = (req: HttpRequest): Effect.Effect<HttpResponse, never, Requirements> =>
  withForm("Http.introspection", req, (call, params) =>
    Effect.flatMap(authenticateConfidential(call, authorization(req), params), (app) =>
      withoutTokenInQuery(
        req,
        Effect.map(introspect(call, params, app), (body) => json(200, body))
      )
    )
  )

const revoked: HttpResponse = {
  status: 200,
  headers: { "cache-control": "no-store", pragma: "no-cache" },
  body: ""
}

/** `POST /oauth2/oauth2/revoke` (RFC 7009): 200 with an empty body, known token or not. */
export const revocation = (req: HttpRequest): Effect.Effect<HttpResponse, never, Requirements> =>
  withForm("Http.revocation", req, (call, params) =>
    Effect.flatMap(authenticateCall(call, authorization(req), params), (app) =>
      forApplication(
        req,
        app,
        Cors.applicationPost,
        withoutTokenInQuery(req, Effect.as(revoke(call, params, app), revoked))
      )
    )
  )

// A Bearer refusal of the userinfo endpoint that `Bearer.admit` does not make itself
const bearerRefusal = (status: number, error: OAuthError.Code, description: string, extra = {}) => ({
  ...json(
    status,
    { error, error_description: description },
    {
      "www-authenticate": Bearer.challenge("latchkey", { error, error_description: description }),
      ...extra
    }
  ),
  error
})

/**
 * The Authorization header values of a userinfo request, with a POST body's `access_token`
 * (RFC 6750 §2.2) as one more: a request that sends the token both ways is refused.
 */
const userinfoCredentials = (req: HttpRequest): Either.Either<ReadonlyArray<string>, Refusal> => {
  const given = req.headers.authorization
  const headers = given === undefined ? [] : typeof given === "string" ? [given] : given
  if (req.method !== "POST" || (req.body === "" && header(req, "content-type") === undefined)) {
    const refused = bodyRefusal(req)
    return refused === undefined ? Either.right(headers) : Either.left(refused)
  }
  return Either.flatMap(readForm(req), (params) => {
    const token = params.access_token
    if (token === undefined) return Either.right(headers)
    if (headers.length > 0)
      return Either.left({ status: 400, description: "the access token was sent twice", headers: {} })
    return Either.right([`Bearer ${token}`])
  })
}

/**
 * The userinfo answer for a request with `Origin`, readable by the page when the application the
 * access token was issued to registered that origin: the one more read is made only then.
 */
const userinfoFor = (
  call: Call.Call<Requirements>,
  req: HttpRequest,
  principal: Bearer.Principal,
  answer: Effect.Effect<HttpResponse>
): Effect.Effect<HttpResponse> =>
  typeof header(req, "origin") !== "string"
    ? answer
    : Effect.matchEffect(Call.use(call, ApplicationStore).find(principal.clientId), {
        onFailure: () => answer,
        onSuccess: Option.match({
          onNone: () => answer,
          onSome: (app) => forApplication(req, app, Cors.userinfo, answer)
        })
      })

/**
 * The claims of an admitted token's user (`Userinfo.claimsWith`) answered in one step: 200, or
 * `invalid_token` when no enabled user granted it, 503 when a store cannot answer, 500 on a defect.
 */
const userinfoAnswer = (call: Call.Call<Requirements>, principal: Bearer.Principal) =>
  Effect.matchCauseEffect(
    Userinfo.claimsWith(
      { openIds: Call.use(call, OpenIdStore), users: Call.use(call, UserStore) },
      principal
    ),
    {
      onSuccess: (claims) =>
        Effect.succeed(
          Option.isNone(claims)
            ? bearerRefusal(401, "invalid_token", "the access token was not granted by a user")
            : json(200, claims.value)
        ),
      onFailure: (cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isNone(failure))
          return Effect.as(
            logDefect(cause),
            bearerRefusal(serverError.status, serverError.error, serverError.description)
          )
        const e = unavailable
        return Effect.succeed(bearerRefusal(e.status, e.error, e.description, retryAfter(e.retryAfter)))
      }
    }
  )

/**
 * `GET` and `POST /oauth2/oauth2/userinfo` (OpenID Connect Core §5.3): `sub` and the claims of the
 * access token's scope, for a token carrying `openid` (RFC 6750 answers as `Bearer.admit` gives
 * them): any access token this server issued whose record is active, whatever its audience. A token
 * no enabled user granted (an application's own) is `invalid_token`. The request's services are
 * read once (`Call.run`).
 */
export const userinfo = (req: HttpRequest): Effect.Effect<HttpResponse, never, Requirements> => {
  if (req.method !== "GET" && req.method !== "POST")
    return Effect.succeed(refusalResponse(methodNotAllowed("GET, POST")))
  const credentials = userinfoCredentials(req)
  if (Either.isLeft(credentials)) {
    const r = credentials.left
    return Effect.succeed(bearerRefusal(r.status, "invalid_request", r.description, r.headers))
  }
  return Call.run(req, (call: Call.Call<Requirements>) => {
    // OpenID Connect Core §5.3: the server's own endpoint takes any access token it issued
    const admission = Bearer.admitIn(
      call,
      credentials.right,
      Claims.openidScopeSet,
      "latchkey",
      Bearer.issuedHere
    )
    const answer = Effect.flatMap(admission, (admitted) =>
      Either.isLeft(admitted)
        ? Effect.succeed(admitted.left)
        : userinfoFor(call, req, admitted.right, userinfoAnswer(call, admitted.right))
    )
    return Call.traced(call, "Http.userinfo", answer)
  })
}

/** Paths of the JSON endpoints `route` serves: `Paths.json`. */
export const jsonPaths: ReadonlyArray<string> = Paths.json

/** Route a request to its JSON endpoint by path; none when the path is not one of them. */
export const route = (req: HttpRequest): Option.Option<Effect.Effect<HttpResponse, never, Requirements>> =>
  Option.map(endpoint(req), (answer) =>
    Cors.answer(
      {
        path: req.path,
        origin: header(req, "origin"),
        preflight:
          req.method === "OPTIONS" && typeof header(req, "access-control-request-method") === "string"
      },
      answer
    )
  )

const endpoint = (req: HttpRequest): Option.Option<Effect.Effect<HttpResponse, never, Requirements>> => {
  switch (req.path) {
    case Paths.oauth.token:
      return Option.some(token(req))
    case Paths.oauth.introspect:
      return Option.some(introspection(req))
    case Paths.oauth.revoke:
      return Option.some(revocation(req))
    case Paths.oauth.metadata:
    case Paths.oauth.openidConfiguration:
      return Option.some(metadata(req))
    case Paths.oauth.userinfo:
      return Option.some(userinfo(req))
    case Paths.oauth.jwks:
      return Option.some(jwks(req))
    case Paths.oauth.register:
      return Option.some(Registration.endpoint(req))
    default:
      return Option.none()
  }
}

/**
 * The authorize endpoint (RFC 6749 §4.1.1, §4.2.1): request validation
 * with the no-redirect rule for bad client or redirect URI, and delivery of the
 * code (query) or token (fragment) with `state` and `iss` (RFC 9207).
 */
import { Data, Effect, Either, Option } from "effect"
import {
  type Application,
  allows,
  backchannelLogoutUri,
  inService,
  isPublic,
  matchesRedirectUri,
  status
} from "../model/Application.js"
import type { AuthorizationCode } from "../model/AuthorizationCode.js"
import { Config } from "../model/Config.js"
import { candidate, forUser } from "../model/OpenId.js"
import type * as Pkce from "../model/Pkce.js"
import * as Scope from "../model/Scope.js"
import { recorded, type SignInMethod } from "../model/SignIn.js"
import * as Audit from "../security/Audit.js"
import { sha256 } from "../services/Digest.js"
import * as Entropy from "../services/Entropy.js"
import { issueSeconds, nowSeconds } from "../services/internal/time.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { CodeStore } from "../storage/CodeStore.js"
import { ConsentStore } from "../storage/ConsentStore.js"
import { LogoutStore } from "../storage/LogoutStore.js"
import { OpenIdStore } from "../storage/OpenIdStore.js"
import { TokenStore } from "../storage/TokenStore.js"
import { atomically } from "../storage/Transaction.js"
import { mintHere } from "./grants/Issue.js"
import { isOpenId, type OpenIdRequest } from "./OpenIdRequest.js"
import { parts } from "./requests/AuthorizeQuery.js"
import * as Form from "./requests/Form.js"

/** Page layouts selected by `client_type`. */
export type ClientType = "PC" | "Mobile"

/**
 * The layout of a page answering this authorize query, before or without its
 * validation: `Mobile` when it asks for it, else `PC` (an invalid value, which
 * `validate` refuses, is shown in the default layout).
 */
export const layout = (query: string): ClientType =>
  Either.match(Form.parse(query), {
    onLeft: () => "PC",
    onRight: (params) => (params.client_type === "Mobile" ? "Mobile" : "PC")
  })

/** A validated authorization request. */
export interface AuthorizationRequest {
  readonly app: Application
  readonly redirectUri: string
  readonly responseType: "code" | "token"
  readonly scope: Scope.ScopeSet
  readonly state: string | null
  readonly clientType: ClientType
  readonly codeChallenge: string | null
  readonly codeChallengeMethod: Pkce.Method | null
  /** Present on an OpenID request (`OpenIdRequest.isOpenId`) only: its OpenID Connect parameters. */
  readonly openId?: OpenIdRequest
}

/**
 * Why an authorize request cannot be trusted: its client, its redirect URI, or the request as a
 * whole; or its application is not active (pending review, rejected or suspended: docs/platform.md).
 */
export type ErrorPageReason =
  | "unknown_client"
  | "bad_redirect_uri"
  | "bad_request"
  | "application_unavailable"

/** The client or redirect URI cannot be trusted: show an error page, never redirect (RFC 6749 §4.1.2.1). */
export class ErrorPage extends Data.TaggedError("ErrorPage")<{
  readonly status: number
  readonly error: string
  readonly description: string
  /** A stable code for the page to explain in the reader's language. */
  readonly reason: ErrorPageReason
  /** For `bad_redirect_uri`: the `redirect_uri` received, as the page shows it (`shownValue`), or null when none was sent. */
  readonly received: string | null
}> {}

/** Most characters of a received value an error page shows; a longer one is cut and ends with `…`. */
export const maxShownValue = 200

/**
 * A value received, as an error page may show it as text: control, format (bidirectional) and
 * line separator characters replaced by U+FFFD, and cut to `maxShownValue` characters. The page
 * still escapes it; it is never a link.
 */
export const shownValue = (value: string): string => {
  const chars = Array.from(value.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, "\uFFFD"))
  return chars.length > maxShownValue ? `${chars.slice(0, maxShownValue - 1).join("")}…` : chars.join("")
}

/** An error delivered to the validated redirect URI. */
export class ErrorRedirect extends Data.TaggedError("ErrorRedirect")<{
  readonly location: string
  readonly error: RedirectErrorCode
  readonly description: string
}> {}

/**
 * Error codes the authorize endpoint sends to the redirect URI (RFC 6749 §4.1.2.1, §4.2.2.1), and
 * those of an OpenID request that may show no page (OpenID Connect Core 1.0 §3.1.2.6).
 */
export const redirectErrorCodes = [
  "invalid_request",
  "unauthorized_client",
  "access_denied",
  "unsupported_response_type",
  "invalid_scope",
  "server_error",
  "temporarily_unavailable",
  "login_required",
  "consent_required",
  "interaction_required"
] as const

/** One of `redirectErrorCodes`. */
export type RedirectErrorCode = (typeof redirectErrorCodes)[number]

/** `uri` with `params` (those not null) added to its query, or as its fragment. */
export const append = (
  uri: string,
  sep: "?" | "#",
  params: ReadonlyArray<readonly [string, string | null]>
): string => {
  const encoded = params
    .filter((p): p is readonly [string, string] => p[1] !== null)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join("&")
  if (sep === "#") return `${uri}#${encoded}`
  return `${uri}${uri.includes("?") ? "&" : "?"}${encoded}`
}

/** The redirect carrying an error for a request whose client and redirect URI were validated. */
export const errorLocation = (
  target: { readonly redirectUri: string; readonly state: string | null; readonly fragment: boolean },
  issuer: string,
  error: RedirectErrorCode,
  description: string
): string =>
  append(target.redirectUri, target.fragment ? "#" : "?", [
    ["error", error],
    ["error_description", description],
    ["state", target.state],
    ["iss", issuer]
  ])

/** The error page of a request whose client or redirect URI cannot be trusted. */
const errorPage = (reason: ErrorPageReason, description: string, received: string | null = null) =>
  Effect.fail(new ErrorPage({ status: 400, error: "invalid_request", description, reason, received }))

/**
 * The application and redirect URI of a request, when both can be trusted; else its error
 * page. A client_id or redirect_uri its Schema refuses names no application and no
 * registered URI, so it is answered as unknown or unregistered.
 */
const trustedClient = Effect.fnUntraced(function* (params: Form.Params) {
  const unknown = () => errorPage("unknown_client", "client_id is missing or unknown")
  // docs/security.md T13: a client_id that is not plain text names no application, in any store
  const client = parts.clientId(params)
  if (Either.isLeft(client)) return yield* unknown()
  const found = yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(client.right.client_id))
  if (Option.isNone(found)) return yield* unknown()
  // docs/platform.md: an application that is not active starts no authorization; its redirect
  // URI is not trusted meanwhile, so the error is a page (RFC 6749 §4.1.2.1), never a redirect
  if (!inService(found.value)) {
    return yield* Effect.fail(
      new ErrorPage({
        status: 400,
        error: "unauthorized_client",
        description: `this application is ${status(found.value)} and may not start an authorization`,
        reason: "application_unavailable",
        received: null
      })
    )
  }
  const uri = parts.redirectUri(params)
  // RFC 6749 §3.1.2.3, RFC 9700 §2.1: exactly a registered URI; required even with only one registered
  if (Either.isLeft(uri) || !matchesRedirectUri(found.value, uri.right.redirect_uri)) {
    const sent = params.redirect_uri
    return yield* errorPage(
      "bad_redirect_uri",
      "redirect_uri is missing or not registered for this application",
      sent === undefined ? null : shownValue(sent)
    )
  }
  return { app: found.value, redirectUri: uri.right.redirect_uri }
})

/** Send an error to the trusted redirect URI. */
type Fail = (error: RedirectErrorCode, description: string) => Effect.Effect<never, ErrorRedirect>

/** A decoded part of the query, or its refusal (`Params.refusal`) sent to the redirect URI. */
const orFail = <A, E extends { readonly error: RedirectErrorCode; readonly description: string }>(
  decoded: Either.Either<A, E>,
  fail: Fail
): Effect.Effect<A, ErrorRedirect> =>
  Either.match(decoded, { onLeft: (e) => fail(e.error, e.description), onRight: Effect.succeed })

/**
 * The PKCE challenge of a code request (RFC 7636 §4.3); a missing method means plain. A public
 * application (RFC 9700 §2.1.1) always needs one, with S256, whatever `allowPlainPkce` says.
 */
const challengeOf = Effect.fnUntraced(function* (
  params: Form.Params,
  app: Application,
  allowPlainPkce: boolean,
  fail: Fail
) {
  if (params.code_challenge === undefined) {
    if (params.code_challenge_method !== undefined)
      return yield* fail("invalid_request", "code_challenge_method without code_challenge")
    if (isPublic(app))
      return yield* fail("invalid_request", "a public application must use PKCE (code_challenge with S256)")
    if (app.requirePkce)
      return yield* fail("invalid_request", "this application must use PKCE (code_challenge)")
    return { codeChallenge: null, codeChallengeMethod: null }
  }
  const { code_challenge_method: method = "plain" } = yield* orFail(parts.challengeMethod(params), fail)
  if (method === "plain" && (!allowPlainPkce || isPublic(app)))
    return yield* fail("invalid_request", "code_challenge_method must be S256")
  const { code_challenge: challenge } = yield* orFail(parts.challenge(params), fail)
  return { codeChallenge: challenge ?? null, codeChallengeMethod: method }
})

/** Validate an authorize request's query string, decoded part by part with `AuthorizeQuery`. */
export const validate = Effect.fn("Authorize.validate")(function* (query: string) {
  const params = yield* Either.match(Form.parse(query), {
    onLeft: (e) => errorPage("bad_request", e.description),
    onRight: Effect.succeed
  })
  const { app, redirectUri } = yield* trustedClient(params)
  const { issuer, allowPlainPkce } = yield* Config
  // As sent: an error redirect carries the state back even when it is refused
  const state = params.state ?? null
  const fail: Fail = (error, description) =>
    Effect.fail(
      new ErrorRedirect({
        location: errorLocation(
          { redirectUri, state, fragment: params.response_type === "token" },
          issuer,
          error,
          description
        ),
        error,
        description
      })
    )
  const { response_type: responseType } = yield* orFail(parts.response(params), fail)
  if (!allows(app, responseType === "code" ? "authorization_code" : "implicit")) {
    return yield* fail("unauthorized_client", `this application may not use response_type=${responseType}`)
  }
  const { client_type: clientType = "PC", scope: requested = Scope.empty } = yield* orFail(
    parts.options(params),
    fail
  )
  const scope = requested.length === 0 ? app.scopes : requested
  if (!Scope.isSubset(scope, app.scopes)) {
    return yield* fail("invalid_scope", "scope includes a scope this application is not registered for")
  }
  const pkce =
    responseType === "code"
      ? yield* challengeOf(params, app, allowPlainPkce, fail)
      : { codeChallenge: null, codeChallengeMethod: null }
  const request: AuthorizationRequest = { app, redirectUri, responseType, scope, state, clientType, ...pkce }
  // A request that is not OpenID never reads prompt, max_age or nonce (OAuth 2.0 ignores them)
  if (!isOpenId(responseType, scope)) return request
  const {
    prompt = [],
    max_age: maxAge = null,
    nonce = null,
    acr_values: acrValues = null
  } = yield* orFail(parts.openId(params), fail)
  return { ...request, openId: { prompt, maxAge, nonce, acrValues } } satisfies AuthorizationRequest
})

/** Whether the user has already allowed every requested scope to the application. */
export const hasConsent = Effect.fn("Authorize.hasConsent")(function* (
  req: AuthorizationRequest,
  userId: string
) {
  const consents = yield* ConsentStore
  const given = yield* consents.find(userId, req.app.appKey)
  return Option.isSome(given) && Scope.isSubset(req.scope, given.value)
})

/** A redirect to the client: where to, and the error code `location` carries, if it carries one. */
export interface Redirect {
  readonly location: string
  readonly error?: RedirectErrorCode
}

const success = (location: string): Redirect => ({ location })

/** Remember that the user allowed the request's scopes, with its `consent_granted` event. */
const grantConsent = (
  req: AuthorizationRequest,
  who: { readonly appKey: string; readonly userId: string; readonly openId: string },
  now: number
) =>
  Audit.recordWith(
    Effect.flatMap(ConsentStore, (c) => c.grant(who.userId, who.appKey, req.scope, now)),
    [["consent_granted", { ...who, detail: Scope.format(req.scope) }]]
  )

/** The browser's sign-in session an approval is made in. */
export interface FromSession {
  /** When the user signed in (OpenID Connect `auth_time`), or null. */
  readonly authTime: number | null
  /** The session's `sid` (`Session.sidOf`), or null. */
  readonly sid: string | null
  /** How the user signed in: absent for a password alone. */
  readonly method?: SignInMethod | undefined
  /** The session's id hash (its back-channel logout clients are recorded under it), or null. */
  readonly sessionHash: string | null
}

/** An approval made in no sign-in session (a program's, or a test's). */
const noSession: FromSession = { authTime: null, sid: null, sessionHash: null }

/**
 * The user allowed a code request, prepared: the store calls (for `Transaction.atomically`, with
 * whatever else the request writes) that remember the consent, issue the code and answer the
 * redirect. The code of an OpenID request carries its `nonce`, `authTime` (when the user
 * signed in), `sid` (the sign-in session, `Session.sidOf`) and, with `authTime`, how the user
 * signed in (`method`, the session's: absent for a password alone); when the application
 * registered a back-channel logout URI, the session (`sessionHash`, its id hash) records it as a
 * client in the same transaction, so that its end notifies the application (`LogoutStore.record`).
 */
export const codeApproval = Effect.fnUntraced(function* (
  req: AuthorizationRequest,
  userId: string,
  from: FromSession = noSession
) {
  const { authTime, sid, method, sessionHash } = from
  const { issuer, codeTtl } = yield* Config
  const now = yield* nowSeconds
  const first = yield* candidate(req.app.appKey, userId)
  const consented = yield* hasConsent(req, userId)
  const familyId = yield* Entropy.id()
  const value = yield* Entropy.token
  const codeHash = yield* sha256(value)
  // Rounded up: the code lives at least codeTtl seconds (docs/decisions.md)
  const issuedAt = yield* issueSeconds
  const location = append(req.redirectUri, "?", [
    ["code", value],
    ["state", req.state],
    ["iss", issuer]
  ])
  return Effect.gen(function* () {
    const openId = yield* Effect.flatMap(OpenIdStore, (s) => s.getOrCreate(req.app.appKey, userId, first))
    if (!consented) yield* grantConsent(req, { appKey: req.app.appKey, userId, openId }, now)
    const code: AuthorizationCode = {
      codeHash,
      appKey: req.app.appKey,
      redirectUri: req.redirectUri,
      userId,
      openId,
      scope: req.scope,
      codeChallenge: req.codeChallenge,
      codeChallengeMethod: req.codeChallengeMethod,
      familyId,
      issuedAt,
      expiresAt: issuedAt + codeTtl,
      usedAt: null,
      ...(req.openId === undefined ? {} : { nonce: req.openId.nonce, authTime, sid }),
      ...(req.openId === undefined || authTime === null ? {} : { signInMethod: recorded(method) })
    }
    // D15: the code redeems only while this consent stands (CodeStore.redeem checks it)
    yield* Effect.flatMap(CodeStore, (codes) => codes.insert(code))
    // OpenID Connect Back-Channel Logout 1.0 §2.2: opt-in, only for an application with a URI
    if (
      req.openId !== undefined &&
      sid !== null &&
      sessionHash !== null &&
      backchannelLogoutUri(req.app) !== null
    ) {
      const client = { appKey: req.app.appKey, userId, sub: openId, sid }
      yield* Effect.flatMap(LogoutStore, (logout) => logout.record(sessionHash, client))
    }
    return success(location)
  })
})

/**
 * The user allowed the request: remember the consent, issue the code (`codeApproval`, in one
 * transaction) or token, and return the redirect (an `access_denied` one when the token could
 * not be stored under the consent). The implicit grant's token is OAuth 2.0 only: it records no
 * sign-in (docs/decisions.md).
 */
export const approveRedirect = Effect.fn("Authorize.approve")(function* (
  req: AuthorizationRequest,
  userId: string,
  from: FromSession = noSession
) {
  if (req.responseType === "code") return yield* atomically(yield* codeApproval(req, userId, from))
  const { issuer } = yield* Config
  const now = yield* nowSeconds
  const openId = yield* forUser(req.app.appKey, userId)
  const who = { appKey: req.app.appKey, userId, openId }
  if (!(yield* hasConsent(req, userId))) yield* grantConsent(req, who, now)
  const familyId = yield* Entropy.id()
  // RFC 6749 §4.2.2: implicit never issues a refresh token
  const minted = yield* mintHere({
    app: req.app,
    userId,
    openId,
    scope: req.scope,
    grantScope: req.scope,
    familyId,
    parentHash: null,
    withRefresh: false
  })
  // D15: saved only while the consent checked or granted above stands (a withdrawal may commit between)
  const under = { userId, appKey: req.app.appKey, scope: req.scope }
  const stored = yield* Audit.recordWith(
    Effect.flatMap(TokenStore, (tokens) => tokens.insertUnderConsent(minted.records, under)),
    [["token_issued", { ...who, detail: "implicit" }]]
  ).pipe(
    Effect.as(true),
    // D13: the user was disabled or deleted since signing in; D15: the consent was withdrawn since
    // it was checked; nothing was issued
    Effect.catchTags({
      UserInactive: () => Effect.succeed(false),
      ConsentWithdrawn: () => Effect.succeed(false)
    })
  )
  if (!stored) return rejectRedirect(req, issuer, "access_denied", "the authorization was not granted")
  const location = append(req.redirectUri, "#", [
    ["access_token", minted.response.access_token],
    ["token_type", "Bearer"],
    ["expires_in", String(minted.response.expires_in)],
    ["scope", minted.response.scope],
    ["state", req.state],
    ["iss", issuer]
  ])
  return success(location)
})

/** The user allowed the request: `approveRedirect`'s location. */
export const approve = (req: AuthorizationRequest, userId: string) =>
  Effect.map(approveRedirect(req, userId), (r) => r.location)

/** The redirect for an error once the request is validated (e.g. `access_denied` when the user refuses). */
export const reject = (
  req: AuthorizationRequest,
  issuer: string,
  error: RedirectErrorCode,
  description: string
): string =>
  errorLocation(
    { redirectUri: req.redirectUri, state: req.state, fragment: req.responseType === "token" },
    issuer,
    error,
    description
  )

/** `reject`'s redirect, with its error code as a value. */
export const rejectRedirect = (
  req: AuthorizationRequest,
  issuer: string,
  error: RedirectErrorCode,
  description: string
): Redirect => ({ location: reject(req, issuer, error, description), error })

/**
 * The authorize interaction: the authorize endpoint (GET and HEAD), the consent
 * form (POST to the same path) and the sign-in form, as one route from a plain
 * request value to a view for the binding to render. Every status, redirect and
 * error choice of the browser flow is made here:
 *
 * validate the request → no signed-in user: sign-in page → consent already
 * given: redirect with the code or token → else consent page → Allow: redirect
 * with the code or token, Deny: redirect with `access_denied`.
 *
 * GET answers 302 and form POSTs 303 (RFC 9110 §15.4.4: the browser follows
 * with a GET). HEAD validates but never issues a code, records consent or opens
 * a session. Forms are tied to the session and good once (CSRF token), and
 * cross-site posts are refused (Fetch Metadata, `Origin`).
 */
import { Cause, Data, Effect, Either, Option } from "effect"
import * as Accounts from "./Accounts.js"
import * as Audit from "./Audit.js"
import * as Authorize from "./Authorize.js"
import { Config } from "./Config.js"
import type { HttpRequest, Refusal, Requirements } from "./Http.js"
import * as Http from "./Http.js"
import * as Metadata from "./Metadata.js"
import * as Form from "./requests/Form.js"
import type * as Scope from "./Scope.js"
import * as Session from "./Session.js"
import type { Step } from "./storage/SessionStore.js"
import type { StorageError } from "./storage/StorageError.js"
import { UserStore } from "./storage/UserStore.js"

/** A request to one of the pages, as a binding hands it over. */
export interface PageRequest extends HttpRequest {
  /**
   * The path the issuer's endpoints are mounted under, as the browser sees it
   * (e.g. `/auth`, or `""`): form actions, redirects back to the authorize
   * endpoint and the cookie path are built on it.
   */
  readonly basePath: string
  /** The origin this request was sent to (`https://host`), accepted in `Origin` besides the issuer's. */
  readonly ownOrigin: string
}

/** What the page for an answer shows; the binding renders it. */
export type View = Data.TaggedEnum<{
  /** Send the browser on: 302 from GET, 303 from a form POST. */
  Redirect: { readonly status: 302 | 303; readonly location: string }
  /** HEAD of a valid authorize request: the page's status and headers, no body, nothing stored. */
  Head: { readonly formTargets: ReadonlyArray<string> }
  /** The sign-in page (400 when it shows an error). */
  SignIn: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    readonly appName: string
    readonly redirectHost: string
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly error: Option.Option<{ readonly message: string; readonly username: string }>
    readonly formTargets: ReadonlyArray<string>
  }
  /** The consent page, with a "Not you?" form that signs in as someone else. */
  Consent: {
    readonly layout: Authorize.ClientType
    readonly appName: string
    readonly redirectHost: string
    readonly username: string
    readonly scope: Scope.ScopeSet
    readonly action: string
    readonly switchAction: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /** An error shown to the user (or as JSON to a client that asks for it), never sent to the client's redirect URI. */
  ErrorPage: {
    readonly status: number
    readonly layout: Authorize.ClientType
    readonly error: string
    readonly description: string
    /** Extra response headers: `retry-after`, `allow`. */
    readonly headers: Readonly<Record<string, string>>
  }
}>

/** Constructors and matchers of View. */
export const View = Data.taggedEnum<View>()

/** The answer to a page request: what to show, and the session cookie to set with it, if any. */
export interface PageResponse {
  readonly view: View
  /** A `Set-Cookie` value: the session cookie. */
  readonly setCookie: string | null
  /** A second `Set-Cookie` value: the trusted-device cookie, after a sign-in from a browser not yet trusted. */
  readonly deviceCookie?: string | null
}

/** Which page a path names, relative to the mount path; none for other paths. */
export const pageOf = (path: string): Option.Option<"authorize" | "login"> =>
  path === Metadata.paths.authorize
    ? Option.some("authorize")
    : path === Metadata.paths.login
      ? Option.some("login")
      : Option.none()

type ErrorPage = Extract<View, { _tag: "ErrorPage" }>

const errorPage = (
  layout: Authorize.ClientType,
  status: number,
  error: string,
  description: string,
  headers: Readonly<Record<string, string>> = {}
): ErrorPage => View.ErrorPage({ status, layout, error, description, headers })

const refused = (layout: Authorize.ClientType, r: Refusal): ErrorPage =>
  errorPage(layout, r.status, "invalid_request", r.description, r.headers)

const unavailable = (layout: Authorize.ClientType): ErrorPage =>
  errorPage(layout, Http.unavailable.status, Http.unavailable.error, Http.unavailable.description, {
    "retry-after": String(Http.unavailable.retryAfter)
  })

const forbidden = (layout: Authorize.ClientType): ErrorPage =>
  errorPage(
    layout,
    403,
    "access_denied",
    "this form has expired or was not sent from this site; go back to the application and start signing in again"
  )

const answer = (view: View, setCookie: string | null = null): PageResponse => ({ view, setCookie })

/** A view that ends the request early, carried on the failure channel. */
class Early extends Data.TaggedError("Early")<{ readonly response: PageResponse }> {}
const early = (view: View, setCookie: string | null = null) =>
  Effect.fail(new Early({ response: answer(view, setCookie) }))

/** Validate an authorize query; an invalid one ends the request with its page or redirect. */
const validated = (query: string, status: 302 | 303) =>
  Authorize.validate(query).pipe(
    Effect.catchTags({
      ErrorPage: (e) => early(errorPage(Authorize.layout(query), e.status, e.error, e.description)),
      ErrorRedirect: (e) => early(View.Redirect({ status, location: e.location }))
    })
  )

/** Where the form of a page may send the browser: this site and the client's redirect URI. */
const formTargets = (ar: Authorize.AuthorizationRequest): ReadonlyArray<string> => [
  "'self'",
  new URL(ar.redirectUri).origin
]

// The cookie goes only to the endpoint paths: the authorize endpoint's folder
const cookiePath = (req: PageRequest) =>
  req.basePath + Metadata.paths.authorize.slice(0, Metadata.paths.authorize.lastIndexOf("/"))

const saveSession = (req: PageRequest, session: Session.Session) =>
  Effect.flatMap(Config, ({ issuer }) =>
    Session.save(session, { path: cookiePath(req), secure: issuer.startsWith("https:") })
  )

/** The session's user, if the account still exists; a vanished user leaves the session anonymous. */
const currentUser = (session: Option.Option<Session.Session>) =>
  Effect.gen(function* () {
    if (Option.isNone(session) || session.value.userId === null) return Option.none<Session.Session>()
    const userId = session.value.userId
    const found = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
    return Option.isSome(found) ? session : Option.none<Session.Session>()
  })

const signInPage = (
  req: PageRequest,
  session: Session.Session,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string,
  status: 200 | 400,
  error: Option.Option<{ readonly message: string; readonly username: string }> = Option.none()
) =>
  Effect.gen(function* () {
    const ticket = yield* Session.addPending(session, rawQuery, "login")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.SignIn({
        status,
        layout: ar.clientType,
        appName: ar.app.name,
        redirectHost: new URL(ar.redirectUri).host,
        action: req.basePath + Metadata.paths.login,
        ticket,
        error,
        formTargets: formTargets(ar)
      }),
      setCookie
    )
  })

const consentPage = (
  req: PageRequest,
  session: Session.Session,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string
) =>
  Effect.gen(function* () {
    const ticket = yield* Session.addPending(session, rawQuery, "consent")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.Consent({
        layout: ar.clientType,
        appName: ar.app.name,
        redirectHost: new URL(ar.redirectUri).host,
        username: session.username ?? "",
        scope: ar.scope,
        action: req.basePath + Metadata.paths.authorize,
        switchAction: req.basePath + Metadata.paths.login,
        ticket,
        formTargets: formTargets(ar)
      }),
      setCookie
    )
  })

/** Longest authorize query accepted, in characters of the raw query string. */
export const maxAuthorizeQuery = 8 * 1024

/** The parameters of an authorize request that a pending request keeps. */
const authorizeParameters: ReadonlySet<string> = new Set([
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "client_type",
  "code_challenge",
  "code_challenge_method"
])

/**
 * The query a pending request stores and sends the browser back to: the authorize
 * parameters as the client wrote them, anything else dropped, so no extra
 * parameter is kept by the server or echoed in a redirect.
 */
export const storedQuery = (query: string): string =>
  query
    .split("&")
    .filter((part) => authorizeParameters.has(Form.partName(part) ?? ""))
    .join("&")

/** GET or HEAD of the authorize endpoint. */
const authorizeGet = (req: PageRequest) =>
  Effect.gen(function* () {
    if (req.query.length > maxAuthorizeQuery) {
      const description = `the authorization request is longer than ${maxAuthorizeQuery} characters`
      return answer(errorPage(Authorize.layout(req.query), 414, "invalid_request", description))
    }
    const ar = yield* validated(req.query, 302)
    if (req.method === "HEAD") return answer(View.Head({ formTargets: formTargets(ar) }))
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    const user = yield* currentUser(session)
    if (Option.isNone(user)) {
      // A session whose user vanished continues anonymous, under the same id until sign-in
      const anonymous = Option.isSome(session)
        ? { ...session.value, userId: null, username: null }
        : yield* Session.fresh
      return yield* signInPage(req, anonymous, ar, storedQuery(req.query), 200)
    }
    const userId = user.value.userId as string
    if (yield* Authorize.hasConsent(ar, userId)) {
      return answer(View.Redirect({ status: 302, location: yield* Authorize.approve(ar, userId) }))
    }
    return yield* consentPage(req, user.value, ar, storedQuery(req.query))
  })

/** Whether a form post comes from another site (Fetch Metadata, then `Origin`); the CSRF token is checked besides. */
const crossSite = (req: PageRequest) =>
  Effect.map(Config, ({ issuer }) => {
    const site = Http.header(req, "sec-fetch-site")
    if (site === null || (site !== undefined && site !== "same-origin" && site !== "none")) return true
    const origin = Http.header(req, "origin")
    // Referrer-Policy: no-referrer makes browsers send `Origin: null` on same-origin posts
    if (origin === undefined || origin === "null") return false
    return origin !== new URL(issuer).origin && origin !== req.ownOrigin
  })

/** Read a page form and take the request it continues: anything wrong ends the request. */
const continueForm = (req: PageRequest, step: (params: Record<string, string>) => Step) =>
  Effect.gen(function* () {
    const params = yield* Either.match(Http.readForm(req), {
      onLeft: (r) => early(refused("PC", r)),
      onRight: Effect.succeed
    })
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    if (Option.isNone(session) || (yield* crossSite(req))) return yield* early(forbidden("PC"))
    const pending = yield* Session.takePending(session.value, params.txn, params.csrf_token, step(params))
    if (Option.isNone(pending)) return yield* early(forbidden("PC"))
    return { params, session: session.value, rawQuery: pending.value.rawQuery }
  })

/** POST of the sign-in form, or of "Not you?" on the consent page. */
const signInPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { params, session, rawQuery } = yield* continueForm(req, (p) =>
      p.switch_account !== undefined ? "consent" : "login"
    )
    const layout = Authorize.layout(rawQuery)
    const ar = yield* validated(rawQuery, 303)
    const again = `${req.basePath}${Metadata.paths.authorize}?${rawQuery}`
    if (params.switch_account !== undefined) {
      const anonymous = yield* Session.regenerate(Option.some(session), null)
      return answer(View.Redirect({ status: 303, location: again }), yield* saveSession(req, anonymous))
    }
    const username = params.username ?? ""
    const password = params.password ?? ""
    if (username === "" || password === "") {
      const error = { message: "enter your username and password", username }
      return yield* signInPage(req, session, ar, rawQuery, 400, Option.some(error))
    }
    const cookies = Http.header(req, "cookie") ?? undefined
    const device = Option.getOrNull(yield* Session.trustedDevice(cookies, username))
    const signedIn = yield* Effect.either(
      Accounts.authenticate(username, password, req.remoteAddress, { _tag: "Page", device })
    )
    if (Either.isLeft(signedIn)) {
      const e = signedIn.left
      switch (e._tag) {
        case "InvalidGrant":
          return yield* signInPage(
            req,
            session,
            ar,
            rawQuery,
            400,
            Option.some({ message: Accounts.badCredentials, username })
          )
        case "RateLimited": {
          const wait = String(Math.max(1, Math.ceil(e.retryAfter)))
          return answer(
            errorPage(
              layout,
              429,
              e.error,
              `too many failed sign-in attempts; try again in ${wait} seconds`,
              {
                "retry-after": wait
              }
            )
          )
        }
        case "StorageError":
          return yield* Effect.fail(e)
      }
    }
    // A new session id at sign-in: an id planted before it is worth nothing after
    const user = signedIn.right
    const fresh = yield* Session.regenerate(Option.some(session), {
      userId: user.userId,
      username: user.username
    })
    const setCookie = yield* saveSession(req, fresh)
    // The browser becomes a trusted device of this user (unless it already is one)
    const { issuer } = yield* Config
    const deviceCookie =
      device === null
        ? yield* Session.deviceCookie(user.username, {
            path: cookiePath(req),
            secure: issuer.startsWith("https:")
          })
        : null
    return { view: View.Redirect({ status: 303, location: again }), setCookie, deviceCookie }
  })

/** POST of the consent form. */
const consentPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { params, session, rawQuery } = yield* continueForm(req, () => "consent")
    const layout = Authorize.layout(rawQuery)
    const setCookie = yield* saveSession(req, session)
    const decision = params.decision
    if (decision !== "allow" && decision !== "deny") {
      return answer(errorPage(layout, 400, "invalid_request", "choose Allow or Deny"), setCookie)
    }
    // Validated again: the application or its redirect URIs may have changed since the page was shown
    const ar = yield* validated(rawQuery, 303)
    const user = yield* currentUser(Option.some(session))
    if (Option.isNone(user)) return answer(forbidden(layout), setCookie)
    const { issuer } = yield* Config
    const location =
      decision === "deny"
        ? Authorize.reject(ar, issuer, "access_denied", "the user denied the request")
        : yield* Authorize.approve(ar, user.value.userId as string)
    return answer(View.Redirect({ status: 303, location }), setCookie)
  })

const route = (
  req: PageRequest,
  page: "authorize" | "login"
): Effect.Effect<PageResponse, Early | StorageError, Requirements | Audit.RequestInfo> => {
  if (page === "login") {
    return req.method === "POST"
      ? signInPost(req)
      : Effect.succeed(answer(refused(Authorize.layout(req.query), Http.methodNotAllowed("POST"))))
  }
  switch (req.method) {
    case "GET":
    case "HEAD":
      return authorizeGet(req)
    case "POST":
      return consentPost(req)
    default:
      return Effect.succeed(
        answer(refused(Authorize.layout(req.query), Http.methodNotAllowed("GET, HEAD, POST")))
      )
  }
}

/**
 * Answer a request to the authorize endpoint or the sign-in form. Never fails:
 * a store that cannot answer is a 503 page with Retry-After, a defect a 500 page
 * (its cause logged, never shown).
 */
export const handle = (req: PageRequest): Effect.Effect<PageResponse, never, Requirements> => {
  const page = pageOf(req.path)
  if (Option.isNone(page)) {
    return Effect.succeed(answer(errorPage(Authorize.layout(req.query), 404, "invalid_request", "not found")))
  }
  return route(req, page.value).pipe(
    Effect.catchTag("Early", (e) => Effect.succeed(e.response)),
    Effect.catchTag("StorageError", (_: StorageError) =>
      Effect.succeed(answer(unavailable(Authorize.layout(req.query))))
    ),
    Effect.catchAllCause((cause) =>
      Effect.logError("unexpected failure", Cause.pretty(cause)).pipe(
        Effect.as(
          answer(
            errorPage(
              Authorize.layout(req.query),
              Http.serverError.status,
              Http.serverError.error,
              Http.serverError.description
            )
          )
        )
      )
    ),
    Effect.withSpan(`Interaction.${page.value}`, { captureStackTrace: false }),
    Effect.provideService(Audit.RequestInfo, {
      requestId: req.requestId ?? null,
      address: req.remoteAddress ?? null
    })
  )
}

/**
 * The authorize interaction: the authorize endpoint (GET and HEAD), the consent
 * form (POST to the same path), the sign-in form, and the consents page where a
 * user sees and withdraws what they have allowed, as one route from a plain
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
 *
 * Views carry stable codes (`SignInProblem`, `Problem`) and the reader's
 * `ui_locales`, never English sentences meant for the page: the binding writes
 * the page in the reader's language. The `description` of an error stays English,
 * for the JSON answer to a client that asks for JSON.
 */
import { Data, Effect, Either, Option } from "effect"
import * as Admin from "../admin/Admin.js"
import type { HttpRequest, Refusal, Requirements } from "../http/Http.js"
import * as Http from "../http/Http.js"
import * as Paths from "../http/Paths.js"
import { Config } from "../model/Config.js"
import type { Code, TemporarilyUnavailable } from "../model/OAuthError.js"
import type * as Scope from "../model/Scope.js"
import { isDisabled } from "../model/User.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Metadata from "../oauth/Metadata.js"
import * as Form from "../oauth/requests/Form.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Accounts from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import * as Session from "../security/Session.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { ConsentStore } from "../storage/ConsentStore.js"
import type { Step } from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { UserStore } from "../storage/UserStore.js"
import * as Locale from "./Locale.js"

/** Path of the consents page, relative to the mount path: `Paths.consents`. */
export const consentsPath = Paths.consents

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

/** Why the sign-in form is shown again. */
export type SignInProblem = "missing_fields" | "bad_credentials"

/** A failed sign-in: what went wrong, and the username to fill in again. */
export interface SignInError {
  readonly problem: SignInProblem
  readonly username: string
}

/**
 * Why an error page is shown, as a stable code with what its explanation needs; the
 * binding explains it in the reader's language.
 */
export type Problem =
  | { readonly reason: Authorize.ErrorPageReason }
  | { readonly reason: "request_too_long"; readonly limit: number }
  | { readonly reason: "rate_limited"; readonly seconds: number }
  | {
      readonly reason:
        | "form_expired"
        | "bad_form"
        | "no_decision"
        | "unavailable"
        | "server_error"
        | "not_found"
        | "method_not_allowed"
    }

/**
 * A safe way back from an error page: a same-origin path that starts again, either the
 * authorize request (validated again when followed) or the consents page.
 */
export interface WayBack {
  readonly to: "request" | "consents"
  readonly href: string
}

/** One application a user has authorised, as the consents page lists it. */
export interface Authorised {
  readonly appKey: string
  readonly appName: string
  readonly scope: Scope.ScopeSet
  /** Epoch seconds of the last grant that added to the consent. */
  readonly grantedAt: number
}

/** What the page for an answer shows; the binding renders it. */
export type View = Data.TaggedEnum<{
  /**
   * Send the browser on: 302 from GET, 303 from a form POST. `error` is the code an error
   * redirect to the client carries in `location`, as a value (for metrics; never written).
   */
  Redirect: { readonly status: 302 | 303; readonly location: string; readonly error?: Code }
  /** HEAD of a valid page request: the page's status and headers, no body, nothing stored. */
  Head: { readonly formTargets: ReadonlyArray<string> }
  /** The sign-in page (400 when it shows an error). */
  SignIn: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    /** The request's `ui_locales`, first choice first. */
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly redirectHost: string
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly error: Option.Option<SignInError>
    readonly formTargets: ReadonlyArray<string>
  }
  /** The consent page, with a "Not you?" form that signs in as someone else. */
  Consent: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly appName: string
    readonly redirectHost: string
    readonly username: string
    readonly scope: Scope.ScopeSet
    readonly action: string
    readonly switchAction: string
    /** The consents page, where a consent can be withdrawn later. */
    readonly consentsHref: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /** The consents page for nobody signed in: a sign-in form that comes back to it. */
  ConsentsSignIn: {
    readonly status: 200 | 400
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly error: Option.Option<SignInError>
    readonly formTargets: ReadonlyArray<string>
  }
  /**
   * The consents page of a signed-in user: each authorised application with a Withdraw
   * button (`action=withdraw`, `app_key`), and Sign out (`action=signout`); every form
   * carries the same good-once ticket.
   */
  Consents: {
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    readonly username: string
    readonly consents: ReadonlyArray<Authorised>
    /** The application whose consent this browser has just withdrawn, by name. */
    readonly withdrawn: Option.Option<string>
    readonly action: string
    readonly ticket: Session.FormTicket
    readonly formTargets: ReadonlyArray<string>
  }
  /** An error shown to the user (or as JSON to a client that asks for it), never sent to the client's redirect URI. */
  ErrorPage: {
    readonly status: number
    readonly layout: Authorize.ClientType
    readonly uiLocales: ReadonlyArray<string>
    /** The OAuth error code, shown small on the page and sent as `error` in JSON. */
    readonly error: string
    /** A technical description in English, sent as `error_description` in JSON. */
    readonly description: string
    /** What the page explains to the user. */
    readonly problem: Problem
    /** A link to start again, when there is a safe one. */
    readonly back: Option.Option<WayBack>
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

/** The pages, by what they serve. */
export type Page = "authorize" | "login" | "consents"

/** Which page a path names, relative to the mount path; none for other paths. */
export const pageOf = (path: string): Option.Option<Page> =>
  path === Metadata.paths.authorize
    ? Option.some("authorize")
    : path === Metadata.paths.login
      ? Option.some("login")
      : path === consentsPath
        ? Option.some("consents")
        : Option.none()

/** The `ui_locales` of a query string, first choice first; none when the query cannot be read. */
export const uiLocalesOf = (query: string): ReadonlyArray<string> =>
  Either.match(Form.parse(query), {
    onLeft: () => [],
    onRight: (params) => Locale.parseUiLocales(params.ui_locales)
  })

type ErrorPage = Extract<View, { _tag: "ErrorPage" }>

/** What every page of an answer shares: the layout, the reader's languages and a way back. */
interface Frame {
  readonly layout: Authorize.ClientType
  readonly uiLocales: ReadonlyArray<string>
  readonly back: Option.Option<WayBack>
}

/** The frame of a page answering a request with this query. */
const frameOf = (query: string, back: Option.Option<WayBack> = Option.none()): Frame => ({
  layout: Authorize.layout(query),
  uiLocales: uiLocalesOf(query),
  back
})

const errorPage = (
  frame: Frame,
  status: number,
  error: string,
  description: string,
  problem: Problem,
  headers: Readonly<Record<string, string>> = {}
): ErrorPage =>
  View.ErrorPage({
    status,
    layout: frame.layout,
    uiLocales: frame.uiLocales,
    error,
    description,
    problem,
    back: frame.back,
    headers
  })

const refused = (frame: Frame, r: Refusal): ErrorPage =>
  errorPage(
    frame,
    r.status,
    "invalid_request",
    r.description,
    {
      reason: r.status === 405 ? "method_not_allowed" : "bad_form"
    },
    r.headers
  )

const unavailable = (frame: Frame, e: TemporarilyUnavailable = Http.unavailable): ErrorPage =>
  errorPage(
    frame,
    e.status,
    e.error,
    e.description,
    { reason: "unavailable" },
    { "retry-after": String(Math.max(1, Math.ceil(e.retryAfter))) }
  )

const serverError = (frame: Frame): ErrorPage =>
  errorPage(frame, Http.serverError.status, Http.serverError.error, Http.serverError.description, {
    reason: "server_error"
  })

const forbidden = (frame: Frame): ErrorPage =>
  errorPage(
    frame,
    403,
    "access_denied",
    "this form has expired or was not sent from this site; go back to the application and start signing in again",
    { reason: "form_expired" }
  )

const rateLimited = (frame: Frame, retryAfter: number): ErrorPage => {
  const seconds = Math.max(1, Math.ceil(retryAfter))
  return errorPage(
    frame,
    429,
    "temporarily_unavailable",
    `too many failed sign-in attempts; try again in ${seconds} seconds`,
    { reason: "rate_limited", seconds },
    { "retry-after": String(seconds) }
  )
}

const answer = (view: View, setCookie: string | null = null): PageResponse => ({ view, setCookie })

/** A view that ends the request early, carried on the failure channel. */
class Early extends Data.TaggedError("Early")<{ readonly response: PageResponse }> {}
const early = (view: View, setCookie: string | null = null) =>
  Effect.fail(new Early({ response: answer(view, setCookie) }))

/** Validate an authorize query; an invalid one ends the request with its page or redirect. */
const validated = (query: string, status: 302 | 303) =>
  Authorize.validate(query).pipe(
    Effect.catchTags({
      ErrorPage: (e) =>
        early(errorPage(frameOf(query), e.status, e.error, e.description, { reason: e.reason })),
      ErrorRedirect: (e) => early(View.Redirect({ status, location: e.location, error: e.error }))
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

/**
 * The session's user, if the account still exists and is enabled; a vanished or disabled
 * user leaves the session anonymous.
 */
const currentUser = (session: Option.Option<Session.Session>) =>
  Effect.gen(function* () {
    if (Option.isNone(session) || session.value.userId === null) return Option.none<Session.Session>()
    const userId = session.value.userId
    const found = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
    return Option.isSome(found) && !isDisabled(found.value) ? session : Option.none<Session.Session>()
  })

/** The session to continue anonymously: a session whose user vanished keeps its id until sign-in. */
const anonymousOf = (session: Option.Option<Session.Session>) =>
  Option.isSome(session)
    ? Effect.succeed<Session.Session>({
        ...session.value,
        userId: null,
        username: null,
        authenticatedAt: null
      })
    : Session.fresh

/** The `ui_locales` and `client_type` of a query, as the consents page keeps them in its own links. */
const viewQuery = (layout: Authorize.ClientType, uiLocales: ReadonlyArray<string>): string =>
  [
    ...(layout === "Mobile" ? ["client_type=Mobile"] : []),
    ...(uiLocales.length > 0 ? [`ui_locales=${encodeURIComponent(uiLocales.join(" "))}`] : [])
  ].join("&")

/** The consents page's address for this layout and these languages. */
const consentsHref = (req: PageRequest, layout: Authorize.ClientType, uiLocales: ReadonlyArray<string>) => {
  const q = viewQuery(layout, uiLocales)
  return `${req.basePath}${consentsPath}${q === "" ? "" : `?${q}`}`
}

const signInPage = (
  req: PageRequest,
  session: Session.Session,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string,
  status: 200 | 400,
  error: Option.Option<SignInError> = Option.none()
) =>
  Effect.gen(function* () {
    const ticket = yield* Session.addPending(session, rawQuery, "login")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.SignIn({
        status,
        layout: ar.clientType,
        uiLocales: uiLocalesOf(rawQuery),
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
    const uiLocales = uiLocalesOf(rawQuery)
    return answer(
      View.Consent({
        layout: ar.clientType,
        uiLocales,
        appName: ar.app.name,
        redirectHost: new URL(ar.redirectUri).host,
        username: session.username ?? "",
        scope: ar.scope,
        action: req.basePath + Metadata.paths.authorize,
        switchAction: req.basePath + Metadata.paths.login,
        consentsHref: consentsHref(req, ar.clientType, uiLocales),
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
  "code_challenge_method",
  "ui_locales"
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

/** The authorize request again, as a same-origin path: where a page of its flow starts over. */
const requestAgain = (req: PageRequest, rawQuery: string): WayBack => ({
  to: "request",
  href: `${req.basePath}${Metadata.paths.authorize}?${rawQuery}`
})

/** GET or HEAD of the authorize endpoint. */
const authorizeGet = (req: PageRequest) =>
  Effect.gen(function* () {
    if (req.query.length > maxAuthorizeQuery) {
      const description = `the authorization request is longer than ${maxAuthorizeQuery} characters`
      return answer(
        errorPage(frameOf(req.query), 414, "invalid_request", description, {
          reason: "request_too_long",
          limit: maxAuthorizeQuery
        })
      )
    }
    const ar = yield* validated(req.query, 302)
    if (req.method === "HEAD") return answer(View.Head({ formTargets: formTargets(ar) }))
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    const user = yield* currentUser(session)
    if (Option.isNone(user)) {
      // A session whose user vanished continues anonymous, under the same id until sign-in
      return yield* signInPage(req, yield* anonymousOf(session), ar, storedQuery(req.query), 200)
    }
    const userId = user.value.userId as string
    if (yield* Authorize.hasConsent(ar, userId)) {
      return answer(View.Redirect({ status: 302, ...(yield* Authorize.approveRedirect(ar, userId)) }))
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

/**
 * Read a page form and take the pending request it continues: anything wrong ends the
 * request. The authorize flow's forms continue an authorize request; the consents page's
 * continue the page itself (an empty query), and neither is accepted for the other.
 */
const continueForm = (
  req: PageRequest,
  frame: Frame,
  page: "flow" | "consents",
  step: (params: Record<string, string>) => Step
) =>
  Effect.gen(function* () {
    const params = yield* Either.match(Http.readForm(req), {
      onLeft: (r) => early(refused(frame, r)),
      onRight: Effect.succeed
    })
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    if (Option.isNone(session) || (yield* crossSite(req))) return yield* early(forbidden(frame))
    const pending = yield* Session.takePending(session.value, params.txn, params.csrf_token, step(params))
    if (Option.isNone(pending) || (pending.value.rawQuery === "") !== (page === "consents")) {
      return yield* early(forbidden(frame))
    }
    return { params, session: session.value, rawQuery: pending.value.rawQuery }
  })

/** What checking a sign-in form's username and password came to. */
type SignInOutcome =
  | { readonly _tag: "Refused"; readonly error: SignInError }
  | { readonly _tag: "Throttled"; readonly retryAfter: number }
  | { readonly _tag: "Busy"; readonly error: TemporarilyUnavailable }
  | { readonly _tag: "SignedIn"; readonly setCookie: string; readonly deviceCookie: string | null }

const outcome = (o: SignInOutcome): SignInOutcome => o

const refusedSignIn = (problem: SignInProblem, username: string): SignInOutcome =>
  outcome({ _tag: "Refused", error: { problem, username } })

/**
 * Check a sign-in form's username and password (throttled, as the password grant, by
 * `Accounts.authenticate`); on success the session gets a new id, and the browser becomes
 * a trusted device of the user unless it already is one.
 */
const passwordSignIn = (req: PageRequest, session: Session.Session, params: Record<string, string>) =>
  Effect.gen(function* () {
    const username = params.username ?? ""
    const password = params.password ?? ""
    if (username === "" || password === "") return refusedSignIn("missing_fields", username)
    const cookies = Http.header(req, "cookie") ?? undefined
    const signedIn = yield* Effect.either(
      Accounts.authenticate(username, password, req.remoteAddress, { _tag: "Page", cookies })
    )
    if (Either.isLeft(signedIn)) {
      const e = signedIn.left
      switch (e._tag) {
        case "InvalidGrant":
          // A username that is not plain text is refused like any other and never shown again
          return refusedSignIn("bad_credentials", isPlainText(username) ? username : "")
        case "RateLimited":
          return outcome({ _tag: "Throttled", retryAfter: e.retryAfter })
        case "TemporarilyUnavailable":
          return outcome({ _tag: "Busy", error: e })
        case "StorageError":
          return yield* Effect.fail(e)
      }
    }
    const user = signedIn.right
    const { issuer } = yield* Config
    const stored = yield* Session.signIn(session, user, {
      path: cookiePath(req),
      secure: issuer.startsWith("https:")
    })
    // D16: disabled, deleted or given a new password since the check: the answer of a wrong password
    if (Option.isNone(stored)) {
      yield* Audit.record("signin_failed", { userId: user.userId, detail: "account changed during sign-in" })
      return refusedSignIn("bad_credentials", username)
    }
    const setCookie = stored.value
    const trusted = yield* Session.trustedDevice(cookies, user)
    const deviceCookie = Option.isNone(trusted)
      ? yield* Session.deviceCookie(user, { path: cookiePath(req), secure: issuer.startsWith("https:") })
      : null
    return outcome({ _tag: "SignedIn", setCookie, deviceCookie })
  })

/** POST of the sign-in form, or of "Not you?" on the consent page. */
const signInPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { params, session, rawQuery } = yield* continueForm(req, frameOf(""), "flow", (p) =>
      p.switch_account !== undefined ? "consent" : "login"
    )
    const ar = yield* validated(rawQuery, 303)
    const again = requestAgain(req, rawQuery)
    if (params.switch_account !== undefined) {
      const anonymous = yield* Session.regenerate(Option.some(session), null)
      return answer(View.Redirect({ status: 303, location: again.href }), yield* saveSession(req, anonymous))
    }
    const outcome = yield* passwordSignIn(req, session, params)
    switch (outcome._tag) {
      case "Refused":
        return yield* signInPage(req, session, ar, rawQuery, 400, Option.some(outcome.error))
      case "Throttled":
        return answer(rateLimited(frameOf(rawQuery, Option.some(again)), outcome.retryAfter))
      case "Busy":
        return answer(unavailable(frameOf(rawQuery, Option.some(again)), outcome.error))
      case "SignedIn":
        return {
          view: View.Redirect({ status: 303, location: again.href }),
          setCookie: outcome.setCookie,
          deviceCookie: outcome.deviceCookie
        }
    }
  })

/** POST of the consent form. */
const consentPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { params, session, rawQuery } = yield* continueForm(req, frameOf(""), "flow", () => "consent")
    const setCookie = yield* saveSession(req, session)
    const decision = params.decision
    if (decision !== "allow" && decision !== "deny") {
      const frame = frameOf(rawQuery, Option.some(requestAgain(req, rawQuery)))
      return answer(
        errorPage(frame, 400, "invalid_request", "choose Allow or Deny", { reason: "no_decision" }),
        setCookie
      )
    }
    // Validated again: the application or its redirect URIs may have changed since the page was shown
    const ar = yield* validated(rawQuery, 303)
    const user = yield* currentUser(Option.some(session))
    if (Option.isNone(user)) return answer(forbidden(frameOf(rawQuery)), setCookie)
    const { issuer } = yield* Config
    const redirect =
      decision === "deny"
        ? Authorize.rejectRedirect(ar, issuer, "access_denied", "the user denied the request")
        : yield* Authorize.approveRedirect(ar, user.value.userId as string)
    return answer(View.Redirect({ status: 303, ...redirect }), setCookie)
  })

/** The layout, languages and own address of a consents page request. */
const consentsFrame = (req: PageRequest) => {
  const layout = Authorize.layout(req.query)
  const uiLocales = uiLocalesOf(req.query)
  const href = consentsHref(req, layout, uiLocales)
  const back: WayBack = { to: "consents", href }
  return { layout, uiLocales, back: Option.some(back), href }
}

const withdrawnKey = (serverKey: string) => `${serverKey}\u0000latchkey-consent-withdrawn`

/** The mark, tied to this session, that its browser has just withdrawn the consent to `appKey`. */
const withdrawnMark = (session: Session.Session, appKey: string) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    Effect.map(hmac(withdrawnKey(serverKey), `${session.id}\u0000${appKey}`), (sig) => `${appKey}.${sig}`)
  )

/**
 * The App Key the `withdrawn` parameter of a consents page query names, if this session made
 * the mark: a link from elsewhere cannot make the page claim a withdrawal.
 */
const readWithdrawnMark = (session: Session.Session, query: string) =>
  Effect.gen(function* () {
    const mark = Either.getOrNull(Form.parse(query))?.withdrawn
    const dot = mark?.lastIndexOf(".") ?? -1
    if (mark === undefined || dot <= 0 || mark.length > 512) return Option.none<string>()
    const appKey = mark.slice(0, dot)
    return timingSafeEqual(mark, yield* withdrawnMark(session, appKey))
      ? Option.some(appKey)
      : Option.none<string>()
  })

const consentsSignInPage = (
  req: PageRequest,
  session: Session.Session,
  status: 200 | 400,
  error: Option.Option<SignInError> = Option.none()
) =>
  Effect.gen(function* () {
    const frame = consentsFrame(req)
    // An empty query: this ticket continues the consents page, never an authorize request
    const ticket = yield* Session.addPending(session, "", "login")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.ConsentsSignIn({
        status,
        layout: frame.layout,
        uiLocales: frame.uiLocales,
        action: frame.href,
        ticket,
        error,
        formTargets: ["'self'"]
      }),
      setCookie
    )
  })

const consentsListPage = (req: PageRequest, session: Session.Session) =>
  Effect.gen(function* () {
    const frame = consentsFrame(req)
    const userId = session.userId as string
    const apps = yield* ApplicationStore
    const given = yield* Effect.flatMap(ConsentStore, (c) => c.list(userId))
    const consents: Array<Authorised> = []
    for (const consent of given) {
      const app = yield* apps.find(consent.appKey)
      // A consent outlives no application: one whose application is gone is not listed
      if (Option.isSome(app)) {
        consents.push({
          appKey: consent.appKey,
          appName: app.value.name,
          scope: consent.scope,
          grantedAt: consent.updatedAt
        })
      }
    }
    const marked = yield* readWithdrawnMark(session, req.query)
    const withdrawn =
      Option.isSome(marked) && !consents.some((c) => c.appKey === marked.value)
        ? Option.map(yield* apps.find(marked.value), (app) => app.name)
        : Option.none<string>()
    const ticket = yield* Session.addPending(session, "", "consent")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.Consents({
        layout: frame.layout,
        uiLocales: frame.uiLocales,
        username: session.username ?? "",
        consents,
        withdrawn,
        action: frame.href,
        ticket,
        formTargets: ["'self'"]
      }),
      setCookie
    )
  })

/** GET or HEAD of the consents page. */
const consentsGet = (req: PageRequest) =>
  Effect.gen(function* () {
    if (req.method === "HEAD") return answer(View.Head({ formTargets: ["'self'"] }))
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    const user = yield* currentUser(session)
    if (Option.isNone(user)) return yield* consentsSignInPage(req, yield* anonymousOf(session), 200)
    return yield* consentsListPage(req, user.value)
  })

/** Withdraw the user's consent to an application, revoking its tokens; the audit event commits with it. */
const withdraw = (req: PageRequest, userId: string, appKey: string) =>
  Admin.withdrawConsentOf(userId, appKey).pipe(
    Effect.provideService(Audit.RequestInfo, {
      requestId: req.requestId ?? null,
      address: req.remoteAddress ?? null,
      actor: "user"
    })
  )

/** POST of a consents page form: sign in, withdraw a consent, or sign out. */
const consentsPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const frame = consentsFrame(req)
    const { params, session } = yield* continueForm(req, frame, "consents", (p) =>
      p.action === "signin" ? "login" : "consent"
    )
    const back = (setCookie: string | null, location = frame.href) =>
      answer(View.Redirect({ status: 303, location }), setCookie)
    if (params.action === "signin") {
      const outcome = yield* passwordSignIn(req, session, params)
      if (outcome._tag === "Refused") {
        return yield* consentsSignInPage(req, session, 400, Option.some(outcome.error))
      }
      if (outcome._tag === "Throttled") return answer(rateLimited(frame, outcome.retryAfter))
      if (outcome._tag === "Busy") return answer(unavailable(frame, outcome.error))
      return { ...back(outcome.setCookie), deviceCookie: outcome.deviceCookie }
    }
    if (params.action === "withdraw") {
      const user = yield* currentUser(Option.some(session))
      // Signed out (or disabled) since the page was shown: the page asks to sign in
      if (Option.isNone(user)) return back(null)
      const appKey = params.app_key ?? ""
      // docs/security.md T13: no list on the page has such an App Key; the form is refused before any store
      if (!isPlainText(appKey)) {
        return answer(errorPage(frame, 400, "invalid_request", "unknown application", { reason: "bad_form" }))
      }
      const setCookie = yield* saveSession(req, user.value)
      if (!(yield* withdraw(req, user.value.userId as string, appKey))) return back(setCookie)
      const mark = yield* withdrawnMark(user.value, appKey)
      const sep = frame.href.includes("?") ? "&" : "?"
      return back(setCookie, `${frame.href}${sep}withdrawn=${encodeURIComponent(mark)}`)
    }
    if (params.action === "signout") {
      const anonymous = yield* Session.regenerate(Option.some(session), null)
      return back(yield* saveSession(req, anonymous))
    }
    return answer(errorPage(frame, 400, "invalid_request", "unknown action", { reason: "bad_form" }))
  })

const route = (
  req: PageRequest,
  page: Page
): Effect.Effect<PageResponse, Early | StorageError, Requirements | Audit.RequestInfo> => {
  switch (page) {
    case "login":
      return req.method === "POST"
        ? signInPost(req)
        : Effect.succeed(answer(refused(frameOf(req.query), Http.methodNotAllowed("POST"))))
    case "consents":
      switch (req.method) {
        case "GET":
        case "HEAD":
          return consentsGet(req)
        case "POST":
          return consentsPost(req)
        default:
          return Effect.succeed(answer(refused(consentsFrame(req), Http.methodNotAllowed("GET, HEAD, POST"))))
      }
    case "authorize":
      switch (req.method) {
        case "GET":
        case "HEAD":
          return authorizeGet(req)
        case "POST":
          return consentPost(req)
        default:
          return Effect.succeed(answer(refused(frameOf(req.query), Http.methodNotAllowed("GET, HEAD, POST"))))
      }
  }
}

/**
 * The frame of a page that failed unexpectedly: a GET of the authorize endpoint or the
 * consents page may simply be tried again.
 */
const failureFrame = (req: PageRequest, page: Page): Frame => {
  if (page === "consents") return consentsFrame(req)
  const retry =
    page === "authorize" && req.method === "GET" && req.query.length <= maxAuthorizeQuery
      ? Option.some(requestAgain(req, storedQuery(req.query)))
      : Option.none<WayBack>()
  return frameOf(req.query, retry)
}

/**
 * Answer a request to the authorize endpoint, the sign-in form or the consents page. Never
 * fails: a store that cannot answer is a 503 page with Retry-After, a defect a 500 page
 * (its cause logged, never shown).
 */
export const handle = (req: PageRequest): Effect.Effect<PageResponse, never, Requirements> => {
  const page = pageOf(req.path)
  if (Option.isNone(page)) {
    return Effect.succeed(
      answer(errorPage(frameOf(req.query), 404, "invalid_request", "not found", { reason: "not_found" }))
    )
  }
  return Http.settle(
    Effect.catchTag(route(req, page.value), "Early", (e) => Effect.succeed(e.response))
  ).pipe(
    Effect.catchTags({
      TemporarilyUnavailable: (e) => Effect.succeed(answer(unavailable(failureFrame(req, page.value), e))),
      ServerError: () => Effect.succeed(answer(serverError(failureFrame(req, page.value))))
    }),
    Effect.withSpan(`Interaction.${page.value}`, { captureStackTrace: false }),
    Effect.provideService(Audit.RequestInfo, {
      requestId: req.requestId ?? null,
      address: req.remoteAddress ?? null
    })
  )
}

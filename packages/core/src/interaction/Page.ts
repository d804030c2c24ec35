/**
 * What every page of the browser flow shares: the frame and error pages, the early end of a
 * request, the session cookie, and reading a page form that continues a pending request.
 */
import { Data, Effect, Either, Option } from "effect"
import type { Refusal } from "../http/Http.js"
import * as Http from "../http/Http.js"
import * as Paths from "../http/Paths.js"
import { Config } from "../model/Config.js"
import type { TemporarilyUnavailable } from "../model/OAuthError.js"
import { isDisabled } from "../model/User.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Metadata from "../oauth/Metadata.js"
import * as Form from "../oauth/requests/Form.js"
import * as Audit from "../security/Audit.js"
import * as Session from "../security/Session.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { WebAuthn } from "../services/WebAuthn.js"
import type { Step } from "../storage/SessionStore.js"
import { UserStore } from "../storage/UserStore.js"
import { ticketOf } from "./Forms.js"
import * as Locale from "./Locale.js"
import {
  type Page,
  type PageRequest,
  type PageResponse,
  type PasskeyPage,
  type Problem,
  View,
  type WayBack
} from "./View.js"

/** Path of the consents page, relative to the mount path: `Paths.consents`. */
export const consentsPath = Paths.consents

/** Path of the account page, relative to the mount path: `Paths.account`. */
export const accountPath = Paths.account

/** Where the sign-in page's "Sign in with a passkey" posts, when the server has passkeys (a `WebAuthn` service). */
export const passkeyActions = (req: PageRequest) =>
  Effect.map(Effect.serviceOption(WebAuthn), (w) =>
    Option.isNone(w)
      ? {}
      : {
          passkey: {
            challenge: req.basePath + Paths.passkeys.challenge,
            login: req.basePath + Paths.passkeys.login
          }
        }
  )

const pages: ReadonlyArray<readonly [string, Page | PasskeyPage]> = [
  [Metadata.paths.authorize, "authorize"],
  [Metadata.paths.login, "login"],
  [consentsPath, "consents"],
  [Metadata.paths.logout, "logout"],
  [accountPath, "account"],
  [Paths.passkeys.challenge, "passkeyChallenge"],
  [Paths.passkeys.login, "passkeyLogin"],
  [Paths.passkeys.account, "passkeys"]
]

/** Which page a path names, relative to the mount path; none for other paths. */
export const pageOf = (path: string): Option.Option<Page | PasskeyPage> =>
  Option.map(Option.fromNullable(pages.find(([p]) => p === path)), ([, page]) => page)

/** The `ui_locales` of a query string, first choice first; none when the query cannot be read. */
export const uiLocalesOf = (query: string): ReadonlyArray<string> =>
  Either.match(Form.parse(query), {
    onLeft: () => [],
    onRight: (params) => Locale.parseUiLocales(params.ui_locales)
  })

/** The error page view. */
export type ErrorPage = Extract<View, { _tag: "ErrorPage" }>

/** What every page of an answer shares: the layout, the reader's languages and a way back. */
export interface Frame {
  readonly layout: Authorize.ClientType
  readonly uiLocales: ReadonlyArray<string>
  readonly back: Option.Option<WayBack>
}

/** The frame of a page answering a request with this query. */
export const frameOf = (query: string, back: Option.Option<WayBack> = Option.none()): Frame => ({
  layout: Authorize.layout(query),
  uiLocales: uiLocalesOf(query),
  back
})

/** An error page in this frame. */
export const errorPage = (
  frame: Frame,
  status: number,
  error: string,
  description: string,
  problem: Problem,
  headers: Readonly<Record<string, string>> = {},
  received: Option.Option<string> = Option.none()
): ErrorPage =>
  View.ErrorPage({
    status,
    layout: frame.layout,
    uiLocales: frame.uiLocales,
    error,
    description,
    problem,
    back: frame.back,
    received,
    headers
  })

/** The page of a request refused before any rule ran (`Http.Refusal`): 405, or a malformed form. */
export const refused = (frame: Frame, r: Refusal): ErrorPage =>
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

/** The page of a store that cannot answer: 503 with Retry-After. */
export const unavailable = (frame: Frame, e: TemporarilyUnavailable = Http.unavailable): ErrorPage =>
  errorPage(
    frame,
    e.status,
    e.error,
    e.description,
    { reason: "unavailable" },
    { "retry-after": String(Math.max(1, Math.ceil(e.retryAfter))) }
  )

/** The page of an unexpected failure: 500, its cause never shown. */
export const serverError = (frame: Frame): ErrorPage =>
  errorPage(frame, Http.serverError.status, Http.serverError.error, Http.serverError.description, {
    reason: "server_error"
  })

/** The page of a form whose ticket, CSRF token, session or origin is not valid: 403. */
export const forbidden = (frame: Frame): ErrorPage =>
  errorPage(
    frame,
    403,
    "access_denied",
    "this form has expired or was not sent from this site; go back to the application and start signing in again",
    { reason: "form_expired" }
  )

/** The page of too many failed sign-ins: 429 with Retry-After. */
export const rateLimited = (frame: Frame, retryAfter: number): ErrorPage => {
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

/** A page response: the view and the session cookie to set, if any. */
export const answer = (view: View, setCookie: string | null = null): PageResponse => ({ view, setCookie })

/** A view that ends the request early, carried on the failure channel. */
export class Early extends Data.TaggedError("Early")<{ readonly response: PageResponse }> {}
/** End the request early with this view. */
export const early = (view: View, setCookie: string | null = null) =>
  Effect.fail(new Early({ response: answer(view, setCookie) }))

/** Validate an authorize query; an invalid one ends the request with its page or redirect. */
export const validated = (query: string, status: 302 | 303) =>
  Authorize.validate(query).pipe(
    Effect.catchTags({
      ErrorPage: (e) =>
        early(
          errorPage(
            frameOf(query),
            e.status,
            e.error,
            e.description,
            { reason: e.reason },
            {},
            Option.fromNullable(e.received)
          )
        ),
      ErrorRedirect: (e) => early(View.Redirect({ status, location: e.location, error: e.error }))
    })
  )

/**
 * Where the form of a page may send the browser: this site and the client's redirect URI, by its
 * origin, or by its scheme (`com.example.app:`) when it has none (a private-use scheme).
 */
export const formTargets = (ar: Authorize.AuthorizationRequest): ReadonlyArray<string> =>
  formTargetsOf(ar.redirectUri)

/** `formTargets` of a form whose answer redirects to `uri` (a registered, valid URI). */
export const formTargetsOf = (uri: string): ReadonlyArray<string> => {
  const url = new URL(uri)
  return ["'self'", url.host === "" ? url.protocol : url.origin]
}

/** Where the pages say the browser goes back to: the redirect URI's host, or its scheme when it has none. */
export const redirectHost = (ar: Authorize.AuthorizationRequest): string => {
  const url = new URL(ar.redirectUri)
  return url.host === "" ? url.protocol.slice(0, -1) : url.host
}

/** The session cookie's path: it goes only to the endpoint paths, the authorize endpoint's folder. */
export const cookiePath = (req: PageRequest) =>
  req.basePath + Metadata.paths.authorize.slice(0, Metadata.paths.authorize.lastIndexOf("/"))

/** The session's cookie for this request: its path, and Secure under an https issuer. */
export const cookieOf = (req: PageRequest) =>
  Effect.map(Config, ({ issuer }) => ({ path: cookiePath(req), secure: issuer.startsWith("https:") }))

/** Saving the session, prepared (`Session.saving`): the write, and its `Set-Cookie` value. */
export const sessionSaving = (req: PageRequest, session: Session.Session) =>
  Effect.flatMap(cookieOf(req), (cookie) => Session.saving(session, cookie))

/** Save the session and return its `Set-Cookie` value. */
export const saveSession = (req: PageRequest, session: Session.Session) =>
  Effect.flatMap(cookieOf(req), (cookie) => Session.save(session, cookie))

/**
 * The session's user, if the account still exists and is enabled; a vanished or disabled
 * user leaves the session anonymous.
 */
export const currentUser = (session: Option.Option<Session.Session>) =>
  Effect.gen(function* () {
    if (Option.isNone(session) || session.value.userId === null) return Option.none<Session.Session>()
    const userId = session.value.userId
    const found = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
    return Option.isSome(found) && !isDisabled(found.value) ? session : Option.none<Session.Session>()
  })

/** The session to continue anonymously: a session whose user vanished keeps its id until sign-in. */
export const anonymousOf = (session: Option.Option<Session.Session>) =>
  Option.isSome(session)
    ? Effect.succeed<Session.Session>({
        id: session.value.id,
        idHash: session.value.idHash,
        stored: session.value.stored,
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

/** The address of one of the user's own pages (`path`: the consents or account page) for this layout and these languages. */
export const ownPageHref = (
  req: PageRequest,
  path: string,
  layout: Authorize.ClientType,
  uiLocales: ReadonlyArray<string>
) => {
  const q = viewQuery(layout, uiLocales)
  return `${req.basePath}${path}${q === "" ? "" : `?${q}`}`
}

/** The consents page's address for this layout and these languages. */
export const consentsHref = (
  req: PageRequest,
  layout: Authorize.ClientType,
  uiLocales: ReadonlyArray<string>
) => ownPageHref(req, consentsPath, layout, uiLocales)

/**
 * The frame of a request to one of the user's own pages (`to`: the consents or the account page):
 * its layout, languages, own address, and that address as the way back from its error pages.
 */
export const ownPageFrame = (req: PageRequest, to: "consents" | "account") => {
  const layout = Authorize.layout(req.query)
  const uiLocales = uiLocalesOf(req.query)
  const href = ownPageHref(req, to === "consents" ? consentsPath : accountPath, layout, uiLocales)
  const back: WayBack = { to, href }
  return { layout, uiLocales, back: Option.some(back), href }
}

/** The frame of one of the user's own pages. */
export type OwnPageFrame = ReturnType<typeof ownPageFrame>

const markKey = (serverKey: string, purpose: string) => `${serverKey}\u0000latchkey-${purpose}`

/**
 * A mark, tied to this session, that its browser has just done `value` (for `purpose`): what a
 * page's query carries after a form of it, so that a link from elsewhere cannot make the page
 * claim it.
 */
export const sessionMark = (session: Session.Session, purpose: string, value: string) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    Effect.map(hmac(markKey(serverKey, purpose), `${session.id}\u0000${value}`), (sig) => `${value}.${sig}`)
  )

/** The value the `param` parameter of a page query marks (`sessionMark`), if this session made the mark. */
export const readSessionMark = (session: Session.Session, query: string, param: string, purpose: string) =>
  Effect.gen(function* () {
    const mark = Either.getOrNull(Form.parse(query))?.[param]
    const dot = mark?.lastIndexOf(".") ?? -1
    if (mark === undefined || dot <= 0 || mark.length > 512) return Option.none<string>()
    const value = mark.slice(0, dot)
    return timingSafeEqual(mark, yield* sessionMark(session, purpose, value))
      ? Option.some(value)
      : Option.none<string>()
  })

/** `location` with the parameter `param` set to `value` (already encoded or plain text). */
export const withParam = (location: string, param: string, value: string) =>
  `${location}${location.includes("?") ? "&" : "?"}${param}=${encodeURIComponent(value)}`

/** Run `effect` with its audit events recorded as the signed-in user's own change (`actor: "user"`). */
export const asUser = <A, E, R>(req: PageRequest, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Audit.RequestInfo, {
    requestId: req.requestId ?? null,
    address: req.remoteAddress ?? null,
    actor: "user"
  })

/** Whether a form post comes from another site (Fetch Metadata, then `Origin`); the CSRF token is checked besides. */
export const crossSite = (req: PageRequest) =>
  Effect.map(Config, ({ issuer }) => {
    const site = Http.header(req, "sec-fetch-site")
    if (site === null || (site !== undefined && site !== "same-origin" && site !== "none")) return true
    const origin = Http.header(req, "origin")
    // Referrer-Policy: no-referrer makes browsers send `Origin: null` on same-origin posts
    if (origin === undefined || origin === "null") return false
    return origin !== new URL(issuer).origin && origin !== req.ownOrigin
  })

/**
 * Read a page form (decoded by `formOf`, once its ticket is read) and find the pending request it
 * continues: anything wrong with the ticket ends the request. `take` takes that request, or ends
 * the request as forbidden when another post of the form took it first: run it in the
 * transaction of what the form changes (`Transaction.atomically`), first. The authorize flow's
 * forms continue an authorize request; the consents and account pages' continue the page itself
 * (an empty query), and neither kind is accepted for the other.
 */
export const claimForm = <F>(
  req: PageRequest,
  frame: Frame,
  page: "flow" | "consents" | "account",
  formOf: (params: Form.Params) => F,
  step: (form: F) => Step
) =>
  Effect.gen(function* () {
    const params = yield* Either.match(Http.readForm(req), {
      onLeft: (r) => early(refused(frame, r)),
      onRight: Effect.succeed
    })
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    if (Option.isNone(session) || (yield* crossSite(req))) return yield* early(forbidden(frame))
    const ticket = ticketOf(params)
    if (Option.isNone(ticket)) return yield* early(forbidden(frame))
    const form = formOf(params)
    const { txn, csrf_token } = ticket.value
    const pending = yield* Session.claimPending(session.value, txn, csrf_token, step(form))
    if (Option.isNone(pending) || (pending.value.value.rawQuery === "") !== (page !== "flow")) {
      return yield* early(forbidden(frame))
    }
    const take = Effect.flatMap(pending.value.write, (taken) =>
      taken ? Effect.void : early(forbidden(frame))
    )
    const { rawQuery, createdAt } = pending.value.value
    return { form, session: session.value, rawQuery, createdAt, take }
  })

/** `claimForm`, with the pending request taken at once. */
export const continueForm = <F>(
  req: PageRequest,
  frame: Frame,
  page: "flow" | "consents" | "account",
  formOf: (params: Form.Params) => F,
  step: (form: F) => Step
) =>
  Effect.flatMap(claimForm(req, frame, page, formOf, step), ({ take, ...claimed }) =>
    Effect.as(take, claimed)
  )

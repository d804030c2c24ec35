/**
 * The authorize endpoint's GET and HEAD: validate the request, then the sign-in page, the
 * redirect of a consent already given, or the consent page.
 */
import { Effect, Option } from "effect"
import * as Http from "../http/Http.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Metadata from "../oauth/Metadata.js"
import * as AuthorizeQuery from "../oauth/requests/AuthorizeQuery.js"
import * as Form from "../oauth/requests/Form.js"
import * as Session from "../security/Session.js"
import {
  anonymousOf,
  answer,
  consentsHref,
  currentUser,
  errorPage,
  formTargets,
  frameOf,
  saveSession,
  uiLocalesOf,
  validated
} from "./Page.js"
import { type PageRequest, type SignInError, View, type WayBack } from "./View.js"

/** The sign-in page of an authorize request, with a new good-once ticket for its form. */
export const signInPage = (
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

/**
 * The query a pending request stores and sends the browser back to: the authorize
 * parameters (`AuthorizeQuery`) as the client wrote them, anything else dropped, so no extra
 * parameter is kept by the server or echoed in a redirect.
 */
export const storedQuery = (query: string): string =>
  query
    .split("&")
    .filter((part) => AuthorizeQuery.names.has(Form.partName(part) ?? ""))
    .join("&")

/** The authorize request again, as a same-origin path: where a page of its flow starts over. */
export const requestAgain = (req: PageRequest, rawQuery: string): WayBack => ({
  to: "request",
  href: `${req.basePath}${Metadata.paths.authorize}?${rawQuery}`
})

/** GET or HEAD of the authorize endpoint. */
export const authorizeGet = (req: PageRequest) =>
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

/**
 * The authorize interaction: the authorize endpoint (GET and HEAD), the consent
 * form (POST to the same path), the sign-in form, and the consents page where a
 * user sees and withdraws what they have allowed, as one route from a plain
 * request value to a view for the binding to render. Every status, redirect and
 * error choice of the browser flow is made in this folder (`Page`, `AuthorizeFlow`,
 * `SignIn`, `Consent`, `ConsentsPage`; the forms' Schemas in `Forms`, the views in `View`),
 * routed here:
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
import { Effect, Option } from "effect"
import type { Requirements } from "../http/Http.js"
import * as Http from "../http/Http.js"
import * as Audit from "../security/Audit.js"
import { span } from "../services/internal/span.js"
import type { StorageError } from "../storage/StorageError.js"
import { accountFrame, accountGet, accountPost } from "./AccountPage.js"
import { authorizeGet, maxAuthorizeQuery, requestAgain, storedQuery } from "./AuthorizeFlow.js"
import { consentPost } from "./Consent.js"
import { consentsFrame, consentsGet, consentsPost } from "./ConsentsPage.js"
import { logoutRequest } from "./Logout.js"
import {
  answer,
  type Early,
  errorPage,
  type Frame,
  frameOf,
  pageOf,
  refused,
  serverError,
  unavailable
} from "./Page.js"
import { passkeyChallenge, passkeyLogin } from "./PasskeySignIn.js"
import { passkeysGet, passkeysPost } from "./PasskeysPage.js"
import { signInPost } from "./SignIn.js"
import type { Page, PageRequest, PageResponse, PasskeyPage, WayBack } from "./View.js"

// The public names of the browser flow, from the files that declare them
export { maxAuthorizeQuery, storedQuery } from "./AuthorizeFlow.js"
export { accountPath, consentsPath, pageOf, uiLocalesOf } from "./Page.js"
/** The views, their problem codes and the account page's parts, for the bindings that render them. @public */
export type {
  AccountNotice,
  AccountSection,
  AuthenticatorEnrolment,
  AuthenticatorProblem,
  FactorProblem,
  ListedDevice,
  Page,
  PageRequest,
  PageResponse,
  PasskeyActions,
  PasskeyPage,
  PasswordProblem,
  Problem,
  SignedInSession,
  SignInProblem,
  WayBack
} from "./View.js"
export { View } from "./View.js"

const route = (
  req: PageRequest,
  page: Page | PasskeyPage
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
    case "logout":
      return req.method === "GET" || req.method === "HEAD" || req.method === "POST"
        ? logoutRequest(req)
        : Effect.succeed(answer(refused(frameOf(""), Http.methodNotAllowed("GET, HEAD, POST"))))
    case "account":
      switch (req.method) {
        case "GET":
        case "HEAD":
          return accountGet(req)
        case "POST":
          return accountPost(req)
        default:
          return Effect.succeed(answer(refused(accountFrame(req), Http.methodNotAllowed("GET, HEAD, POST"))))
      }
    case "passkeyChallenge":
    case "passkeyLogin":
      return req.method === "POST"
        ? page === "passkeyChallenge"
          ? passkeyChallenge(req)
          : passkeyLogin(req)
        : Effect.succeed(answer(refused(frameOf(""), Http.methodNotAllowed("POST"))))
    case "passkeys":
      switch (req.method) {
        case "GET":
        case "HEAD":
          return passkeysGet(req)
        case "POST":
          return passkeysPost(req)
        default:
          return Effect.succeed(answer(refused(frameOf(""), Http.methodNotAllowed("GET, HEAD, POST"))))
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
const failureFrame = (req: PageRequest, page: Page | PasskeyPage): Frame => {
  if (page === "consents") return consentsFrame(req)
  if (page === "account") return accountFrame(req)
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
    span(`Interaction.${page.value}`),
    Effect.provideService(Audit.RequestInfo, {
      requestId: req.requestId ?? null,
      address: req.remoteAddress ?? null
    })
  )
}

/**
 * The authorize endpoint's GET and HEAD: validate the request, then the sign-in page, the
 * redirect of a consent already given, or the consent page.
 */
import { Effect, Option } from "effect"
import * as Http from "../http/Http.js"
import { Config } from "../model/Config.js"
import { forDisplay } from "../model/DisplayText.js"
import * as ScopeCatalogue from "../model/ScopeCatalogue.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Metadata from "../oauth/Metadata.js"
import * as OpenIdRequest from "../oauth/OpenIdRequest.js"
import * as AuthorizeQuery from "../oauth/requests/AuthorizeQuery.js"
import * as Form from "../oauth/requests/Form.js"
import * as Session from "../security/Session.js"
import { nowSeconds } from "../services/internal/time.js"
import { ScopeStore } from "../storage/ScopeStore.js"
import type { Step } from "../storage/SessionStore.js"
import { atomically } from "../storage/Transaction.js"
import { enrolPage } from "./Enrolment.js"
import { factorPage, flowFactorTarget } from "./Factor.js"
import {
  accountPath,
  anonymousOf,
  answer,
  consentsHref,
  currentUser,
  errorPage,
  formTargets,
  frameOf,
  ownPageHref,
  passkeyActions,
  redirectHost,
  sessionSaving,
  uiLocalesOf,
  validated
} from "./Page.js"
import { stepUp } from "./StepUp.js"
import { type PageRequest, type PageResponse, type SignInError, View, type WayBack } from "./View.js"

/**
 * Add a pending request for a page's form to the session and save the session, in one
 * transaction after `before` (the take of the form this page answers, if any); returns the
 * form's ticket and the `Set-Cookie` value.
 */
const withForm = <E, R>(
  req: PageRequest,
  session: Session.Session,
  rawQuery: string,
  step: Step,
  before: Effect.Effect<void, E, R>
) =>
  Effect.gen(function* () {
    const pending = yield* Session.pending(session, rawQuery, step)
    const saving = yield* sessionSaving(req, session)
    yield* atomically(Effect.zipRight(before, Effect.zipRight(pending.write, saving.write)))
    return { ticket: pending.value, setCookie: saving.value }
  })

/**
 * The redirect of an authorization answered without a page (a consent already given): the
 * session it used is renewed, never past its absolute end (`Session.saving`), in the
 * transaction that stores the code; before the implicit grant's token, which signs outside it.
 */
const silentRedirect = (
  req: PageRequest,
  user: Session.Session,
  ar: Authorize.AuthorizationRequest,
  authTime: number | null
) =>
  Effect.gen(function* () {
    const saving = yield* sessionSaving(req, user)
    const userId = user.userId as string
    // The ID token's sid: only an OpenID request's code carries one
    const sid = ar.openId === undefined ? null : yield* Session.sidOf(user.idHash)
    const from = { authTime, sid, method: user.method, sessionHash: user.idHash }
    const redirect =
      ar.responseType === "code"
        ? yield* atomically(Effect.zipRight(saving.write, yield* Authorize.codeApproval(ar, userId, from)))
        : yield* Effect.zipRight(atomically(saving.write), Authorize.approveRedirect(ar, userId, from))
    return answer(View.Redirect({ status: 302, ...redirect }), saving.value)
  })

/**
 * The sign-in page of an authorize request, with a new good-once ticket for its form, stored
 * in one transaction after `before` (the take of the form it answers, if any).
 */
export const signInPage = <E = never, R = never>(
  req: PageRequest,
  session: Session.Session,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string,
  status: 200 | 400,
  error: Option.Option<SignInError> = Option.none(),
  before: Effect.Effect<void, E, R> = Effect.void as Effect.Effect<void, E, R>
) =>
  Effect.gen(function* () {
    const { ticket, setCookie } = yield* withForm(req, session, rawQuery, "login", before)
    return answer(
      View.SignIn({
        status,
        layout: ar.clientType,
        uiLocales: uiLocalesOf(rawQuery),
        appName: forDisplay(ar.app.name),
        redirectHost: redirectHost(ar),
        action: req.basePath + Metadata.paths.login,
        ticket,
        error,
        formTargets: formTargets(ar),
        ...(yield* passkeyActions(req))
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
    const { ticket, setCookie } = yield* withForm(req, session, rawQuery, "consent", Effect.void)
    const catalogue = yield* Effect.flatMap(ScopeStore, (scopes) => scopes.list())
    const uiLocales = uiLocalesOf(rawQuery)
    return answer(
      View.Consent({
        layout: ar.clientType,
        uiLocales,
        appName: forDisplay(ar.app.name),
        redirectHost: redirectHost(ar),
        username: forDisplay(session.username ?? ""),
        scope: ar.scope,
        scopeDescriptions: ScopeCatalogue.descriptionsOf(catalogue, ar.scope),
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
 * parameter is kept by the server or echoed in a redirect. OpenID Connect's parameters are
 * kept only for an OpenID request (`openId`).
 */
export const storedQuery = (query: string, openId = false): string => {
  const kept = openId ? AuthorizeQuery.openIdNames : AuthorizeQuery.names
  return query
    .split("&")
    .filter((part) => kept.has(Form.partName(part) ?? ""))
    .join("&")
}

/** The authorize request again, as a same-origin path: where a page of its flow starts over. */
export const requestAgain = (req: PageRequest, rawQuery: string): WayBack => ({
  to: "request",
  href: `${req.basePath}${Metadata.paths.authorize}?${rawQuery}`
})

/**
 * The answer a signed-in `user` gets while their sign-in is weaker than `ar` needs (`StepUp`):
 * the second step's page, the sign-in page offering a passkey, the page adding an authenticator
 * app, the way to the account page to add a passkey (only a passkey meets it), or (`prompt=none`)
 * `interaction_required`; none when it is strong enough.
 */
const stepUpAnswer = (
  req: PageRequest,
  user: Session.Session,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string
) =>
  Effect.gen(function* () {
    const step = yield* stepUp(ar, user)
    const frame = frameOf(rawQuery, Option.some(requestAgain(req, rawQuery)))
    switch (step._tag) {
      case "Met":
        return Option.none<PageResponse>()
      case "Refuse": {
        const { issuer } = yield* Config
        const description = "the request needs a stronger sign-in"
        const redirect = Authorize.rejectRedirect(ar, issuer, "interaction_required", description)
        return Option.some(answer(View.Redirect({ status: 302, ...redirect })))
      }
      case "Factor":
        return Option.some(
          yield* factorPage(req, frame, user, step.user, flowFactorTarget(req, ar, rawQuery))
        )
      case "SignIn":
        return Option.some(yield* signInPage(req, user, ar, rawQuery, 200))
      case "EnrolApp": {
        const again = requestAgain(req, rawQuery).href
        return Option.some(yield* enrolPage(req, frame, user, step.user, ar, rawQuery, again))
      }
      case "Enrol": {
        const account = ownPageHref(req, accountPath, ar.clientType, uiLocalesOf(rawQuery))
        const page = errorPage(
          { ...frame, back: Option.some({ to: "account", href: account }) },
          403,
          "interaction_required",
          "the request needs a second factor the user has not set up",
          { reason: "second_factor_needed" }
        )
        return Option.some(answer(page))
      }
    }
  })

/**
 * The GET of an OpenID request: `prompt` and `max_age` choose between the sign-in page, the
 * consent page and the redirect; under `prompt=none` a page that would be needed is an error
 * redirect instead (`login_required`, `consent_required`).
 */
const openIdGet = (
  req: PageRequest,
  session: Option.Option<Session.Session>,
  user: Option.Option<Session.Session>,
  ar: Authorize.AuthorizationRequest,
  oidc: OpenIdRequest.OpenIdRequest
) =>
  Effect.gen(function* () {
    const rawQuery = storedQuery(req.query, true)
    const now = yield* nowSeconds
    const signedIn = Option.filter(user, (u) => !OpenIdRequest.needsSignIn(oidc, u.authenticatedAt, now))
    const { issuer } = yield* Config
    const refuse = (error: Authorize.RedirectErrorCode, description: string) =>
      answer(View.Redirect({ status: 302, ...Authorize.rejectRedirect(ar, issuer, error, description) }))
    if (Option.isNone(signedIn)) {
      if (OpenIdRequest.showsNoPage(oidc)) return refuse("login_required", "the user must sign in")
      // Signed in but asked to sign in again: the page signs in over the current session
      const current = Option.isSome(user) ? user.value : yield* anonymousOf(session)
      return yield* signInPage(req, current, ar, rawQuery, 200)
    }
    const stepped = yield* stepUpAnswer(req, signedIn.value, ar, rawQuery)
    if (Option.isSome(stepped)) return stepped.value
    const userId = signedIn.value.userId as string
    if (!OpenIdRequest.forcesConsent(oidc) && (yield* Authorize.hasConsent(ar, userId)))
      return yield* silentRedirect(req, signedIn.value, ar, signedIn.value.authenticatedAt)
    if (OpenIdRequest.showsNoPage(oidc)) return refuse("consent_required", "the user must allow the request")
    return yield* consentPage(req, signedIn.value, ar, rawQuery)
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
    if (ar.openId !== undefined) return yield* openIdGet(req, session, user, ar, ar.openId)
    if (Option.isNone(user)) {
      // A session whose user vanished continues anonymous, under the same id until sign-in
      return yield* signInPage(req, yield* anonymousOf(session), ar, storedQuery(req.query), 200)
    }
    const stepped = yield* stepUpAnswer(req, user.value, ar, storedQuery(req.query))
    if (Option.isSome(stepped)) return stepped.value
    if (yield* Authorize.hasConsent(ar, user.value.userId as string))
      return yield* silentRedirect(req, user.value, ar, null)
    return yield* consentPage(req, user.value, ar, storedQuery(req.query))
  })

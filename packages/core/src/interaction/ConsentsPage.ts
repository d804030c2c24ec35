/**
 * The consents page: a signed-in user's authorised applications, each with a Withdraw
 * button, and Sign out; for nobody signed in, a sign-in form that comes back to it.
 */
import { Effect, Either, Option } from "effect"
import * as Admin from "../admin/Admin.js"
import * as Http from "../http/Http.js"
import { forDisplay } from "../model/DisplayText.js"
import * as ScopeCatalogue from "../model/ScopeCatalogue.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Session from "../security/Session.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { ConsentStore } from "../storage/ConsentStore.js"
import { ScopeStore } from "../storage/ScopeStore.js"
import type { Step } from "../storage/SessionStore.js"
import { type FactorForm, type FactorTarget, factorPage, factorPost } from "./Factor.js"
import { consentsFormOf } from "./Forms.js"
import {
  anonymousOf,
  answer,
  asUser,
  continueForm,
  currentUser,
  errorPage,
  type OwnPageFrame,
  ownPageFrame,
  rateLimited,
  readSessionMark,
  saveSession,
  sessionMark,
  unavailable,
  withParam
} from "./Page.js"
import { passwordSignIn } from "./SignIn.js"
import { type Authorised, type PageRequest, type PageResponse, type SignInError, View } from "./View.js"

/** The layout, languages and own address of a consents page request. */
export const consentsFrame = (req: PageRequest) => ownPageFrame(req, "consents")

/** The mark, tied to this session, that its browser has just withdrawn the consent to `appKey`. */
const withdrawnMark = (session: Session.Session, appKey: string) =>
  sessionMark(session, "consent-withdrawn", appKey)

/**
 * The App Key the `withdrawn` parameter of a consents page query names, if this session made
 * the mark: a link from elsewhere cannot make the page claim a withdrawal.
 */
const readWithdrawnMark = (session: Session.Session, query: string) =>
  readSessionMark(session, query, "withdrawn", "consent-withdrawn")

/**
 * The sign-in form of one of the user's own pages, for nobody signed in: it posts back to the
 * page (`frame.href`), and `purpose` names the page it opens.
 */
export const ownSignInPage = (
  req: PageRequest,
  frame: OwnPageFrame,
  session: Session.Session,
  status: 200 | 400,
  error: Option.Option<SignInError> = Option.none()
) =>
  Effect.gen(function* () {
    // An empty query: this ticket continues the page, never an authorize request
    const ticket = yield* Session.addPending(session, "", "login")
    const setCookie = yield* saveSession(req, session)
    const to = Option.getOrThrow(frame.back).to
    return answer(
      View.ConsentsSignIn({
        status,
        layout: frame.layout,
        uiLocales: frame.uiLocales,
        action: frame.href,
        ticket,
        error,
        formTargets: ["'self'"],
        ...(to === "account" ? { purpose: "account" as const } : {})
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
          appName: forDisplay(app.value.name),
          scope: consent.scope,
          grantedAt: consent.updatedAt
        })
      }
    }
    const marked = yield* readWithdrawnMark(session, req.query)
    const withdrawn =
      Option.isSome(marked) && !consents.some((c) => c.appKey === marked.value)
        ? Option.map(yield* apps.find(marked.value), (app) => forDisplay(app.name))
        : Option.none<string>()
    const catalogue = yield* Effect.flatMap(ScopeStore, (scopes) => scopes.list())
    const scopeDescriptions = ScopeCatalogue.descriptionsOf(
      catalogue,
      consents.flatMap((c) => c.scope)
    )
    const ticket = yield* Session.addPending(session, "", "consent")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.Consents({ ...ownPageFields(frame, session, ticket), consents, scopeDescriptions, withdrawn }),
      setCookie
    )
  })

/**
 * GET or HEAD of one of the user's own pages (`frame`): `signedIn`'s page for a signed-in user,
 * else the sign-in form that comes back to it.
 */
export const ownPageGet = <E, R>(
  req: PageRequest,
  frame: OwnPageFrame,
  signedIn: (session: Session.Session) => Effect.Effect<PageResponse, E, R>
) =>
  Effect.gen(function* () {
    if (req.method === "HEAD") return answer(View.Head({ formTargets: ["'self'"] }))
    const session = yield* Session.load(Http.header(req, "cookie") ?? undefined)
    const user = yield* currentUser(session)
    if (Option.isNone(user)) return yield* ownSignInPage(req, frame, yield* anonymousOf(session), 200)
    return yield* signedIn(user.value)
  })

/**
 * What every view of one of the user's own pages for a signed-in user carries: its frame, the
 * username, where its forms post with their ticket, and that they post only to this site.
 */
export const ownPageFields = (frame: OwnPageFrame, session: Session.Session, ticket: Session.FormTicket) => ({
  layout: frame.layout,
  uiLocales: frame.uiLocales,
  username: forDisplay(session.username ?? ""),
  action: frame.href,
  ticket,
  formTargets: ["'self'"] as ReadonlyArray<string>
})

/** GET or HEAD of the consents page. */
export const consentsGet = (req: PageRequest) =>
  ownPageGet(req, consentsFrame(req), (session) => consentsListPage(req, session))

/** Withdraw the user's consent to an application, revoking its tokens; the audit event commits with it. */
const withdraw = (req: PageRequest, userId: string, appKey: string) =>
  asUser(req, Admin.withdrawConsentOf(userId, appKey))

type ConsentsFrame = OwnPageFrame

/** The sign-in form of one of the user's own pages: back to the page signed in, or its sign-in form again. */
export const ownSignIn = (
  req: PageRequest,
  frame: OwnPageFrame,
  session: Session.Session,
  form: { readonly username?: string; readonly password?: string }
) =>
  Effect.gen(function* () {
    const outcome = yield* passwordSignIn(req, session, form)
    if (outcome._tag === "Refused") {
      // The refusal's audit event (the form was taken before it was read)
      yield* outcome.first
      return yield* ownSignInPage(req, frame, session, 400, Option.some(outcome.error))
    }
    if (outcome._tag === "Throttled") return answer(rateLimited(frame, outcome.retryAfter))
    if (outcome._tag === "Busy") return answer(unavailable(frame, outcome.error))
    if (outcome._tag === "NeedsFactor") {
      return yield* factorPage(
        req,
        frame,
        session,
        outcome.user,
        ownFactorTarget(frame),
        Option.none(),
        outcome.settle
      )
    }
    return { ...backToPage(frame.href, outcome.setCookie), deviceCookie: outcome.deviceCookie }
  })

/** Where the own pages' second sign-in step posts: back to the page, as `action=factor`. */
const ownFactorTarget = (frame: OwnPageFrame): FactorTarget => ({
  action: frame.href,
  rawQuery: "",
  appName: Option.none(),
  extra: [["action", "factor"]],
  formTargets: ["'self'"]
})

/** The own pages' second sign-in step (its form taken): the code, then back to the page. */
export const ownFactor = (
  req: PageRequest,
  frame: OwnPageFrame,
  session: Session.Session,
  form: FactorForm
) => factorPost(req, frame, session, form, ownFactorTarget(frame), frame.href)

/** Back to one of the user's own pages, after a form of it. */
export const backToPage = (location: string, setCookie: string | null) =>
  answer(View.Redirect({ status: 303, location }), setCookie)

/** The Withdraw button of one application: its consent withdrawn, and back to the page that says so. */
const consentsWithdraw = (req: PageRequest, frame: ConsentsFrame, session: Session.Session, appKey: string) =>
  Effect.gen(function* () {
    const user = yield* currentUser(Option.some(session))
    // Signed out (or disabled) since the page was shown: the page asks to sign in
    if (Option.isNone(user)) return backToPage(frame.href, null)
    // docs/security.md T13: no list on the page has such an App Key; the form is refused before any store
    if (!isPlainText(appKey)) {
      return answer(errorPage(frame, 400, "invalid_request", "unknown application", { reason: "bad_form" }))
    }
    const setCookie = yield* saveSession(req, user.value)
    if (!(yield* withdraw(req, user.value.userId as string, appKey))) return backToPage(frame.href, setCookie)
    return backToPage(withParam(frame.href, "withdrawn", yield* withdrawnMark(user.value, appKey)), setCookie)
  })

/** The step a form of one of the own pages continues: its sign-in and its second step (told apart by the mark), or the signed-in page. */
export const stepOf = (f: Either.Either<{ readonly action: string }, unknown>): Step =>
  Either.isRight(f) && (f.right.action === "signin" || f.right.action === "factor") ? "login" : "consent"

/** POST of a consents page form (`ConsentsForm`): sign in, withdraw a consent, or sign out. */
export const consentsPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const frame = consentsFrame(req)
    const { form, session } = yield* continueForm(req, frame, "consents", consentsFormOf, (f) => stepOf(f))
    if (Either.isLeft(form)) {
      return answer(errorPage(frame, 400, "invalid_request", "unknown action", { reason: "bad_form" }))
    }
    switch (form.right.action) {
      case "signin":
        return yield* ownSignIn(req, frame, session, form.right)
      case "factor":
        return yield* ownFactor(req, frame, session, form.right)
      case "withdraw":
        return yield* consentsWithdraw(req, frame, session, form.right.app_key ?? "")
      case "signout": {
        const anonymous = yield* Session.regenerate(Option.some(session), null)
        return backToPage(frame.href, yield* saveSession(req, anonymous))
      }
    }
  })

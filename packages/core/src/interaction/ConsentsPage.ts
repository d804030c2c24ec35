/**
 * The consents page: a signed-in user's authorised applications, each with a Withdraw
 * button, and Sign out; for nobody signed in, a sign-in form that comes back to it.
 */
import { Effect, Either, Option } from "effect"
import * as Admin from "../admin/Admin.js"
import * as Http from "../http/Http.js"
import { Config } from "../model/Config.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Form from "../oauth/requests/Form.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Audit from "../security/Audit.js"
import * as Session from "../security/Session.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { ConsentStore } from "../storage/ConsentStore.js"
import {
  anonymousOf,
  answer,
  consentsHref,
  continueForm,
  currentUser,
  errorPage,
  rateLimited,
  saveSession,
  uiLocalesOf,
  unavailable
} from "./Page.js"
import { passwordSignIn } from "./SignIn.js"
import { type Authorised, type PageRequest, type SignInError, View, type WayBack } from "./View.js"

/** The layout, languages and own address of a consents page request. */
export const consentsFrame = (req: PageRequest) => {
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
export const consentsGet = (req: PageRequest) =>
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
export const consentsPost = (req: PageRequest) =>
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

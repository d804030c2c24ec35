/**
 * Enrolment in the authorize flow (docs/sign-in.md, "Led to enrol"): a signed-in user without a
 * second factor, whose request needs two, adds an authenticator app on a page of the flow. The
 * page shows the pending enrolment (added at the first visit, the same one at every reload) and
 * asks for a code; its form is bound, as the second step's is (`Factor`), to the user, this
 * session, the form's ticket and the account's password. A right code confirms the app and signs
 * the session in anew with the method `totp`, in one transaction; the answer shows the recovery
 * codes once and leads back to the request.
 */
import { Data, Effect, Option } from "effect"
import { forDisplay } from "../model/DisplayText.js"
import { isDisabled } from "../model/User.js"
import type * as Authorize from "../oauth/Authorize.js"
import * as Metadata from "../oauth/Metadata.js"
import * as SecondFactor from "../security/SecondFactor.js"
import * as Session from "../security/Session.js"
import { timingSafeEqual } from "../services/Digest.js"
import { WebAuthn } from "../services/WebAuthn.js"
import { atomically } from "../storage/Transaction.js"
import { UserStore } from "../storage/UserStore.js"
import { type FactorUser, markOf } from "./Factor.js"
import {
  accountPath,
  answer,
  asUser,
  cookieOf,
  type Frame,
  forbidden,
  formTargets,
  ownPageHref,
  rateLimited,
  sessionSaving
} from "./Page.js"
import { type FactorProblem, type PageRequest, View } from "./View.js"

/** Where a request goes on after the enrolment's form: back to it (`again`), or, signed in anew, `signedIn`. */
export interface EnrolTargets {
  readonly again: string
  readonly signedIn: string
}

/**
 * The enrolment page of `ar` for `user`, signed in to `session`: their pending authenticator app
 * (added now when they have none, recorded as `mfa_enrolled`), and a new good-once ticket for its
 * form, stored with the session's renewal in one transaction. Confirmed meanwhile (another tab):
 * the request again, which asks for a code instead.
 */
export const enrolPage = (
  req: PageRequest,
  frame: Frame,
  session: Session.Session,
  user: FactorUser,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string,
  again: string,
  problem: Option.Option<FactorProblem> = Option.none()
) =>
  Effect.gen(function* () {
    const pendingApp = yield* SecondFactor.pendingEnrolment(user.userId, user.username)
    const enrolment = Option.isSome(pendingApp)
      ? Option.some(pendingApp.value)
      : yield* asUser(req, SecondFactor.enrol(user.userId, user.username)).pipe(
          Effect.map(Option.some),
          Effect.catchTag("FactorActive", () => Effect.succeed(Option.none<SecondFactor.Enrolment>()))
        )
    if (Option.isNone(enrolment)) {
      return answer(View.Redirect({ status: req.method === "POST" ? 303 : 302, location: again }))
    }
    // An enrolment form's step: the mark tells it from the password and code forms
    const pending = yield* Session.pending(session, rawQuery, "login")
    const saving = yield* sessionSaving(req, session)
    yield* atomically(Effect.zipRight(pending.write, saving.write))
    const mark = yield* markOf(session, pending.value.txn, user, "enrol-step")
    const passkeysOn = Option.isSome(yield* Effect.serviceOption(WebAuthn))
    return answer(
      View.Enrol({
        status: Option.isSome(problem) ? 400 : 200,
        layout: frame.layout,
        uiLocales: frame.uiLocales,
        appName: forDisplay(ar.app.name),
        username: forDisplay(user.username),
        enrolment: enrolment.value,
        action: req.basePath + Metadata.paths.login,
        ticket: pending.value,
        fields: [
          ["factor_user", user.userId],
          ["enrol_mark", mark]
        ],
        problem,
        passkeysHref: passkeysOn
          ? Option.some(ownPageHref(req, accountPath, ar.clientType, frame.uiLocales))
          : Option.none(),
        formTargets: formTargets(ar)
      }),
      saving.value
    )
  })

/** What the enrolment's code came to. */
type Confirmed =
  | { readonly _tag: "Enrolled"; readonly codes: ReadonlyArray<string>; readonly setCookie: string }
  | { readonly _tag: "Wrong" }
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Forbidden" }
  | { readonly _tag: "Throttled"; readonly retryAfter: number }

/** The account was disabled, deleted or given a new password since it was read (D16): nothing committed. */
class AccountChanged extends Data.TaggedError("AccountChanged") {}

/**
 * The enrolment's form answered (its ticket already taken): the account it names must be this
 * session's, enabled, and marked for this form, session and password (else 403, nothing changed).
 * A right code (throttled as the account page's confirmation) confirms the app (`mfa_confirmed`)
 * and signs the session in anew (a new id) with the method `totp`, in one transaction: the
 * recovery codes, shown once, and Continue to `signedIn`. A wrong code: the page again (400).
 */
export const enrolPost = (
  req: PageRequest,
  frame: Frame,
  session: Session.Session,
  form: {
    readonly txn: string
    readonly factor_user?: string
    readonly enrol_mark?: string
    readonly code?: string
  },
  ar: Authorize.AuthorizationRequest,
  rawQuery: string,
  targets: EnrolTargets
) =>
  Effect.gen(function* () {
    const userId = form.factor_user ?? ""
    const found =
      userId === "" || session.userId !== userId
        ? Option.none()
        : yield* Effect.flatMap(UserStore, (u) => u.findById(userId))
    if (Option.isNone(found) || isDisabled(found.value)) return answer(forbidden(frame))
    const user = found.value
    const mark = yield* markOf(session, form.txn, user, "enrol-step")
    if (!timingSafeEqual(form.enrol_mark ?? "", mark)) return answer(forbidden(frame))
    const cookie = yield* cookieOf(req)
    const confirmed = yield* asUser(
      req,
      Effect.gen(function* () {
        const confirming = yield* SecondFactor.confirming(user.userId, form.code ?? "")
        const signingIn = yield* Session.signingIn(session, user, cookie, "totp")
        const stored = Effect.filterOrFail(
          signingIn.write,
          (ok) => ok,
          () => new AccountChanged()
        )
        yield* atomically(Effect.zipRight(confirming.write, stored))
        return { _tag: "Enrolled", codes: confirming.codes, setCookie: signingIn.value } satisfies Confirmed
      })
    ).pipe(
      Effect.catchTags({
        WrongCode: () => Effect.succeed<Confirmed>({ _tag: "Wrong" }),
        // Confirmed, replaced or removed since the page was shown: the request shows what is
        NoPendingFactor: () => Effect.succeed<Confirmed>({ _tag: "Gone" }),
        AccountChanged: () => Effect.succeed<Confirmed>({ _tag: "Forbidden" }),
        RateLimited: (e) => Effect.succeed<Confirmed>({ _tag: "Throttled", retryAfter: e.retryAfter })
      })
    )
    switch (confirmed._tag) {
      case "Enrolled": {
        const enrolled = View.Enrolled({
          layout: frame.layout,
          uiLocales: frame.uiLocales,
          appName: forDisplay(ar.app.name),
          recoveryCodes: confirmed.codes,
          continueHref: targets.signedIn,
          formTargets: formTargets(ar)
        })
        return answer(enrolled, confirmed.setCookie)
      }
      case "Throttled":
        return answer(rateLimited(frame, confirmed.retryAfter))
      case "Forbidden":
        return answer(forbidden(frame))
      case "Gone":
        return answer(View.Redirect({ status: 303, location: targets.again }))
      case "Wrong":
        return yield* enrolPage(
          req,
          frame,
          session,
          user,
          ar,
          rawQuery,
          targets.again,
          Option.some("bad_code")
        )
    }
  })

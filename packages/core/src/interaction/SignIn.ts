/**
 * The sign-in form (and "Not you?" on the consent page): checking a username and password,
 * shared with the consents page's own sign-in form.
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../http/Http.js"
import { RateLimited, TemporarilyUnavailable } from "../model/OAuthError.js"
import type * as Authorize from "../oauth/Authorize.js"
import { afterSignIn } from "../oauth/OpenIdRequest.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Accounts from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import * as SecondFactor from "../security/SecondFactor.js"
import * as Session from "../security/Session.js"
import { SessionStore } from "../storage/SessionStore.js"
import { atomically } from "../storage/Transaction.js"
import { requestAgain, signInPage } from "./AuthorizeFlow.js"
import { enrolPost } from "./Enrolment.js"
import { type FactorUser, factorPage, factorPost, flowFactorTarget } from "./Factor.js"
import { signInFormOf } from "./Forms.js"
import {
  answer,
  claimForm,
  cookieOf,
  frameOf,
  rateLimited,
  sessionSaving,
  unavailable,
  validated
} from "./Page.js"
import { type PageRequest, type SignInError, type SignInProblem, View } from "./View.js"

/** What checking a sign-in form's username and password came to. */
type SignInOutcome<E, R> =
  | {
      readonly _tag: "Refused"
      readonly error: SignInError
      /** Store calls the page answering the refusal commits first: the form's take, or the refusal's audit event. */
      readonly first: Effect.Effect<void, E, R>
    }
  | { readonly _tag: "Throttled"; readonly retryAfter: number }
  | { readonly _tag: "Busy"; readonly error: TemporarilyUnavailable }
  | { readonly _tag: "SignedIn"; readonly setCookie: string; readonly deviceCookie: string | null }
  /** The password was right and the user has an authenticator app: the second step, `settle` not run yet. */
  | {
      readonly _tag: "NeedsFactor"
      readonly user: FactorUser
      readonly settle: Accounts.Verified["settle"]
    }

const outcome = <E, R>(o: SignInOutcome<E, R>): SignInOutcome<E, R> => o

const refusedSignIn = <E = never, R = never>(
  problem: SignInProblem,
  username: string,
  first: Effect.Effect<void, E, R> = Effect.void
): SignInOutcome<E, R> => ({ _tag: "Refused", error: { problem, username }, first })

/**
 * Check a username and password from a page's form as the sign-in form does (throttled, as the
 * password grant, by `Accounts.verify`, with `take`, the take of the form, committed with the
 * attempt's count, and the browser's trusted-device cookie): the account and the attempt's
 * `settle`, or what it came to (refused, throttled, busy).
 */
export const checkPassword = <E = never, R = never>(
  req: PageRequest,
  username: string,
  password: string,
  take?: Effect.Effect<void, E, R>
) =>
  Accounts.verify(
    username,
    password,
    req.remoteAddress,
    { _tag: "Page", cookies: Http.header(req, "cookie") ?? undefined },
    take
  ).pipe(
    Effect.map(Either.right),
    Effect.catchIf(
      (e): e is Accounts.SignInRefused => e instanceof Accounts.SignInRefused,
      // A username that is not plain text is refused like any other and never shown again
      (e) =>
        Effect.succeed(
          Either.left(refusedSignIn("bad_credentials", isPlainText(username) ? username : "", e.record))
        )
    ),
    Effect.catchIf(
      (e): e is RateLimited => e instanceof RateLimited,
      (e) => Effect.succeed(Either.left(outcome<E, R>({ _tag: "Throttled", retryAfter: e.retryAfter })))
    ),
    Effect.catchIf(
      (e): e is TemporarilyUnavailable => e instanceof TemporarilyUnavailable,
      (e) => Effect.succeed(Either.left(outcome<E, R>({ _tag: "Busy", error: e })))
    )
  )

/**
 * Check a sign-in form's username and password (`checkPassword`); on success the session gets a
 * new id, and the browser becomes a trusted device of the user unless it already is one.
 */
export const passwordSignIn = <E = never, R = never>(
  req: PageRequest,
  session: Session.Session,
  form: { readonly username?: string; readonly password?: string },
  take?: Effect.Effect<void, E, R>
) =>
  Effect.gen(function* () {
    const username = form.username ?? ""
    const password = form.password ?? ""
    if (username === "" || password === "") return refusedSignIn("missing_fields", username, take)
    const cookies = Http.header(req, "cookie") ?? undefined
    const signedIn = yield* checkPassword(req, username, password, take)
    if (Either.isLeft(signedIn)) return signedIn.left
    const { user, settle } = signedIn.right
    if (yield* SecondFactor.required(user.userId)) return outcome<E, R>({ _tag: "NeedsFactor", user, settle })
    const cookie = yield* cookieOf(req)
    const signingIn = yield* Session.signingIn(session, user, cookie)
    const here = yield* Session.device(cookies, user)
    const device = yield* Session.atSignIn(here, user, cookie, Http.header(req, "user-agent") ?? undefined)
    // The attempt settled, the new session stored and this browser's trust recorded in one transaction
    const stored = yield* atomically(
      Effect.gen(function* () {
        yield* settle
        const stored = yield* signingIn.write
        // D16: disabled, deleted or given a new password since the check: the answer of a wrong password
        if (!stored) {
          yield* Audit.record("signin_failed", {
            userId: user.userId,
            detail: "account changed during sign-in"
          })
        } else yield* device.write
        return stored
      })
    )
    if (!stored) return refusedSignIn("bad_credentials", username)
    return outcome<E, R>({ _tag: "SignedIn", setCookie: signingIn.value, deviceCookie: device.value })
  })

/** Where the browser goes once signed in during an authorize request: the request again. */
const afterwards = (req: PageRequest, ar: Authorize.AuthorizationRequest, rawQuery: string) =>
  // An OpenID request's forced sign-in or max_age is met by this sign-in: not asked again
  ar.openId === undefined ? requestAgain(req, rawQuery).href : requestAgain(req, afterSignIn(rawQuery)).href

/** POST of the sign-in form, of its second step, of the enrolment page, or of "Not you?" on the consent page. */
export const signInPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { form, session, rawQuery, take } = yield* claimForm(req, frameOf(""), "flow", signInFormOf, (f) =>
      f.switch_account !== undefined ? "consent" : "login"
    )
    const ar = yield* Effect.tapErrorTag(validated(rawQuery, 303), "Early", () => atomically(take))
    const again = requestAgain(req, rawQuery)
    // A form naming a user with no mark of the second step is the enrolment's, and refused by its check
    if (form.enrol_mark !== undefined || (form.factor_user !== undefined && form.factor_mark === undefined)) {
      yield* atomically(take)
      const frame = frameOf(rawQuery, Option.some(again))
      const targets = { again: again.href, signedIn: afterwards(req, ar, rawQuery) }
      return yield* enrolPost(req, frame, session, form, ar, rawQuery, targets)
    }
    if (form.factor_mark !== undefined) {
      yield* atomically(take)
      const frame = frameOf(rawQuery, Option.some(again))
      const target = flowFactorTarget(req, ar, rawQuery)
      return yield* factorPost(req, frame, session, form, target, afterwards(req, ar, rawQuery))
    }
    if (form.switch_account !== undefined) {
      // A new anonymous session, the old one deleted, with the form taken: one transaction
      const anonymous = yield* Session.fresh
      const saving = yield* sessionSaving(req, anonymous)
      yield* atomically(
        Effect.zipRight(
          take,
          Effect.zipRight(
            Effect.flatMap(SessionStore, (s) => s.remove(session.idHash)),
            saving.write
          )
        )
      )
      return answer(View.Redirect({ status: 303, location: again.href }), saving.value)
    }
    const outcome = yield* passwordSignIn(req, session, form, take)
    switch (outcome._tag) {
      case "Refused":
        return yield* signInPage(req, session, ar, rawQuery, 400, Option.some(outcome.error), outcome.first)
      case "Throttled":
        return answer(rateLimited(frameOf(rawQuery, Option.some(again)), outcome.retryAfter))
      case "Busy":
        return answer(unavailable(frameOf(rawQuery, Option.some(again)), outcome.error))
      case "NeedsFactor":
        return yield* factorPage(
          req,
          frameOf(rawQuery, Option.some(again)),
          session,
          outcome.user,
          flowFactorTarget(req, ar, rawQuery),
          Option.none(),
          outcome.settle
        )
      case "SignedIn":
        return {
          view: View.Redirect({ status: 303, location: afterwards(req, ar, rawQuery) }),
          setCookie: outcome.setCookie,
          deviceCookie: outcome.deviceCookie
        }
    }
  })

/**
 * The sign-in form (and "Not you?" on the consent page): checking a username and password,
 * shared with the consents page's own sign-in form.
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../http/Http.js"
import { Config } from "../model/Config.js"
import type { TemporarilyUnavailable } from "../model/OAuthError.js"
import { afterSignIn } from "../oauth/OpenIdRequest.js"
import { isPlainText } from "../oauth/requests/Params.js"
import * as Accounts from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import * as Session from "../security/Session.js"
import { requestAgain, signInPage } from "./AuthorizeFlow.js"
import { signInFormOf } from "./Forms.js"
import {
  answer,
  continueForm,
  cookiePath,
  frameOf,
  rateLimited,
  saveSession,
  unavailable,
  validated
} from "./Page.js"
import { type PageRequest, type SignInError, type SignInProblem, View } from "./View.js"

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
export const passwordSignIn = (
  req: PageRequest,
  session: Session.Session,
  form: { readonly username?: string; readonly password?: string }
) =>
  Effect.gen(function* () {
    const username = form.username ?? ""
    const password = form.password ?? ""
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
export const signInPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { form, session, rawQuery } = yield* continueForm(req, frameOf(""), "flow", signInFormOf, (f) =>
      f.switch_account !== undefined ? "consent" : "login"
    )
    const ar = yield* validated(rawQuery, 303)
    const again = requestAgain(req, rawQuery)
    if (form.switch_account !== undefined) {
      const anonymous = yield* Session.regenerate(Option.some(session), null)
      return answer(View.Redirect({ status: 303, location: again.href }), yield* saveSession(req, anonymous))
    }
    const outcome = yield* passwordSignIn(req, session, form)
    switch (outcome._tag) {
      case "Refused":
        return yield* signInPage(req, session, ar, rawQuery, 400, Option.some(outcome.error))
      case "Throttled":
        return answer(rateLimited(frameOf(rawQuery, Option.some(again)), outcome.retryAfter))
      case "Busy":
        return answer(unavailable(frameOf(rawQuery, Option.some(again)), outcome.error))
      case "SignedIn":
        return {
          // An OpenID request's forced sign-in or max_age is met by this sign-in: not asked again
          view: View.Redirect({
            status: 303,
            location: ar.openId === undefined ? again.href : requestAgain(req, afterSignIn(rawQuery)).href
          }),
          setCookie: outcome.setCookie,
          deviceCookie: outcome.deviceCookie
        }
    }
  })

/**
 * The consent form: Allow redirects with the code or token, Deny with `access_denied`.
 */
import { Effect, Either, Option } from "effect"
import { Config } from "../model/Config.js"
import * as Authorize from "../oauth/Authorize.js"
import { requestAgain } from "./AuthorizeFlow.js"
import { consentFormOf } from "./Forms.js"
import {
  answer,
  continueForm,
  currentUser,
  errorPage,
  forbidden,
  frameOf,
  saveSession,
  validated
} from "./Page.js"
import { type PageRequest, View } from "./View.js"

/** POST of the consent form. */
export const consentPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { form, session, rawQuery } = yield* continueForm(
      req,
      frameOf(""),
      "flow",
      consentFormOf,
      () => "consent"
    )
    const setCookie = yield* saveSession(req, session)
    if (Either.isLeft(form)) {
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
      form.right.decision === "deny"
        ? Authorize.rejectRedirect(ar, issuer, "access_denied", "the user denied the request")
        : yield* Authorize.approveRedirect(ar, user.value.userId as string, user.value.authenticatedAt)
    return answer(View.Redirect({ status: 303, ...redirect }), setCookie)
  })

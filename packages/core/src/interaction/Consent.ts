/**
 * The consent form: Allow redirects with the code or token, Deny with `access_denied`.
 */
import { Effect, Either, Option } from "effect"
import { Config } from "../model/Config.js"
import * as Authorize from "../oauth/Authorize.js"
import * as Session from "../security/Session.js"
import { atomically } from "../storage/Transaction.js"
import { requestAgain } from "./AuthorizeFlow.js"
import { consentFormOf } from "./Forms.js"
import {
  answer,
  claimForm,
  currentUser,
  errorPage,
  forbidden,
  frameOf,
  sessionSaving,
  validated
} from "./Page.js"
import { type PageRequest, View } from "./View.js"

/** POST of the consent form. */
export const consentPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const { form, session, rawQuery, take } = yield* claimForm(
      req,
      frameOf(""),
      "flow",
      consentFormOf,
      () => "consent"
    )
    const saving = yield* sessionSaving(req, session)
    const setCookie = saving.value
    // The form taken first, the session saved, and what the decision stores: one transaction
    const commit = <A, E, R>(unit: Effect.Effect<A, E, R>) =>
      atomically(Effect.zipRight(take, Effect.zipRight(saving.write, unit)))
    const settled = commit(Effect.void)
    if (Either.isLeft(form)) {
      yield* settled
      const frame = frameOf(rawQuery, Option.some(requestAgain(req, rawQuery)))
      return answer(
        errorPage(frame, 400, "invalid_request", "choose Allow or Deny", { reason: "no_decision" }),
        setCookie
      )
    }
    // Validated again: the application or its redirect URIs may have changed since the page was shown
    const ar = yield* Effect.tapErrorTag(validated(rawQuery, 303), "Early", () => settled)
    const user = yield* currentUser(Option.some(session))
    if (Option.isNone(user)) {
      yield* settled
      return answer(forbidden(frameOf(rawQuery)), setCookie)
    }
    const { issuer } = yield* Config
    const { userId, authenticatedAt, method } = user.value
    // The ID token's sid: only an OpenID request's code carries one
    const sid = ar.openId === undefined ? null : yield* Session.sidOf(user.value.idHash)
    const from = { authTime: authenticatedAt, sid, method, sessionHash: user.value.idHash }
    if (form.right.decision === "deny") {
      yield* settled
      const redirect = Authorize.rejectRedirect(ar, issuer, "access_denied", "the user denied the request")
      return answer(View.Redirect({ status: 303, ...redirect }), setCookie)
    }
    // A token (implicit) is signed after the form is taken, in a transaction of its own
    const redirect =
      ar.responseType === "code"
        ? yield* commit(yield* Authorize.codeApproval(ar, userId as string, from))
        : yield* Effect.zipRight(settled, Authorize.approveRedirect(ar, userId as string, from))
    return answer(View.Redirect({ status: 303, ...redirect }), setCookie)
  })

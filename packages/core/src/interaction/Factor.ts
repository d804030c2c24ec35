/**
 * The second step of a sign-in (docs/sign-in.md, "Authenticator app"): after the right password
 * of a user with an authenticator app, or to step up a signed-in session, a page asks for a code
 * of the app or a recovery code. The session is not signed in until the code is right; the
 * password is not asked again within the step. The page's form carries who passed the first step
 * with a mark binding them to this session, this form's ticket and the account's password, so it
 * can be neither forged nor carried to another browser, form or password.
 */
import { Effect, Option } from "effect"
import * as Http from "../http/Http.js"
import { Config } from "../model/Config.js"
import { forDisplay } from "../model/DisplayText.js"
import { isDisabled, type User } from "../model/User.js"
import type * as Authorize from "../oauth/Authorize.js"
import * as Metadata from "../oauth/Metadata.js"
import * as SecondFactor from "../security/SecondFactor.js"
import * as Session from "../security/Session.js"
import * as Totp from "../security/Totp.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { atomically } from "../storage/Transaction.js"
import { UserStore } from "../storage/UserStore.js"
import { answer, cookieOf, type Frame, forbidden, formTargets, rateLimited, sessionSaving } from "./Page.js"
import type { FactorProblem, PageRequest } from "./View.js"
import { View } from "./View.js"

/** Where the authorize flow's second sign-in step posts: the sign-in form's path, for this request. */
export const flowFactorTarget = (
  req: PageRequest,
  ar: Authorize.AuthorizationRequest,
  rawQuery: string
): FactorTarget => ({
  action: req.basePath + Metadata.paths.login,
  rawQuery,
  appName: Option.some(forDisplay(ar.app.name)),
  extra: [],
  formTargets: formTargets(ar)
})

/** Who passed the first step: the account as its password was checked. */
export type FactorUser = Pick<User, "userId" | "username" | "passwordHash">

/** Where the step's form posts and what else it carries (the own pages' `action=factor`). */
export interface FactorTarget {
  readonly action: string
  readonly rawQuery: string
  readonly appName: Option.Option<string>
  readonly extra: ReadonlyArray<readonly [string, string]>
  readonly formTargets: ReadonlyArray<string>
}

/**
 * The mark of `user` for the form `txn` of `session`, bound to the account's current password too;
 * `purpose` keeps the second step's marks (`factor-step`) and the enrolment's (`enrol-step`) apart.
 */
export const markOf = (
  session: Session.Session,
  txn: string,
  user: Pick<User, "userId" | "passwordHash">,
  purpose: "factor-step" | "enrol-step" = "factor-step"
) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    hmac(
      `${serverKey}\u0000latchkey-${purpose}`,
      `${session.id}\u0000${txn}\u0000${user.userId}\u0000${user.passwordHash}`
    )
  )

/**
 * The step's page for `user`, with a new good-once ticket for its form, stored in one transaction
 * after `before` (the take of the form it answers, the first step's settled attempt).
 */
export const factorPage = <E = never, R = never>(
  req: PageRequest,
  frame: Frame,
  session: Session.Session,
  user: FactorUser,
  target: FactorTarget,
  problem: Option.Option<FactorProblem> = Option.none(),
  before: Effect.Effect<void, E, R> = Effect.void as Effect.Effect<void, E, R>
) =>
  Effect.gen(function* () {
    // A sign-in form's step: the mark, not the step, tells the code form from the password form
    const pending = yield* Session.pending(session, target.rawQuery, "login")
    const saving = yield* sessionSaving(req, session)
    yield* atomically(Effect.zipRight(before, Effect.zipRight(pending.write, saving.write)))
    const mark = yield* markOf(session, pending.value.txn, user)
    return {
      view: View.Factor({
        status: Option.isSome(problem) ? 400 : 200,
        layout: frame.layout,
        uiLocales: frame.uiLocales,
        appName: target.appName,
        username: forDisplay(user.username),
        action: target.action,
        ticket: pending.value,
        fields: [...target.extra, ["factor_user", user.userId], ["factor_mark", mark]],
        problem,
        formTargets: target.formTargets
      }),
      setCookie: saving.value
    }
  })

/** What the step's form came to. */
export type FactorOutcome =
  | { readonly _tag: "Forbidden" }
  | { readonly _tag: "Wrong"; readonly user: FactorUser }
  | { readonly _tag: "Throttled"; readonly retryAfter: number }
  | { readonly _tag: "SignedIn"; readonly setCookie: string; readonly deviceCookie: string | null }

/** A code as typed: an authenticator app's code (six digits) or else a recovery code. */
const checkCode = (userId: string, code: string, device: string | null) =>
  Totp.isCodeShaped(code.trim())
    ? SecondFactor.verify(userId, code.trim(), { device })
    : SecondFactor.useRecoveryCode(userId, code, { device })

/**
 * Check the step's form (its ticket already taken): the account it names must be enabled and
 * marked for this form, session and password (else `Forbidden`); then the code, throttled per user
 * (a trusted browser on its own budget). A right one signs the session in anew (a new id: the
 * privilege changed) with the method `totp`, and makes the browser a trusted device of the user.
 */
const checkFactor = (
  req: PageRequest,
  session: Session.Session,
  txn: string,
  form: { readonly factor_user?: string; readonly factor_mark?: string; readonly code?: string }
) =>
  Effect.gen(function* () {
    const forbidden: FactorOutcome = { _tag: "Forbidden" }
    const userId = form.factor_user ?? ""
    const found = userId === "" ? Option.none() : yield* Effect.flatMap(UserStore, (u) => u.findById(userId))
    if (Option.isNone(found) || isDisabled(found.value)) return forbidden
    const user = found.value
    if (!timingSafeEqual(form.factor_mark ?? "", yield* markOf(session, txn, user))) return forbidden
    const cookies = Http.header(req, "cookie") ?? undefined
    const here = yield* Session.device(cookies, user)
    const trusted = Option.map(here, (d) => d.nonce)
    const code = form.code ?? ""
    const checked =
      code === ""
        ? "Wrong"
        : yield* checkCode(user.userId, code, Option.getOrNull(trusted)).pipe(
            Effect.catchTags({
              WrongCode: () => Effect.succeed("Wrong" as const),
              RateLimited: (e) => Effect.succeed(e)
            })
          )
    if (checked === "Wrong") return { _tag: "Wrong", user } satisfies FactorOutcome
    if (typeof checked !== "number") {
      return { _tag: "Throttled", retryAfter: checked.retryAfter } satisfies FactorOutcome
    }
    const cookie = yield* cookieOf(req)
    const signingIn = yield* Session.signingIn(session, user, cookie, "totp")
    const device = yield* Session.atSignIn(here, user, cookie, Http.header(req, "user-agent") ?? undefined)
    // The new session and this browser's trust in one transaction
    const stored = atomically(Effect.tap(signingIn.write, (stored) => (stored ? device.write : Effect.void)))
    // D16: disabled, deleted or given a new password since the check: as a wrong code
    if (!(yield* stored)) return { _tag: "Wrong", user } satisfies FactorOutcome
    return {
      _tag: "SignedIn",
      setCookie: signingIn.value,
      deviceCookie: device.value
    } satisfies FactorOutcome
  })

/** The step's form as posted: its ticket, who passed the first step with their mark, and the code. */
export interface FactorForm {
  readonly txn: string
  readonly factor_user?: string
  readonly factor_mark?: string
  readonly code?: string
}

/**
 * The step's form answered (its ticket already taken): the page again for a wrong code, or, signed
 * in, a 303 to `signedIn` (the request again, or the own page the step came from).
 */
export const factorPost = (
  req: PageRequest,
  frame: Frame,
  session: Session.Session,
  form: FactorForm,
  target: FactorTarget,
  signedIn: string
) =>
  Effect.gen(function* () {
    const outcome = yield* checkFactor(req, session, form.txn, form)
    switch (outcome._tag) {
      case "Forbidden":
        return answer(forbidden(frame))
      case "Wrong":
        return yield* factorPage(req, frame, session, outcome.user, target, Option.some("bad_code"))
      case "Throttled":
        return answer(rateLimited(frame, outcome.retryAfter))
      case "SignedIn":
        return {
          ...answer(View.Redirect({ status: 303, location: signedIn }), outcome.setCookie),
          deviceCookie: outcome.deviceCookie
        }
    }
  })

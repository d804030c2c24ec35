/**
 * The account page's Authenticator section (docs/sign-in.md, "Authenticator app"): what it shows
 * of the user's app (none, pending with its secret, confirmed with the recovery codes left), and
 * the proof its removal and new recovery codes ask for: a code of the app or the password, each
 * checked and throttled as at sign-in.
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../http/Http.js"
import type { TemporarilyUnavailable } from "../model/OAuthError.js"
import * as SecondFactor from "../security/SecondFactor.js"
import * as Session from "../security/Session.js"
import * as Totp from "../security/Totp.js"
import { atomically } from "../storage/Transaction.js"
import { UserStore } from "../storage/UserStore.js"
import { checkPassword } from "./SignIn.js"
import type { AccountSection, AuthenticatorProblem, PageRequest } from "./View.js"

/** What the section shows this once: why its last form was refused, or the recovery codes just made. */
export interface AuthenticatorShown {
  readonly problem?: AuthenticatorProblem
  readonly recoveryCodes?: ReadonlyArray<string>
}

/** The section for the signed-in `session`'s user. */
export const authenticatorSection = (session: Session.Session, shown: AuthenticatorShown) =>
  Effect.gen(function* () {
    const userId = session.userId as string
    const { state, recoveryCodesLeft } = yield* SecondFactor.status(userId)
    const enrolment =
      state === "pending"
        ? yield* SecondFactor.pendingEnrolment(userId, session.username ?? "")
        : Option.none<SecondFactor.Enrolment>()
    return {
      _tag: "Authenticator",
      state,
      recoveryCodesLeft,
      enrolment,
      recoveryCodes: Option.fromNullable(shown.recoveryCodes),
      problem: Option.fromNullable(shown.problem)
    } satisfies AccountSection
  })

/** What checking a proof came to. */
export type Proof =
  | { readonly _tag: "Right" }
  | { readonly _tag: "Wrong" }
  | { readonly _tag: "Throttled"; readonly retryAfter: number }
  | { readonly _tag: "Busy"; readonly error: TemporarilyUnavailable }

/**
 * Check `proof` for the signed-in user: six digits are a code of their app (each step once,
 * throttled per user, a trusted browser on its own budget), anything else their password (checked
 * and throttled as a sign-in; a wrong one is a failed sign-in).
 */
export const checkProof = (req: PageRequest, session: Session.Session, proof: string) =>
  Effect.gen(function* () {
    const userId = session.userId as string
    if (proof === "") return { _tag: "Wrong" } satisfies Proof
    if (Totp.isCodeShaped(proof.trim())) {
      const owner = { userId, passwordHash: yield* passwordHashOf(userId) }
      const device = yield* Session.trustedDevice(Http.header(req, "cookie") ?? undefined, owner)
      return yield* SecondFactor.verify(userId, proof.trim(), { device: Option.getOrNull(device) }).pipe(
        Effect.as<Proof>({ _tag: "Right" }),
        Effect.catchTags({
          WrongCode: () => Effect.succeed<Proof>({ _tag: "Wrong" }),
          RateLimited: (e) => Effect.succeed<Proof>({ _tag: "Throttled", retryAfter: e.retryAfter })
        })
      )
    }
    const checked = yield* checkPassword(req, session.username ?? "", proof)
    if (Either.isRight(checked)) {
      yield* atomically(checked.right.settle)
      // The username names another account now: not this user's password
      return checked.right.user.userId === userId
        ? ({ _tag: "Right" } satisfies Proof)
        : ({ _tag: "Wrong" } satisfies Proof)
    }
    const outcome = checked.left
    switch (outcome._tag) {
      case "Refused":
        yield* atomically(outcome.first)
        return { _tag: "Wrong" } satisfies Proof
      case "Throttled":
        return { _tag: "Throttled", retryAfter: outcome.retryAfter } satisfies Proof
      case "Busy":
        return { _tag: "Busy", error: outcome.error } satisfies Proof
      default:
        return { _tag: "Wrong" } satisfies Proof
    }
  })

/** The user's password hash as stored (a trusted-device cookie is bound to it), or "" when gone. */
const passwordHashOf = (userId: string) =>
  Effect.map(
    Effect.flatMap(UserStore, (users) => users.findById(userId)),
    (u) => (Option.isSome(u) ? u.value.passwordHash : "")
  )

/**
 * Step-up (docs/sign-in.md, "Step-up"): an authorization request gets a sign-in at least as strong
 * as it needs (`Strength.required` of its `acr_values`, the operator's `LATCHKEY_MFA` and the
 * application's `require_mfa`). A signed-in user whose sign-in is weaker is asked for what is
 * missing, keeping the session until it is given: the authenticator app's code, a passkey, or,
 * with no second factor at all, to add an authenticator app in the flow (`Enrolment`), or a
 * passkey on the account page when only a passkey meets it. `prompt=none` asks nothing.
 */
import { Effect, Option } from "effect"
import * as Application from "../model/Application.js"
import { Config } from "../model/Config.js"
import type * as Authorize from "../oauth/Authorize.js"
import { showsNoPage } from "../oauth/OpenIdRequest.js"
import * as SecondFactor from "../security/SecondFactor.js"
import type * as Session from "../security/Session.js"
import * as Strength from "../security/Strength.js"
import { WebAuthn } from "../services/WebAuthn.js"
import { PasskeyStore } from "../storage/PasskeyStore.js"
import { UserStore } from "../storage/UserStore.js"
import type { FactorUser } from "./Factor.js"

/** What a signed-in session's sign-in comes to for a request. */
export type StepUp =
  /** Strong enough: the flow goes on. */
  | { readonly _tag: "Met" }
  /** Too weak under `prompt=none`: `interaction_required`. */
  | { readonly _tag: "Refuse" }
  /** The authenticator app's code is missing: the second step's page. */
  | { readonly _tag: "Factor"; readonly user: FactorUser }
  /** A passkey is what is missing: the sign-in page, which offers it. */
  | { readonly _tag: "SignIn" }
  /** Two factors are needed and the user has none: the flow's page adding an authenticator app. */
  | { readonly _tag: "EnrolApp"; readonly user: FactorUser }
  /** A passkey is needed and the user has none: set one up on the account page first. */
  | { readonly _tag: "Enrol" }

/** The level a request needs: its `acr_values`, and two factors when the operator or the application requires them. */
export const neededFor = (ar: Authorize.AuthorizationRequest) =>
  Effect.map(Config, ({ mfa }) =>
    Strength.required(
      ar.openId?.acrValues ?? undefined,
      mfa === "required" || Application.requiresMfa(ar.app)
    )
  )

/** What the signed-in `session` lacks for `ar`, and the way to give it. */
export const stepUp = (ar: Authorize.AuthorizationRequest, session: Session.Session) =>
  Effect.gen(function* () {
    const needed = yield* neededFor(ar)
    if (Strength.meets(session.method, needed)) return { _tag: "Met" } satisfies StepUp
    if (ar.openId !== undefined && showsNoPage(ar.openId)) return { _tag: "Refuse" } satisfies StepUp
    const userId = session.userId as string
    const appMeets = Strength.meets("totp", needed)
    const hasApp = appMeets && (yield* SecondFactor.required(userId))
    if (hasApp) {
      const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
      if (Option.isSome(user)) return { _tag: "Factor", user: user.value } satisfies StepUp
    }
    const passkeysOn = Option.isSome(yield* Effect.serviceOption(WebAuthn))
    const passkeys = passkeysOn ? yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(userId)) : []
    if (passkeys.length > 0) return { _tag: "SignIn" } satisfies StepUp
    // No second factor at all: an app meets two factors, never phishing resistance
    if (appMeets && !hasApp) {
      const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
      if (Option.isSome(user)) return { _tag: "EnrolApp", user: user.value } satisfies StepUp
    }
    return { _tag: "Enrol" } satisfies StepUp
  })

/**
 * The account page: for a signed-in user, sections to change the password, manage their passkeys
 * (passkeys on), see and end their sign-in sessions, see their trusted devices and forget one or
 * all others, and reach the applications they authorised (the consents page); for nobody
 * signed in, the consents page's sign-in form, which comes back to it. A section is one builder
 * of `sections` and, for its forms, cases of `accountPost`'s switch (each with its function).
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../http/Http.js"
import { passwordProblem } from "../security/Accounts.js"
import * as Audit from "../security/Audit.js"
import * as Passkeys from "../security/Passkeys.js"
import * as SecondFactor from "../security/SecondFactor.js"
import * as Session from "../security/Session.js"
import * as Strength from "../security/Strength.js"
import { nowSeconds } from "../services/internal/time.js"
import { PasswordHasher } from "../services/PasswordHasher.js"
import { PasskeyStore } from "../storage/PasskeyStore.js"
import { SessionStore } from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { atomically } from "../storage/Transaction.js"
import { UserStore } from "../storage/UserStore.js"
import { forgettingOne, forgettingOthers } from "./AccountDevices.js"
import { handleOf, passkeysOn, type SectionContext, sections } from "./AccountSections.js"
import { type AuthenticatorShown, checkProof } from "./Authenticator.js"
import { backToPage, ownFactor, ownPageFields, ownPageGet, ownSignIn, stepOf } from "./ConsentsPage.js"
import { type AccountForm, accountFormOf } from "./Forms.js"
import {
  answer,
  asUser,
  claimForm,
  cookieOf,
  currentUser,
  type Early,
  errorPage,
  type OwnPageFrame,
  ownPageFrame,
  rateLimited,
  readSessionMark,
  saveSession,
  sessionMark,
  sessionSaving,
  unavailable,
  withParam
} from "./Page.js"
import { checkPassword } from "./SignIn.js"
import {
  type AccountNotice,
  type AccountSection,
  type PageRequest,
  type PasswordProblem,
  View
} from "./View.js"

/** The layout, languages and own address of an account page request. */
export const accountFrame = (req: PageRequest) => ownPageFrame(req, "account")

const notices: ReadonlyArray<AccountNotice> = [
  "password_changed",
  "session_ended",
  "others_ended",
  "passkey_renamed",
  "passkey_removed",
  "devices_forgotten",
  "device_forgotten",
  "authenticator_removed"
]
const isNotice = (value: string): value is AccountNotice => (notices as ReadonlyArray<string>).includes(value)

/** The query parameter and the purpose of the mark (`Page.sessionMark`) of what a form of the page did. */
const doneParam = "done"
const donePurpose = "account-done"

/** Back to the page, saying (with a mark only this session can make) what the form did. */
const done = (
  frame: OwnPageFrame,
  session: Session.Session,
  notice: AccountNotice,
  setCookie: string | null
) =>
  Effect.map(sessionMark(session, donePurpose, notice), (mark) =>
    backToPage(withParam(frame.href, doneParam, mark), setCookie)
  )

/**
 * `unit` (store calls: a form's change) and the renewal of this session, committed as one
 * transaction: what `unit` answered, and the session's `Set-Cookie`.
 */
const withRenewal = <A, E, R>(req: PageRequest, session: Session.Session, unit: Effect.Effect<A, E, R>) =>
  Effect.flatMap(sessionSaving(req, session), (saving) =>
    Effect.map(atomically(Effect.zipLeft(unit, saving.write)), (a) => [a, saving.value] as const)
  )

/** The page of a signed-in user: its sections, what a form of it has just done, and a new ticket for its forms. */
const accountPage = (
  req: PageRequest,
  session: Session.Session,
  status: 200 | 400 = 200,
  problem: Option.Option<PasswordProblem> = Option.none(),
  shown: AuthenticatorShown = {}
) =>
  Effect.gen(function* () {
    const frame = accountFrame(req)
    const ctx: SectionContext = { req, frame, session, problem, shown }
    const built: Array<AccountSection> = []
    for (const section of sections) {
      const shown = yield* section(ctx)
      if (Option.isSome(shown)) built.push(shown.value)
    }
    const notice =
      status === 200
        ? Option.filter(yield* readSessionMark(session, req.query, doneParam, donePurpose), isNotice)
        : Option.none()
    const ticket = yield* Session.addPending(session, "", "consent")
    const setCookie = yield* saveSession(req, session)
    return answer(
      View.Account({ ...ownPageFields(frame, session, ticket), status, sections: built, notice }),
      setCookie
    )
  })

/** GET or HEAD of the account page. */
export const accountGet = (req: PageRequest) =>
  ownPageGet(req, accountFrame(req), (session) => accountPage(req, session))

type Form<A extends AccountForm["action"]> = Extract<AccountForm, { readonly action: A }>

/** A form of the page, once read and its ticket claimed (`take` not run yet). */
interface Claimed<A extends AccountForm["action"]> {
  readonly req: PageRequest
  readonly frame: OwnPageFrame
  /** The signed-in session the form was posted from. */
  readonly session: Session.Session
  readonly userId: string
  readonly form: Form<A>
  readonly take: Take
}

/** The take of a form's pending request (`Page.claimForm`). */
type Take = Effect.Effect<void, Early | StorageError, SessionStore>

/**
 * Change the password: the new one checked by the rules of every password, the current one by the
 * sign-in's check and throttle (a wrong one is a failed sign-in), then in one transaction the new
 * hash stored, every other session of the user ended and `password_changed` recorded; this
 * browser stays signed in, and stays a trusted device.
 */
const changePassword = ({ req, frame, session, userId, form, take }: Claimed<"password">) =>
  Effect.gen(function* () {
    const current = form.current_password ?? ""
    const next = form.new_password ?? ""
    const refuse = (
      problem: PasswordProblem,
      first: Effect.Effect<void, Early | StorageError, SessionStore> = take
    ) => Effect.zipRight(atomically(first), accountPage(req, session, 400, Option.some(problem)))
    if (current === "" || next === "" || (form.confirm_password ?? "") === "")
      return yield* refuse("missing_fields")
    if (next !== form.confirm_password) return yield* refuse("mismatch")
    if (passwordProblem(next) !== null) return yield* refuse("invalid_new")
    const checked = yield* checkPassword(req, session.username ?? "", current, take)
    if (Either.isLeft(checked)) {
      const outcome = checked.left
      if (outcome._tag === "Throttled") return answer(rateLimited(frame, outcome.retryAfter))
      if (outcome._tag === "Busy") return answer(unavailable(frame, outcome.error))
      return yield* refuse("bad_current", outcome._tag === "Refused" ? outcome.first : Effect.void)
    }
    const { user, settle } = checked.right
    // The username names another account now: the session's user is not the one checked
    if (user.userId !== userId) return yield* refuse("bad_current", Effect.void)
    const passwordHash = yield* Effect.flatMap(PasswordHasher, (h) => h.hash(next))
    // The new hash ends every trusted device (their records with it); this browser is recorded anew
    const userAgent = Http.header(req, "user-agent") ?? undefined
    const trusted = yield* Session.trusting({ userId, passwordHash }, yield* cookieOf(req), userAgent)
    const [changed, setCookie] = yield* withRenewal(
      req,
      session,
      Effect.zipRight(
        settle,
        Effect.tap(
          asUser(
            req,
            Audit.recordWith(
              Effect.flatMap(UserStore, (users) =>
                users.setPasswordHash(userId, passwordHash, { keepSession: session.idHash })
              ),
              [["password_changed", { userId, detail: "other sessions ended" }]]
            )
          ),
          (changed) => (changed ? trusted.write : Effect.void)
        )
      )
    )
    if (!changed) return backToPage(frame.href, null)
    return { ...(yield* done(frame, session, "password_changed", setCookie)), deviceCookie: trusted.value }
  })

/** End one of the user's sessions, by the handle the page listed it with; this one's end signs this browser out. */
const endSession = ({ req, frame, session, userId, form, take }: Claimed<"end_session">) =>
  Effect.gen(function* () {
    const handle = form.session ?? ""
    const sessions = yield* SessionStore
    const listed = yield* sessions.listOf(userId, yield* nowSeconds)
    let idHash: string | null = null
    for (const s of listed) if ((yield* handleOf(s.idHash)) === handle) idHash = s.idHash
    const end = (target: string) =>
      asUser(
        req,
        Audit.recordWith(sessions.endOf(userId, target), [
          [
            "session_ended",
            { userId, detail: target === session.idHash ? "this session" : "one other session" }
          ]
        ])
      )
    // Already ended, or never one of the user's: nothing to end
    const [ended, setCookie] = yield* withRenewal(
      req,
      session,
      Effect.zipRight(take, idHash === null ? Effect.succeed(false) : end(idHash))
    )
    if (!ended || idHash === session.idHash) return backToPage(frame.href, null)
    return yield* done(frame, session, "session_ended", setCookie)
  })

/** End every session of the user but this one. */
const endOthers = ({ req, frame, session, userId, take }: Claimed<"end_others">) =>
  Effect.gen(function* () {
    const sessions = yield* SessionStore
    const [, setCookie] = yield* withRenewal(
      req,
      session,
      Effect.zipRight(
        take,
        asUser(
          req,
          Audit.recordWith(sessions.endOthersOf(userId, session.idHash), [
            ["session_ended", { userId, detail: "every other session" }]
          ])
        )
      )
    )
    return yield* done(frame, session, "others_ended", setCookie)
  })

/** The page of a passkey form posted while passkeys are off: refused, nothing changed. */
const passkeysOff = (frame: OwnPageFrame, take: Take) =>
  Effect.as(
    atomically(take),
    answer(errorPage(frame, 400, "invalid_request", "unknown action", { reason: "bad_form" }))
  )

/**
 * A passkey form's change (`change`, store calls with its audit event) of one of the user's
 * passkeys, with the ticket taken and this session renewed in one transaction; a passkey not the
 * user's (or gone), or no change to make, takes only the ticket and goes back to the page.
 */
const passkeyChange = <A extends "rename_passkey" | "remove_passkey">(
  { req, frame, session, userId, take }: Claimed<A>,
  credentialId: string,
  change: Option.Option<Effect.Effect<boolean, StorageError, PasskeyStore>>,
  notice: AccountNotice
) =>
  Effect.gen(function* () {
    if (!(yield* passkeysOn)) return yield* passkeysOff(frame, take)
    const listed = yield* Effect.flatMap(PasskeyStore, (s) => s.listByUser(userId))
    const unit = listed.some((p) => p.credentialId === credentialId) ? change : Option.none()
    const [changed, setCookie] = yield* withRenewal(
      req,
      session,
      Effect.zipRight(
        take,
        Option.getOrElse(
          Option.map(unit, (u) => asUser(req, u)),
          () => Effect.succeed(false)
        )
      )
    )
    if (!changed) return backToPage(frame.href, setCookie)
    return yield* done(frame, session, notice, setCookie)
  })

/** Rename one of the user's passkeys; a blank name changes nothing. */
const renamePasskey = (claimed: Claimed<"rename_passkey">) => {
  const { userId, form } = claimed
  const credentialId = form.credential_id ?? ""
  const rename = (name: string) =>
    Audit.recordWith(
      Effect.flatMap(PasskeyStore, (s) => s.rename(userId, credentialId, name)),
      [["passkey_renamed", { userId, detail: credentialId }]]
    )
  return passkeyChange(
    claimed,
    credentialId,
    Option.map(Passkeys.typedName(form.name), rename),
    "passkey_renamed"
  )
}

/** Remove one of the user's passkeys. */
const removePasskey = (claimed: Claimed<"remove_passkey">) => {
  const { userId, form } = claimed
  const credentialId = form.credential_id ?? ""
  const remove = Audit.recordWith(
    Effect.flatMap(PasskeyStore, (s) => s.remove(userId, credentialId)),
    [["passkey_removed", { userId, detail: credentialId }]]
  )
  return passkeyChange(claimed, credentialId, Option.some(remove), "passkey_removed")
}

/**
 * Forget every other trusted device of the user (`forgettingOthers`: the device generation moved
 * on and the other records deleted, with `devices_forgotten`), with the ticket taken, in one
 * transaction; this browser stays trusted if it was.
 */
const forgetDevices = ({ req, frame, session, userId, take }: Claimed<"forget_devices">) =>
  Effect.gen(function* () {
    const forgetting = yield* forgettingOthers(req, userId)
    const [, setCookie] = yield* withRenewal(req, session, Effect.zipRight(take, forgetting.write))
    const back = yield* done(frame, session, "devices_forgotten", setCookie)
    return Option.isSome(forgetting.value) ? { ...back, deviceCookie: forgetting.value.value } : back
  })

/**
 * Forget one of the user's trusted devices, by the handle the page listed it with
 * (`forgettingOne`), with the ticket taken, in one transaction; a handle of none of theirs takes
 * only the ticket. This browser's own may be forgotten: it is simply not trusted any more.
 */
const forgetDevice = ({ req, frame, session, userId, form, take }: Claimed<"forget_device">) =>
  Effect.gen(function* () {
    const forgetting = yield* forgettingOne(req, userId, form.device ?? "")
    const unit = Option.getOrElse(forgetting, () => Effect.succeed(false))
    const [forgotten, setCookie] = yield* withRenewal(req, session, Effect.zipRight(take, unit))
    if (!forgotten) return backToPage(frame.href, setCookie)
    return yield* done(frame, session, "device_forgotten", setCookie)
  })

/** Add an authenticator app (a pending one replaced): back to the page, which shows its secret. */
const totpEnrol = ({ req, frame, session, userId, take }: Claimed<"totp_enrol">) =>
  Effect.gen(function* () {
    const [, setCookie] = yield* withRenewal(req, session, take)
    // Its own write, after the form's: sealing the secret is not a store call. FactorActive:
    // confirmed already (another tab); the page shows it
    yield* asUser(req, SecondFactor.enrol(userId, session.username ?? "")).pipe(
      Effect.catchTag("FactorActive", () => Effect.void)
    )
    return backToPage(frame.href, setCookie)
  })

/**
 * Confirm the pending app with a code: the page with the ten recovery codes, shown this once. A
 * session signed in with less than two factors (a password) is signed in anew (a new id) with the
 * method `totp` in the confirmation's transaction; a passkey's is kept as it is. When the account
 * changed since it was read (D16) the confirmation commits alone and the session is kept.
 */
const totpConfirm = ({ req, frame, session, userId, form, take }: Claimed<"totp_confirm">) =>
  Effect.gen(function* () {
    yield* atomically(take)
    const raises = !Strength.meets(session.method, Strength.mfaAcr)
    const user = raises ? yield* Effect.flatMap(UserStore, (users) => users.findById(userId)) : Option.none()
    const cookie = yield* cookieOf(req)
    const confirmed = yield* asUser(
      req,
      Effect.gen(function* () {
        const confirming = yield* SecondFactor.confirming(userId, form.code ?? "")
        const shown: AuthenticatorShown = { recoveryCodes: confirming.codes }
        if (Option.isNone(user)) return yield* Effect.as(atomically(confirming.write), { shown, session })
        const signingIn = yield* Session.signingIn(session, user.value, cookie, "totp")
        const raised = yield* atomically(Effect.zipRight(confirming.write, signingIn.write))
        return { shown, session: raised ? signingIn.session : session }
      })
    ).pipe(
      Effect.catchTags({
        WrongCode: () => Effect.succeed({ shown: { problem: "bad_code" } as AuthenticatorShown, session }),
        // Confirmed, replaced or removed since the page was shown: the page shows what is
        NoPendingFactor: () => Effect.succeed({ shown: {} as AuthenticatorShown, session }),
        RateLimited: (e) => Effect.succeed(e)
      })
    )
    if ("retryAfter" in confirmed) return answer(rateLimited(frame, confirmed.retryAfter))
    const status = confirmed.shown.problem === undefined ? 200 : 400
    return yield* accountPage(req, confirmed.session, status, Option.none(), confirmed.shown)
  })

/** Remove the app, or make new recovery codes (shown this once), once a code or the password proves the user. */
const totpChange = ({ req, frame, session, userId, form, take }: Claimed<"totp_remove" | "totp_recovery">) =>
  Effect.gen(function* () {
    yield* atomically(take)
    const proof = yield* checkProof(req, session, form.proof ?? "")
    if (proof._tag === "Throttled") return answer(rateLimited(frame, proof.retryAfter))
    if (proof._tag === "Busy") return answer(unavailable(frame, proof.error))
    if (proof._tag === "Wrong")
      return yield* accountPage(req, session, 400, Option.none(), { problem: "bad_proof" })
    if (form.action === "totp_recovery") {
      const codes = yield* asUser(req, SecondFactor.newRecoveryCodes(userId)).pipe(
        Effect.map((recoveryCodes) => ({ recoveryCodes })),
        Effect.catchTag("NoFactor", () => Effect.succeed({}))
      )
      return yield* accountPage(req, session, 200, Option.none(), codes)
    }
    const [, setCookie] = yield* withRenewal(req, session, asUser(req, SecondFactor.reset(userId)))
    return yield* done(frame, session, "authenticator_removed", setCookie)
  })

/** POST of an account page form (`AccountForm`): sign in, one of a section's actions, or sign out. */
export const accountPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const frame = accountFrame(req)
    const { form, session, take } = yield* claimForm(req, frame, "account", accountFormOf, stepOf)
    if (Either.isLeft(form)) {
      yield* atomically(take)
      return answer(errorPage(frame, 400, "invalid_request", "unknown action", { reason: "bad_form" }))
    }
    const action = form.right
    switch (action.action) {
      case "signin":
        yield* atomically(take)
        return yield* ownSignIn(req, frame, session, action)
      case "factor":
        yield* atomically(take)
        return yield* ownFactor(req, frame, session, action)
      case "signout": {
        yield* atomically(take)
        const anonymous = yield* Session.regenerate(Option.some(session), null)
        return backToPage(frame.href, yield* saveSession(req, anonymous))
      }
      default: {
        const user = yield* currentUser(Option.some(session))
        // Signed out (or disabled) since the page was shown: the page asks to sign in
        if (Option.isNone(user)) return yield* Effect.as(atomically(take), backToPage(frame.href, null))
        const claimed = { req, frame, session: user.value, userId: user.value.userId as string, take }
        // The forms of a signed-in user, by `action`: a new section adds its cases here
        switch (action.action) {
          case "password":
            return yield* changePassword({ ...claimed, form: action })
          case "end_session":
            return yield* endSession({ ...claimed, form: action })
          case "end_others":
            return yield* endOthers({ ...claimed, form: action })
          case "rename_passkey":
            return yield* renamePasskey({ ...claimed, form: action })
          case "remove_passkey":
            return yield* removePasskey({ ...claimed, form: action })
          case "forget_devices":
            return yield* forgetDevices({ ...claimed, form: action })
          case "forget_device":
            return yield* forgetDevice({ ...claimed, form: action })
          case "totp_enrol":
            return yield* totpEnrol({ ...claimed, form: action })
          case "totp_confirm":
            return yield* totpConfirm({ ...claimed, form: action })
          case "totp_remove":
          case "totp_recovery":
            return yield* totpChange({ ...claimed, form: action })
        }
      }
    }
  })

/**
 * The signed-in user's passkeys (`Paths.passkeys.account`), as JSON endpoints a page of the
 * account (or any page under the issuer) includes: GET lists them with a form ticket; a POST with
 * the ticket starts a registration (`action=options`: the options of
 * `navigator.credentials.create()`, their challenge bound to a new ticket), finishes it
 * (`action=register`, with the browser's answer and that ticket), or removes a passkey
 * (`action=remove`, `credential_id`). Every answer carries the ticket of the next post; every post
 * takes its ticket (good once), cross-site posts are refused, as the other pages' forms.
 */
import { Effect, Either, Option } from "effect"
import * as Http from "../http/Http.js"
import { Config } from "../model/Config.js"
import * as Audit from "../security/Audit.js"
import * as Passkeys from "../security/Passkeys.js"
import * as Session from "../security/Session.js"
import { nowSeconds } from "../services/internal/time.js"
import type { Registered, WebAuthn } from "../services/WebAuthn.js"
import { type Passkey, PasskeyStore } from "../storage/PasskeyStore.js"
import { atomically } from "../storage/Transaction.js"
import { type PasskeysForm, passkeysFormOf } from "./Forms.js"
import { answer, claimForm, currentUser, forbidden } from "./Page.js"
import {
  ceremonies,
  credentialOf,
  expectedFor,
  frame,
  json,
  malformed,
  notAccepted,
  refusal,
  spent,
  type Take
} from "./PasskeySignIn.js"
import type { PageRequest } from "./View.js"
import { View } from "./View.js"

/** A passkey as the endpoint lists it: never its public key. */
const shown = (p: Passkey) => ({
  credential_id: p.credentialId,
  name: p.name,
  device_type: p.deviceType,
  backed_up: p.backedUp,
  created_at: p.createdAt,
  last_used_at: p.lastUsedAt
})

const loginRequired = refusal(401, "login_required", "sign in first", { reason: "login_required" })

/** The ticket of the next post, prepared: the pages' own (`Session.pending`, no authorize request). */
const nextTicket = (session: Session.Session) => Session.pending(session, "", "consent")

/** The ticket's fields of a JSON answer. */
const ticketFields = (t: Session.FormTicket) => ({ txn: t.txn, csrf_token: t.csrf })

const listOf = (userId: string) => Effect.flatMap(PasskeyStore, (s) => s.listByUser(userId))

/** GET: the user's passkeys and a ticket; 401 for nobody signed in. */
export const passkeysGet = (req: PageRequest) =>
  Effect.gen(function* () {
    yield* ceremonies
    if (req.method === "HEAD") return answer(View.Head({ formTargets: ["'self'"] }))
    const session = yield* currentUser(yield* Session.load(Http.header(req, "cookie") ?? undefined))
    if (Option.isNone(session) || session.value.userId === null) return loginRequired
    const ticket = yield* nextTicket(session.value)
    yield* atomically(ticket.write)
    const passkeys = (yield* listOf(session.value.userId)).map(shown)
    return json(200, { passkeys, ...ticketFields(ticket.value) })
  })

type Signed = Session.Session & { readonly userId: string; readonly username: string }

/** Start a registration: the options, their challenge bound to the next ticket. */
const options = (webAuthn: WebAuthn["Type"], session: Signed, take: Take) =>
  Effect.gen(function* () {
    const ticket = yield* nextTicket(session)
    yield* atomically(Effect.zipRight(take, ticket.write))
    const challenge = yield* Passkeys.challengeOf("register", session.idHash, ticket.value.txn)
    const { rpId, rpName } = Passkeys.relyingParty((yield* Config).issuer)
    const exclude = (yield* listOf(session.userId)).map((p) => ({
      credentialId: p.credentialId,
      transports: p.transports
    }))
    const publicKey = yield* webAuthn.registrationOptions({
      rpId,
      rpName,
      challenge,
      userId: session.userId,
      userName: session.username,
      exclude
    })
    return json(200, { publicKey, ...ticketFields(ticket.value) })
  })

/** The passkey a verified registration stores. */
const passkeyOf = (userId: string, registered: Registered, name: string, now: number): Passkey => ({
  ...registered,
  transports: [...registered.transports],
  userId,
  name,
  createdAt: now,
  lastUsedAt: null
})

/** Finish a registration: verified, then stored with its audit event and the ticket taken, in one transaction. */
const register = (
  webAuthn: WebAuthn["Type"],
  session: Signed,
  form: Extract<PasskeysForm, { readonly action: "register" }>,
  createdAt: number,
  take: Take
) =>
  Effect.gen(function* () {
    const now = yield* nowSeconds
    if (!Passkeys.isLive(createdAt, now)) return yield* spent(take, answer(forbidden(frame)))
    const credential = credentialOf(form.credential)
    if (Option.isNone(credential)) return yield* spent(take, malformed)
    const challenge = yield* Passkeys.challengeOf("register", session.idHash, form.txn)
    const checked = yield* Effect.either(
      Effect.flatMap(expectedFor(challenge), (e) => webAuthn.verifyRegistration(credential.value.raw, e))
    )
    if (Either.isLeft(checked)) return yield* spent(take, notAccepted)
    const name = Passkeys.nameOf(form.name, (yield* listOf(session.userId)).length)
    const passkey = passkeyOf(session.userId, checked.right, name, now)
    const ticket = yield* nextTicket(session)
    const stored = yield* atomically(
      Effect.all([
        take,
        Effect.flatMap(PasskeyStore, (s) => s.insert(passkey)),
        Audit.record("passkey_registered", { userId: session.userId, detail: passkey.credentialId }),
        ticket.write
      ])
    ).pipe(Effect.catchTag("CredentialTaken", () => Effect.as(atomically(take), null)))
    if (stored === null)
      return refusal(400, "invalid_request", "this passkey is registered already", {
        reason: "passkey_refused"
      })
    return json(200, { passkey: shown(passkey), ...ticketFields(ticket.value) })
  })

/** Remove one of the user's passkeys, with its audit event and the ticket taken, in one transaction. */
const remove = (session: Signed, credentialId: string, take: Take) =>
  Effect.gen(function* () {
    const ticket = yield* nextTicket(session)
    const removed = yield* atomically(
      Effect.gen(function* () {
        yield* take
        const removed = yield* Effect.flatMap(PasskeyStore, (s) => s.remove(session.userId, credentialId))
        if (removed) yield* Audit.record("passkey_removed", { userId: session.userId, detail: credentialId })
        yield* ticket.write
        return removed
      })
    )
    return json(200, { removed, ...ticketFields(ticket.value) })
  })

/** POST: start or finish a registration, or remove a passkey. */
export const passkeysPost = (req: PageRequest) =>
  Effect.gen(function* () {
    const webAuthn = yield* ceremonies
    const { form, session, createdAt, take } = yield* claimForm(
      req,
      frame,
      "consents",
      passkeysFormOf,
      () => "consent"
    )
    if (Either.isLeft(form))
      return yield* spent(take, refusal(400, "invalid_request", "unknown action", { reason: "bad_form" }))
    const user = yield* currentUser(Option.some(session))
    if (Option.isNone(user) || session.userId === null || session.username === null)
      return yield* spent(take, loginRequired)
    const signed: Signed = { ...session, userId: session.userId, username: session.username }
    switch (form.right.action) {
      case "options":
        return yield* options(webAuthn, signed, take)
      case "register":
        return yield* register(webAuthn, signed, form.right, createdAt, take)
      case "remove":
        return yield* remove(signed, form.right.credential_id ?? "", take)
    }
  })

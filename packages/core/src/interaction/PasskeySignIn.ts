/**
 * A passkey sign-in from the sign-in page (docs/sign-in.md, "Passkeys"): the page's script posts
 * the page's form ticket to `Paths.passkeys.challenge`, which answers the options of
 * `navigator.credentials.get()` with a challenge bound to a new ticket of the same authorize
 * request; the browser's answer comes back with that ticket to `Paths.passkeys.login`, which takes
 * it (the challenge is good once), counts the attempt on the passkey's own throttle budget, verifies
 * the assertion and signs the user in: a complete sign-in, no password asked. JSON answers.
 */
import { Data, Effect, Either, Option, Schema } from "effect"
import { Config } from "../model/Config.js"
import { RateLimited } from "../model/OAuthError.js"
import { isDisabled } from "../model/User.js"
import { afterSignIn } from "../oauth/OpenIdRequest.js"
import * as Audit from "../security/Audit.js"
import * as Passkeys from "../security/Passkeys.js"
import * as Session from "../security/Session.js"
import * as Throttle from "../security/Throttle.js"
import { nowSeconds } from "../services/internal/time.js"
import { WebAuthn } from "../services/WebAuthn.js"
import { PasskeyStore } from "../storage/PasskeyStore.js"
import type { SessionStore } from "../storage/SessionStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { atomically } from "../storage/Transaction.js"
import { UserStore } from "../storage/UserStore.js"
import { requestAgain } from "./AuthorizeFlow.js"
import { passkeyFormOf } from "./Forms.js"
import {
  answer,
  claimForm,
  cookieOf,
  type Early,
  early,
  errorPage,
  forbidden,
  frameOf,
  rateLimited,
  validated
} from "./Page.js"
import type { PageRequest, PageResponse, Problem } from "./View.js"
import { View } from "./View.js"

/** The frame of every passkey answer: no query, no way back (the script starts over). */
export const frame = frameOf("")

/** The WebAuthn service; without one the server has no passkeys and the endpoints answer 404. */
export const ceremonies = Effect.flatMap(Effect.serviceOption(WebAuthn), (w) =>
  Option.isSome(w)
    ? Effect.succeed(w.value)
    : early(errorPage(frame, 404, "invalid_request", "not found", { reason: "not_found" }))
)

/** A JSON answer. */
export const json = (status: number, body: unknown, setCookie: string | null = null): PageResponse =>
  answer(View.Json({ status, body }), setCookie)

/** A refusal, as an error page (JSON to the script, which asks for JSON). */
export const refusal = (status: number, error: string, description: string, problem: Problem): PageResponse =>
  answer(errorPage(frame, status, error, description, problem))

/** The refusal of an answer that did not verify. */
export const notAccepted = refusal(400, "access_denied", "the passkey was not accepted", {
  reason: "passkey_refused"
})

/** The refusal of a credential that is missing or not a WebAuthn answer. */
export const malformed = refusal(400, "invalid_request", "credential is missing or malformed", {
  reason: "bad_form"
})

/** What a ceremony's answer is checked against: the issuer's relying party, and the challenge. */
export const expectedFor = (challenge: string) =>
  Effect.map(Config, ({ issuer }) => {
    const { rpId, origins } = Passkeys.relyingParty(issuer)
    return { rpId, origins, challenge }
  })

const Credential = Schema.Struct({
  id: Schema.String.pipe(Schema.maxLength(Passkeys.maxCredentialId), Schema.pattern(/^[A-Za-z0-9_-]+$/)),
  response: Schema.Struct({ userHandle: Schema.optional(Schema.NullOr(Schema.String)) })
})
const decodeCredential = Schema.decodeUnknownOption(Credential)

/** The browser's answer (`PublicKeyCredential` as JSON text): its credential id and user handle, and the whole of it. */
export const credentialOf = (text: string | undefined) =>
  Option.flatMap(Option.getRight(Either.try(() => JSON.parse(text ?? "") as unknown)), (raw) =>
    Option.map(decodeCredential(raw), (c) => ({
      id: c.id,
      userHandle: c.response.userHandle ?? null,
      raw
    }))
  )

/** The take of a form's ticket (`Page.claimForm`). */
export type Take = Effect.Effect<void, Early | StorageError, SessionStore>

/** A challenge's ticket taken, then refused: nothing else is written. */
export const spent = (take: Take, response: PageResponse) => Effect.as(atomically(take), response)

/** The options of `navigator.credentials.get()` and the ticket of their challenge. */
export const passkeyChallenge = (req: PageRequest) =>
  Effect.gen(function* () {
    const webAuthn = yield* ceremonies
    // The page's own ticket stays: its password form can still be sent
    const { session, rawQuery } = yield* claimForm(
      req,
      frame,
      "flow",
      () => null,
      () => "login"
    )
    yield* validated(rawQuery, 303)
    const ticket = yield* Session.pending(session, rawQuery, "login")
    yield* atomically(ticket.write)
    const challenge = yield* Passkeys.challengeOf("signin", session.idHash, ticket.value.txn)
    const { rpId } = Passkeys.relyingParty((yield* Config).issuer)
    const publicKey = yield* webAuthn.authenticationOptions({ rpId, challenge })
    return json(200, { publicKey, txn: ticket.value.txn, csrf_token: ticket.value.csrf })
  })

// An answer that did not verify: why (for the audit trail, never a secret), and whose passkey it named
class NotAccepted extends Data.TaggedError("NotAccepted")<{
  readonly reason: string
  readonly userId: string | null
}> {}

/** The passkey, its user and what the authenticator asserted; `NotAccepted` when refused. */
const verified = (
  webAuthn: WebAuthn["Type"],
  credential: NonNullable<Option.Option.Value<ReturnType<typeof credentialOf>>>,
  challenge: string
) =>
  Effect.gen(function* () {
    const found = yield* Effect.flatMap(PasskeyStore, (s) => s.find(credential.id))
    if (Option.isNone(found)) return yield* new NotAccepted({ reason: "unknown passkey", userId: null })
    const passkey = found.value
    const refused = (reason: string) => new NotAccepted({ reason, userId: passkey.userId })
    if (credential.userHandle !== null && credential.userHandle !== Passkeys.userHandleOf(passkey.userId))
      return yield* refused("user handle of another account")
    const user = yield* Effect.flatMap(UserStore, (s) => s.findById(passkey.userId))
    if (Option.isNone(user) || isDisabled(user.value)) return yield* refused("account disabled or removed")
    const checked = yield* Effect.either(
      Effect.flatMap(expectedFor(challenge), (expected) =>
        webAuthn.verifyAuthentication(credential.raw, expected, passkey)
      )
    )
    if (Either.isLeft(checked)) return yield* refused(checked.left.reason)
    return { passkey, user: user.value, asserted: checked.right }
  })

// The passkey's use was recorded by another sign-in, or the account changed, since it was read
class Superseded extends Data.TaggedError("Superseded") {}

/** The browser's answer to a sign-in challenge: the user signed in, or the refusal. */
export const passkeyLogin = (req: PageRequest) =>
  Effect.gen(function* () {
    const webAuthn = yield* ceremonies
    const { form, session, rawQuery, createdAt, take } = yield* claimForm(
      req,
      frame,
      "flow",
      passkeyFormOf,
      () => "login"
    )
    if (!Passkeys.isLive(createdAt, yield* nowSeconds)) return yield* spent(take, answer(forbidden(frame)))
    const ar = yield* Effect.tapErrorTag(validated(rawQuery, 303), "Early", () => atomically(take))
    const credential = credentialOf(form.credential)
    if (Option.isNone(credential)) return yield* spent(take, malformed)
    const keys = Passkeys.throttleKeys(credential.value.id, req.remoteAddress)
    // The challenge is spent with the attempt's count, in one transaction: good once, whatever follows
    const reserved = yield* Effect.either(Throttle.reserve(keys, take))
    if (Either.isLeft(reserved)) {
      if (reserved.left instanceof RateLimited) return answer(rateLimited(frame, reserved.left.retryAfter))
      return yield* Effect.fail(reserved.left)
    }
    const challenge = yield* Passkeys.challengeOf("signin", session.idHash, form.txn)
    const outcome = yield* Effect.either(verified(webAuthn, credential.value, challenge))
    if (Either.isLeft(outcome)) {
      if (outcome.left._tag !== "NotAccepted") return yield* Effect.fail(outcome.left)
      const { reason, userId } = outcome.left
      yield* Audit.record("signin_failed", { userId, detail: `passkey: ${reason}` })
      return notAccepted
    }
    const { passkey, user, asserted } = outcome.right
    const signingIn = yield* Session.signingIn(
      session,
      user,
      yield* cookieOf(req),
      Passkeys.signInMethodOf(passkey)
    )
    const at = yield* nowSeconds
    // The attempt settled, the passkey's counter moved, the new session stored: one transaction
    const stored = yield* atomically(
      Effect.gen(function* () {
        yield* Throttle.succeeded(keys)
        const use = { expected: passkey.counter, counter: asserted.counter, backedUp: asserted.backedUp, at }
        if (!(yield* Effect.flatMap(PasskeyStore, (s) => s.recordUse(passkey.credentialId, use))))
          return yield* new Superseded()
        if (!(yield* signingIn.write)) return yield* new Superseded()
        yield* Audit.record("passkey_signed_in", { userId: user.userId, detail: passkey.credentialId })
      })
    ).pipe(Effect.either)
    if (Either.isLeft(stored)) {
      if (stored.left._tag !== "Superseded") return yield* Effect.fail(stored.left)
      yield* Audit.record("signin_failed", {
        userId: user.userId,
        detail: "passkey: used or changed meanwhile"
      })
      return notAccepted
    }
    // An OpenID request's forced sign-in or max_age is met by this sign-in: not asked again
    const location = requestAgain(req, ar.openId === undefined ? rawQuery : afterSignIn(rawQuery)).href
    return json(200, { location }, signingIn.value)
  })

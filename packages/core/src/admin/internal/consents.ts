/**
 * What an operator does with a subject's tokens and a user's consents (`Admin` re-exports it):
 * revoke every token of a subject, list a user's consents, withdraw one (revoking that
 * application's tokens of the user in the same write), each change audited.
 */
import { Data, Effect, identity, Option, Schema } from "effect"
import { OpenIdParam } from "../../model/OpenId.js"
import * as Scope from "../../model/Scope.js"
import type { User } from "../../model/User.js"
import * as Audit from "../../security/Audit.js"
import { nowSeconds } from "../../services/internal/time.js"
import { type Consent, ConsentStore } from "../../storage/ConsentStore.js"
import { TokenStore } from "../../storage/TokenStore.js"
import { findApplication } from "./applications.js"
import { invalid, plain } from "./fields.js"
import { NotFound, resolveUser, type UserRef } from "./users.js"

const isOpenId = Schema.is(OpenIdParam)

/**
 * Revoke every token of one subject (`open_id`) of an application; recorded right after as
 * `subject_tokens_revoked` with the number revoked as its detail. `NotFound` for an unknown App Key.
 */
export const revokeSubjectTokens = Effect.fn("Admin.revokeSubjectTokens")(function* (
  appKey: string,
  openId: string
) {
  if (!isOpenId(openId)) return yield* invalid("open_id", "open_id must be 1-128 visible ASCII characters")
  yield* findApplication(appKey)
  const tokens = yield* TokenStore
  const revoked = yield* tokens.revokeSubject({ appKey, openId }, yield* nowSeconds)
  yield* Audit.record("subject_tokens_revoked", { appKey, openId, detail: `${revoked} tokens` })
  return revoked
})

/** Every consent a user has given, by App Key. */
export const listConsents = Effect.fn("Admin.listConsents")(function* (user: UserRef) {
  const target = yield* resolveUser(user)
  const consents = yield* Effect.flatMap(ConsentStore, (c) => c.list(target.userId))
  return { user: target, consents } satisfies {
    readonly user: User
    readonly consents: ReadonlyArray<Consent>
  }
})

/**
 * Withdraw a user's consent to an application, revoking that application's tokens of the user in
 * the same write, which records `consent_withdrawn`. `NotFound` when there is no such consent.
 */
export const withdrawConsent = Effect.fn("Admin.withdrawConsent")(function* (user: UserRef, appKey: string) {
  yield* plain("app_key", appKey)
  const target = yield* resolveUser(user)
  if (!(yield* withdrawConsentOf(target.userId, appKey))) {
    return yield* new NotFound({
      what: "consent",
      description: `user ${JSON.stringify(target.userId)} has no consent for App Key ${JSON.stringify(appKey)}`
    })
  }
  return target satisfies User
})

/** The consent was gone already (withdrawn from another tab or by an admin): nothing to record. */
class NothingWithdrawn extends Data.TaggedError("NothingWithdrawn") {}

/**
 * Withdraw the consent of the user with this id to the application (revoking its tokens for
 * them), recorded as `consent_withdrawn` with the scope it had, in the same transaction; false,
 * recording nothing, when there was none. The consents page and `withdrawConsent` both use it.
 */
export const withdrawConsentOf = Effect.fnUntraced(function* (userId: string, appKey: string) {
  const consents = yield* ConsentStore
  const given = yield* consents.find(userId, appKey)
  if (Option.isNone(given)) return false
  const gone = consents
    .withdraw(userId, appKey, yield* nowSeconds)
    .pipe(Effect.filterOrFail(identity, () => new NothingWithdrawn()))
  return yield* Audit.recordWith(gone, [
    ["consent_withdrawn", { appKey, userId, detail: Scope.format(given.value) }]
  ]).pipe(Effect.catchTag("NothingWithdrawn", () => Effect.succeed(false)))
})

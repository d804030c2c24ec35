/**
 * The review of applications and their owners, as operators manage them (`Admin`): approve,
 * reject, suspend and reinstate (`Review.moves`), each audited with the actor in the write that
 * makes it; owners added and removed; the applications a user owns (docs/platform.md).
 */
import { Effect, Either, Option } from "effect"
import { status } from "../../model/Application.js"
import * as Review from "../../model/Review.js"
import * as Audit from "../../security/Audit.js"
import { nowSeconds } from "../../services/internal/time.js"
import { ApplicationStore } from "../../storage/ApplicationStore.js"
import { invalid, plain, shown } from "./fields.js"
import { findUser, found, NotFound } from "./users.js"

/** The event each action records. */
const events = {
  approve: "application_approved",
  reject: "application_rejected",
  suspend: "application_suspended",
  reinstate: "application_reinstated"
} as const satisfies { readonly [A in Review.Action]: Audit.EventType }

const noApplication = (appKey: string) =>
  new NotFound({ what: "application", description: `no application with App Key ${JSON.stringify(appKey)}` })

/** The operator's reason, checked: required (1-500 characters, fit to show) for reject and suspend, refused for the others. */
export const checkReason = Effect.fnUntraced(function* (action: Review.Action, reason: string | undefined) {
  if (!Review.needsReason(action)) {
    if (reason !== undefined) return yield* invalid("reason", `${action} takes no reason`)
    return null
  }
  const given = (reason ?? "").trim()
  if (given.length === 0)
    return yield* invalid("reason", `${action} needs a reason, shown to the application's owners`)
  if (given.length > Review.maxReasonLength) {
    return yield* invalid("reason", `reason must be at most ${Review.maxReasonLength} characters`)
  }
  return yield* shown("reason", given)
})

/**
 * Take a review action on an application (`Review.moves`): an action its status does not allow is
 * `IllegalTransition` (409), also when another change came first; suspending or rejecting revokes
 * every token and deletes every unused code of the application in the same write
 * (`Review.endsIssued`). Recorded as `application_<approved|rejected|suspended|reinstated>` with
 * the move and the reason as its detail, in that write. The application as it is afterwards.
 */
export const reviewApplication = Effect.fn("Admin.reviewApplication")(function* (
  appKey: string,
  action: Review.Action,
  reason?: string
) {
  yield* plain("app_key", appKey)
  const why = yield* checkReason(action, reason)
  const apps = yield* ApplicationStore
  const current = yield* apps.find(appKey)
  if (Option.isNone(current)) return yield* Effect.fail(noApplication(appKey))
  const change = Review.transition(appKey, action, status(current.value), why)
  if (Either.isLeft(change)) return yield* Effect.fail(change.left)
  const { from, to } = change.right
  const detail = `${from} -> ${to}${why === null ? "" : `: ${JSON.stringify(why)}`}`
  const write = apps.setStatus(appKey, change.right, yield* nowSeconds).pipe(
    // Another change came first: refused from the status it left
    Effect.catchTag("StatusChanged", (e) => Effect.fail(Review.refusal(appKey, action, e.status))),
    Effect.flatMap((updated) =>
      Option.isNone(updated) ? Effect.fail(noApplication(appKey)) : Effect.succeed(updated.value)
    )
  )
  return yield* Audit.recordWith(write, [[events[action], { appKey, detail }]])
})

/** The user ids of an application's owners; `NotFound` for an unknown App Key. */
export const listOwners = Effect.fn("Admin.listOwners")(function* (appKey: string) {
  yield* plain("app_key", appKey)
  const apps = yield* ApplicationStore
  if (Option.isNone(yield* apps.find(appKey))) return yield* Effect.fail(noApplication(appKey))
  return yield* apps.owners(appKey)
})

/** The application (it must exist) and the user (id or username) an owner change names. */
const appAndUser = Effect.fnUntraced(function* (appKey: string, user: string) {
  yield* plain("app_key", appKey)
  const apps = yield* ApplicationStore
  if (Option.isNone(yield* apps.find(appKey))) return yield* Effect.fail(noApplication(appKey))
  return { apps, target: yield* findUser(user) }
})

/**
 * Make a user (id or username) a co-owner of an application, recorded as
 * `application_owner_added` in the same write; `NotFound` for an unknown application or user, and
 * nothing written nor recorded when they own it already. Answers whether they were added.
 */
export const addOwner = Effect.fn("Admin.addOwner")(function* (appKey: string, user: string) {
  const { apps, target } = yield* appAndUser(appKey, user)
  // Checked before the write, so that adding an owner twice records nothing
  if ((yield* apps.owners(appKey)).includes(target.userId)) return { user: target, added: false }
  const added = yield* Audit.recordWith(apps.addOwner(appKey, target.userId, yield* nowSeconds), [
    ["application_owner_added", { appKey, userId: target.userId }]
  ])
  return { user: target, added }
})

/**
 * Remove a user (id or username) from an application's owners, recorded as
 * `application_owner_removed` in the same write; `NotFound` for an unknown application or user,
 * or a user who is not an owner (nothing recorded).
 */
export const removeOwner = Effect.fn("Admin.removeOwner")(function* (appKey: string, user: string) {
  const { apps, target } = yield* appAndUser(appKey, user)
  const notOwner = () =>
    new NotFound({
      what: "owner",
      description: `user ${JSON.stringify(target.userId)} does not own application ${JSON.stringify(appKey)}`
    })
  if (!(yield* apps.owners(appKey)).includes(target.userId)) return yield* Effect.fail(notOwner())
  yield* Audit.recordWith(found(notOwner)(apps.removeOwner(appKey, target.userId)), [
    ["application_owner_removed", { appKey, userId: target.userId }]
  ])
  return target
})

/** The applications a user (by id) owns, oldest first: what the developer portal lists. */
export const applicationsOwnedBy = Effect.fn("Admin.applicationsOwnedBy")(function* (userId: string) {
  yield* plain("user_id", userId)
  return yield* Effect.flatMap(ApplicationStore, (apps) => apps.ownedBy(userId))
})

/**
 * What a developer does with their own applications (docs/platform.md), for the developer portal
 * to call: register one (pending review when the operator turned review on, `Config.appReview`),
 * change one they own (a change of its redirect URIs or scopes sends an active one back to review
 * when review is on), and list theirs. The rules on every field are `Admin`'s; the caller
 * provides `Audit.RequestInfo` with the actor `user`.
 */
import { Effect } from "effect"
import { status } from "../model/Application.js"
import { Config } from "../model/Config.js"
import * as Review from "../model/Review.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import * as Admin from "./Admin.js"

/**
 * Register an application owned by the user `userId`: `pending` when review is on, else `active`,
 * with its owner in the same write (recorded as `application_created` naming the user). A
 * developer imports no App Key or App Secret (400). `NotFound` when there is no such user.
 */
export const createApplication = Effect.fn("Developer.createApplication")(function* (
  userId: string,
  input: Admin.NewApplication
) {
  const owner = yield* Admin.findUserById(userId)
  if (input.appKey !== undefined || input.appSecret !== undefined) {
    return yield* Effect.fail(
      new Admin.InvalidField({
        field: input.appKey !== undefined ? "app_key" : "app_secret",
        description: "a developer's application gets a generated App Key and App Secret"
      })
    )
  }
  const { appReview } = yield* Config
  return yield* Admin.createOwnedApplication(input, {
    owner: owner.userId,
    status: appReview ? "pending" : "active"
  })
})

/**
 * Change an application the user `userId` owns, validated as `Admin.updateApplication`. With
 * review on, a change to the redirect URIs or scopes of an active application makes it `pending`
 * again in the same write. An application the user does not own is `NotFound`, as an unknown
 * one; a rejected or suspended one is `NotEditable` (409), also when the operator's change came
 * while this one was made.
 */
export const updateApplication = Effect.fn("Developer.updateApplication")(function* (
  userId: string,
  appKey: string,
  patch: Admin.ApplicationPatch
) {
  const app = yield* Admin.findApplication(appKey)
  const apps = yield* ApplicationStore
  if (!(yield* apps.owners(appKey)).includes(userId)) {
    return yield* Effect.fail(
      new Admin.NotFound({
        what: "application",
        description: `no application with App Key ${JSON.stringify(appKey)}`
      })
    )
  }
  if (!Review.editable(status(app))) return yield* Effect.fail(Review.notEditable(appKey, status(app)))
  const { appReview } = yield* Config
  return yield* Admin.updateApplication(appKey, patch, appReview)
})

/** The applications the user `userId` owns, oldest first. */
export const applications = (userId: string) => Admin.applicationsOwnedBy(userId)

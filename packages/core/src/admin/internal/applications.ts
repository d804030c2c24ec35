/** An application by its App Key, for the admin operations: found, or `NotFound` naming it. */
import { Effect, Option } from "effect"
import { ApplicationStore } from "../../storage/ApplicationStore.js"
import { plain } from "./fields.js"
import { NotFound } from "./users.js"

/** There is no application with this App Key (404). */
export const noApplication = (appKey: string) =>
  new NotFound({ what: "application", description: `no application with App Key ${JSON.stringify(appKey)}` })

/** The application with this App Key; `NotFound` when there is none. */
export const findApplication = Effect.fnUntraced(function* (appKey: string) {
  yield* plain("app_key", appKey)
  const app = yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(appKey))
  if (Option.isNone(app)) return yield* Effect.fail(noApplication(appKey))
  return app.value
})

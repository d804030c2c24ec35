/**
 * The names shown beside ids in what the CLI and the admin API list: application names by App
 * Key and usernames by user id, read once per distinct id.
 */
import { Effect, Option } from "effect"
import { ApplicationStore } from "../../storage/ApplicationStore.js"
import { UserStore } from "../../storage/UserStore.js"
import type { Names } from "../AdminJson.js"

const distinct = (ids: Iterable<string | null | undefined>): ReadonlyArray<string> => [
  ...new Set([...ids].filter((id): id is string => typeof id === "string"))
]

/**
 * The names of the applications and users with these App Keys and user ids; an id with no
 * application or user (deleted since) has no entry.
 */
export const namesOf = Effect.fn("Admin.namesOf")(function* (
  appKeys: Iterable<string | null | undefined>,
  userIds: Iterable<string | null | undefined>
) {
  const apps = yield* ApplicationStore
  const users = yield* UserStore
  const applications = new Map<string, string>()
  for (const appKey of distinct(appKeys)) {
    const app = yield* apps.find(appKey)
    if (Option.isSome(app)) applications.set(appKey, app.value.name)
  }
  const usernames = new Map<string, string>()
  for (const userId of distinct(userIds)) {
    const user = yield* users.findById(userId)
    if (Option.isSome(user)) usernames.set(userId, user.value.username)
  }
  return { applications, users: usernames } satisfies Names
})

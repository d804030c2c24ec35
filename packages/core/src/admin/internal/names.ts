/**
 * What the CLI and the admin API list, as both show it (`AdminJson`): with the application's name
 * beside an App Key and the username beside a user id, read once per distinct id.
 */
import { Effect, Option } from "effect"
import { ApplicationStore } from "../../storage/ApplicationStore.js"
import type { Consent } from "../../storage/ConsentStore.js"
import { UserStore } from "../../storage/UserStore.js"
import * as AdminJson from "../AdminJson.js"
import { type AuditFilter, queryAudit } from "./audit.js"

const distinct = (ids: Iterable<string | null>): ReadonlyArray<string> => [
  ...new Set([...ids].filter((id): id is string => id !== null))
]

/**
 * The names of the applications and users with these App Keys and user ids; an id with no
 * application or user (deleted since) has no entry.
 */
const namesOf = Effect.fnUntraced(function* (
  appKeys: Iterable<string | null>,
  userIds: Iterable<string | null>
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
  return { applications, users: usernames } satisfies AdminJson.Names
})

/** The events of `queryAudit(filter)` as shown, oldest first, with names beside their ids. */
export const auditEventsJson = Effect.fn("Admin.auditEventsJson")(function* (filter: AuditFilter) {
  const events = yield* queryAudit(filter)
  const names = yield* namesOf(
    events.map((e) => e.appKey),
    events.map((e) => e.userId)
  )
  return events.map((e) => AdminJson.auditEvent(e, names))
})

/** A user's consents (`listConsents`) as shown, with each application's name. */
export const consentsJson = Effect.fn("Admin.consentsJson")(function* (consents: ReadonlyArray<Consent>) {
  const names = yield* namesOf(
    consents.map((c) => c.appKey),
    []
  )
  return consents.map((c) => AdminJson.consent(c, names))
})

/** What `revokeSubjectTokens(appKey, openId)` revoked, as shown, with the application's name. */
export const revokedTokensJson = Effect.fn("Admin.revokedTokensJson")(function* (
  appKey: string,
  openId: string,
  revoked: number
) {
  const names = yield* namesOf([appKey], [])
  return {
    app_key: appKey,
    app_name: names.applications.get(appKey) ?? null,
    open_id: openId,
    revoked
  } satisfies typeof AdminJson.RevokedTokens.Type
})

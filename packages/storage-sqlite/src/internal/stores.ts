/**
 * The store services over one open database, one file a store under `stores/`. Statements are
 * prepared once; every read-modify-write runs in a BEGIN IMMEDIATE transaction.
 */
import { type SessionStore, Stores } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import type { Context } from "effect"
import { applicationStore } from "./stores/applications.js"
import { codeStore } from "./stores/codes.js"
import { consentStore } from "./stores/consents.js"
import { openIdStore } from "./stores/openIds.js"
import { sessionStore } from "./stores/sessions.js"
import { settingStore } from "./stores/settings.js"
import { type Over, sharedWrites } from "./stores/shared.js"
import { throttleStore } from "./stores/throttle.js"
import { tokenStore } from "./stores/tokens.js"
import { userStore } from "./stores/users.js"
import type { Writer } from "./writer.js"

/**
 * Prepare every statement once and build the stores over `db`; every write goes through `writer`.
 * The session store keeps `limits`.
 */
export const make = (
  db: BetterSqlite3.Database,
  writer: Writer,
  limits: SessionStore.SessionLimits
): Context.Context<Stores.Stores> => {
  const over: Over = { db, write: writer.write, shared: sharedWrites(db) }
  return Stores.make({
    applications: applicationStore(over),
    users: userStore(over),
    codes: codeStore(over),
    tokens: tokenStore(over),
    consents: consentStore(over),
    openIds: openIdStore(over),
    settings: settingStore(over),
    sessions: sessionStore(over, limits),
    throttle: throttleStore(over)
  })
}

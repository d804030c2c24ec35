/**
 * The store services over one pool, one file a store under `stores/`. Every read-modify-write is
 * one transaction; single use (a code's redemption, a refresh token's rotation, a pending
 * request's take) is decided by one conditional statement, so it holds across every instance on
 * the database at any isolation level.
 */
import { type SessionStore, Stores } from "@latchkey/core"
import type { Context } from "effect"
import type { Database } from "./database.js"
import { applicationStore } from "./stores/applications.js"
import { codeStore } from "./stores/codes.js"
import { consentStore } from "./stores/consents.js"
import { openIdStore } from "./stores/openIds.js"
import { sessionStore } from "./stores/sessions.js"
import { settingStore } from "./stores/settings.js"
import type { Over } from "./stores/shared.js"
import { throttleStore } from "./stores/throttle.js"
import { tokenStore } from "./stores/tokens.js"
import { userStore } from "./stores/users.js"

/** Build the stores over `db`; the session store keeps `limits`. */
export const make = (db: Database, limits: SessionStore.SessionLimits): Context.Context<Stores.Stores> => {
  const over: Over = { db, limits }
  return Stores.make({
    applications: applicationStore(over),
    users: userStore(over),
    codes: codeStore(over),
    tokens: tokenStore(over),
    consents: consentStore(over),
    openIds: openIdStore(over),
    settings: settingStore(over),
    sessions: sessionStore(over),
    throttle: throttleStore(over)
  })
}

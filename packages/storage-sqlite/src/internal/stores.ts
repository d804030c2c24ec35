/**
 * The store services over one open database, one file a store under `stores/`. Statements are
 * prepared once; every read-modify-write runs in a BEGIN IMMEDIATE transaction.
 */
import { type SessionStore, Stores } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import type { Context } from "effect"
import { applicationStore as applications } from "./stores/applications.js"
import { codeStore as codes } from "./stores/codes.js"
import { consentStore as consents } from "./stores/consents.js"
import { deviceStore as devices } from "./stores/devices.js"
import { factorStore as factors } from "./stores/factors.js"
import { keyStore as keys } from "./stores/keys.js"
import { logoutStore as logout } from "./stores/logout.js"
import { openIdStore as openIds } from "./stores/openIds.js"
import { operatorStore as operators } from "./stores/operators.js"
import { passkeyStore as passkeys } from "./stores/passkeys.js"
import { registrationStore as registrations } from "./stores/registrations.js"
import { scopeStore as scopes } from "./stores/scopes.js"
import { sessionStore as sessions } from "./stores/sessions.js"
import { settingStore as settings } from "./stores/settings.js"
import { type Over, sharedWrites } from "./stores/shared.js"
import { throttleStore as throttle } from "./stores/throttle.js"
import { tokenStore as tokens } from "./stores/tokens.js"
import { userStore as users } from "./stores/users.js"
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
  const over: Over = { db, write: writer.write, shared: sharedWrites(db), limits }
  return Stores.build(
    {
      applications,
      users,
      codes,
      tokens,
      consents,
      openIds,
      settings,
      sessions,
      throttle,
      keys,
      factors,
      passkeys,
      logout,
      devices,
      scopes,
      registrations,
      operators
    },
    over
  )
}

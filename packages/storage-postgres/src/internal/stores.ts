/**
 * The store services over one pool, one file a store under `stores/`. Every read-modify-write is
 * one transaction; single use (a code's redemption, a refresh token's rotation, a pending
 * request's take) is decided by one conditional statement, so it holds across every instance on
 * the database at any isolation level.
 */
import { type SessionStore, Stores } from "@latchkey/core"
import type { Context } from "effect"
import type { Database } from "./database.js"
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
import type { Over } from "./stores/shared.js"
import { throttleStore as throttle } from "./stores/throttle.js"
import { tokenStore as tokens } from "./stores/tokens.js"
import { userStore as users } from "./stores/users.js"

/** Build the stores over `db`; the session store keeps `limits`. */
export const make = (db: Database, limits: SessionStore.SessionLimits): Context.Context<Stores.Stores> => {
  const over: Over = { db, limits }
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

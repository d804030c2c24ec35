/**
 * The store services over one pool, one file a store under `stores/`. Every read-modify-write is
 * one transaction; single use (a code's redemption, a refresh token's rotation, a pending
 * request's take) is decided by one conditional statement, so it holds across every instance on
 * the database at any isolation level.
 */
import {
  ApplicationStore,
  CodeStore,
  ConsentStore,
  OpenIdStore,
  SessionStore,
  SettingStore,
  type Stores,
  Throttle,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Context } from "effect"
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
  return Context.make(ApplicationStore.ApplicationStore, applicationStore(over)).pipe(
    Context.add(UserStore.UserStore, userStore(over)),
    Context.add(CodeStore.CodeStore, codeStore(over)),
    Context.add(TokenStore.TokenStore, tokenStore(over)),
    Context.add(ConsentStore.ConsentStore, consentStore(over)),
    Context.add(OpenIdStore.OpenIdStore, openIdStore(over)),
    Context.add(SettingStore.SettingStore, settingStore(over)),
    Context.add(SessionStore.SessionStore, sessionStore(over)),
    Context.add(Throttle.ThrottleStore, throttleStore(over))
  )
}

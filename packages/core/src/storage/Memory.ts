/**
 * An in-memory storage layer: for tests, examples and embedding. Every operation
 * runs synchronously inside one Effect step, so single use holds trivially. One file a
 * store under `memory/`, all over one shared state (`memory/state.ts`).
 */
import { Context, Effect, Layer } from "effect"
import { memoryStore as memoryThrottleStore } from "../security/Throttle.js"
import { ApplicationStore } from "./ApplicationStore.js"
import type { AuditStore } from "./AuditStore.js"
import { CodeStore } from "./CodeStore.js"
import { ConsentStore } from "./ConsentStore.js"
import { applicationStore } from "./memory/applications.js"
import { makeAudit } from "./memory/audit.js"
import { codeStore } from "./memory/codes.js"
import { consentStore } from "./memory/consents.js"
import { openIdStore } from "./memory/openIds.js"
import { settingStore } from "./memory/settings.js"
import { empty } from "./memory/state.js"
import { tokenStore } from "./memory/tokens.js"
import { userStore } from "./memory/users.js"
import { OpenIdStore } from "./OpenIdStore.js"
import { defaultLimits, type SessionLimits, SessionStore } from "./SessionStore.js"
import { SettingStore } from "./SettingStore.js"
import type { Stores } from "./Stores.js"
import { ThrottleStore } from "./ThrottleStore.js"
import { TokenStore } from "./TokenStore.js"
import { UserStore } from "./UserStore.js"

export { makeAudit }

/** Build a fresh, empty set of in-memory stores. */
export const make = (limits: SessionLimits = defaultLimits): Context.Context<Stores> => {
  const state = empty(limits)
  return Context.make(ApplicationStore, applicationStore(state)).pipe(
    Context.add(UserStore, userStore(state)),
    Context.add(CodeStore, codeStore(state)),
    Context.add(TokenStore, tokenStore(state)),
    Context.add(ConsentStore, consentStore(state)),
    Context.add(OpenIdStore, openIdStore(state)),
    Context.add(SessionStore, state.sessions.store),
    Context.add(ThrottleStore, memoryThrottleStore()),
    Context.add(SettingStore, settingStore(state))
  )
}

/** A layer of a fresh in-memory audit store. */
export const auditLayer: Layer.Layer<AuditStore> = Layer.effectContext(Effect.sync(makeAudit))

/** A layer of fresh in-memory stores (a new, empty set each time it is built). */
export const layer: Layer.Layer<Stores> = Layer.effectContext(Effect.sync(() => make()))

/** A layer of fresh in-memory stores whose session store keeps other bounds. */
export const layerWith = (limits: SessionLimits): Layer.Layer<Stores> =>
  Layer.effectContext(Effect.sync(() => make(limits)))

/**
 * An in-memory storage layer: for tests, examples and embedding. Every operation
 * runs synchronously inside one Effect step, so single use holds trivially. One file a
 * store under `memory/`, all over one shared state (`memory/state.ts`).
 */
import { type Context, Effect, Layer } from "effect"
import { memoryStore as memoryThrottleStore } from "../security/Throttle.js"
import type { AuditStore } from "./AuditStore.js"
import { applicationStore as applications } from "./memory/applications.js"
import { makeAudit } from "./memory/audit.js"
import { codeStore as codes } from "./memory/codes.js"
import { consentStore as consents } from "./memory/consents.js"
import { deviceStore as devices } from "./memory/devices.js"
import { factorStore as factors } from "./memory/factors.js"
import { keyStore as keys } from "./memory/keys.js"
import { logoutStore } from "./memory/logout.js"
import { openIdStore as openIds } from "./memory/openIds.js"
import { operatorStore as operators } from "./memory/operators.js"
import { passkeyStore as passkeys } from "./memory/passkeys.js"
import { registrationStore as registrations } from "./memory/registrations.js"
import { scopeStore as scopes } from "./memory/scopes.js"
import { settingStore as settings } from "./memory/settings.js"
import { empty } from "./memory/state.js"
import { tokenStore as tokens } from "./memory/tokens.js"
import { userStore as users } from "./memory/users.js"
import { defaultLimits, type SessionLimits } from "./SessionStore.js"
import * as Stores from "./Stores.js"

export { makeAudit }

/** Build a fresh, empty set of in-memory stores. */
export const make = (limits: SessionLimits = defaultLimits): Context.Context<Stores.Stores> => {
  const state = empty(limits)
  const sessions = (held: typeof state) => held.sessions.store
  const throttle = () => memoryThrottleStore()
  const logout = (held: typeof state) => logoutStore(held.logout, held.sessions.has)
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
    state
  )
}

/** A layer of a fresh in-memory audit store. */
export const auditLayer: Layer.Layer<AuditStore> = Layer.effectContext(Effect.sync(makeAudit))

/** A layer of fresh in-memory stores (a new, empty set each time it is built). */
export const layer: Layer.Layer<Stores.Stores> = Layer.effectContext(Effect.sync(() => make()))

/** A layer of fresh in-memory stores whose session store keeps other bounds. */
export const layerWith = (limits: SessionLimits): Layer.Layer<Stores.Stores> =>
  Layer.effectContext(Effect.sync(() => make(limits)))

/**
 * The storage contract: behavioural tests every storage adapter must pass, with
 * the in-memory store of `@latchkey/core` as the reference.
 */
import { layer as sharedLayer } from "@effect/vitest"
import { SessionStore, type Stores } from "@latchkey/core"
import type { Layer } from "effect"
import { accountSessionCases } from "./internal/accountSessionCases.js"
import { adminCases } from "./internal/adminCases.js"
import { applicationCases } from "./internal/applicationCases.js"
import { backchannelCases } from "./internal/backchannelCases.js"
import { clientFieldCases } from "./internal/clientFieldCases.js"
import { codeCases } from "./internal/codeCases.js"
import { consentCases, consentGrantCases } from "./internal/consentCases.js"
import { deviceCases } from "./internal/deviceCases.js"
import { factorCases } from "./internal/factorCases.js"
import { getOrCreateCases } from "./internal/getOrCreateCases.js"
import { keyCases } from "./internal/keyCases.js"
import { lifecycleCases } from "./internal/lifecycleCases.js"
import { logoutCases } from "./internal/logoutCases.js"
import { operatorCases } from "./internal/operatorCases.js"
import { passkeyCases } from "./internal/passkeyCases.js"
import { purgeCases } from "./internal/purgeCases.js"
import { registrationCases } from "./internal/registrationCases.js"
import { reviewCases } from "./internal/reviewCases.js"
import { scopeCases } from "./internal/scopeCases.js"
import { sessionCases } from "./internal/sessionCases.js"
import { sessionLifecycleCases } from "./internal/sessionLifecycleCases.js"
import { signInCases } from "./internal/signInCases.js"
import { signInRecordCases } from "./internal/signInRecordCases.js"
import { throttleCases } from "./internal/throttleCases.js"
import { tokenCases } from "./internal/tokenCases.js"
import { trustedDeviceCases } from "./internal/trustedDeviceCases.js"
import { userCases } from "./internal/userCases.js"
import { userinfoCases } from "./internal/userinfoCases.js"
import { webOriginCases } from "./internal/webOriginCases.js"

/**
 * Register a `describe` block named `name` that runs the storage contract against
 * the layers `makeLayer` builds. `makeLayer(limits)` must build a new, empty store
 * whose session store keeps `limits`. Most tests share one layer, built with
 * `SessionStore.defaultLimits` and released after the block; each test of the
 * session bounds builds its own with small limits, and each test of the signing keys (shared by
 * the whole store) its own with the default ones.
 */
export const storageContract = (
  name: string,
  makeLayer: (limits: SessionStore.SessionLimits) => Layer.Layer<Stores.Stores, unknown>
): void => {
  const layer = makeLayer(SessionStore.defaultLimits)
  sharedLayer(layer, { timeout: "60 seconds" })(`storage contract: ${name}`, (it) => {
    applicationCases(it)
    userCases(it)
    codeCases(it)
    tokenCases(it)
    purgeCases(it)
    consentGrantCases(it)
    getOrCreateCases(it)
    adminCases(it)
    lifecycleCases(it)
    consentCases(it)
    sessionCases(it, makeLayer)
    sessionLifecycleCases(it)
    accountSessionCases(it)
    signInCases(it)
    throttleCases(it)
    clientFieldCases(it)
    webOriginCases(it)
    logoutCases(it)
    backchannelCases(it)
    keyCases(it, makeLayer)
    userinfoCases(it)
    factorCases(it)
    passkeyCases(it)
    signInRecordCases(it)
    deviceCases(it)
    trustedDeviceCases(it)
    scopeCases(it)
    reviewCases(it)
    registrationCases(it)
    operatorCases(it)
  })
}

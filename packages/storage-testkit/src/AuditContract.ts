/**
 * The audit part of the storage contract: append-only events, events stored in the
 * transaction of the change they record (`appendWith`) and never with a later one, the
 * bounded purge of events older than a cutoff (`purgeBefore`), and the filtered query
 * (`query`) with the actor of each event.
 */
import { layer as sharedLayer } from "@effect/vitest"
import type { AuditStore, Stores } from "@latchkey/core"
import type { Layer } from "effect"
import { auditAttachedCases } from "./internal/auditAttachedCases.js"
import { auditCases } from "./internal/auditCases.js"
import { auditFactorCases } from "./internal/auditFactorCases.js"
import { auditQueryCases } from "./internal/auditQueryCases.js"
import { logoutAuditCases } from "./internal/logoutCases.js"

/**
 * Register a `describe` block named `name` that runs the audit contract against
 * `layer`, which provides the stores and the audit store of one adapter.
 */
export const auditContract = (
  name: string,
  layer: Layer.Layer<Stores.Stores | AuditStore.AuditStore, unknown>
): void =>
  sharedLayer(layer, { timeout: "60 seconds" })(`audit contract: ${name}`, (it) => {
    auditCases(it)
    auditAttachedCases(it)
    auditQueryCases(it)
    auditFactorCases(it)
    logoutAuditCases(it)
  })

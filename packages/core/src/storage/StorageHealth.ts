/**
 * Whether a store answers, for readiness probes: one service every adapter provides, so a
 * server asks the same question whichever store it runs on.
 */
import { Context, Effect } from "effect"
import type { StorageError } from "./StorageError.js"

/** Health of the store. */
export class StorageHealth extends Context.Tag("@latchkey/core/StorageHealth")<
  StorageHealth,
  {
    /** A cheap read: succeeds when the store answers. */
    readonly ping: Effect.Effect<void, StorageError>
  }
>() {}

/** Succeeds when the store answers; fails with StorageError otherwise. */
export const ping: Effect.Effect<void, StorageError, StorageHealth> = Effect.flatMap(
  StorageHealth,
  (h) => h.ping
)

/**
 * The append-only audit record.
 */
import { Context, type Effect } from "effect"
import type { AuditEvent } from "../Audit.js"
import type { StorageError } from "./StorageError.js"

/** Audit events, appended and never changed. */
export class AuditStore extends Context.Tag("@latchkey/core/AuditStore")<
  AuditStore,
  {
    /** Append one event. */
    readonly append: (event: AuditEvent) => Effect.Effect<void, StorageError>
    /** The newest `limit` events (optionally of one application), oldest first. */
    readonly tail: (options: {
      readonly limit: number
      readonly appKey?: string | undefined
    }) => Effect.Effect<ReadonlyArray<AuditEvent>, StorageError>
  }
>() {}

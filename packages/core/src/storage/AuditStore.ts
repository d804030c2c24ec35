/**
 * The append-only audit record.
 */
import { Context, type Effect } from "effect"
import type { AuditEvent } from "../AuditEvent.js"
import type { StorageError } from "./StorageError.js"

/**
 * Audit events, appended and never changed. `Audit.layer` hands over events already cut to
 * `Audit.maxFieldLength` characters per free-text field (`Audit.bound`); the values may still
 * hold any character, so whoever prints them escapes them (the CLI's `audit tail` does).
 */
export class AuditStore extends Context.Tag("@latchkey/core/AuditStore")<
  AuditStore,
  {
    /** Append one event. */
    readonly append: (event: AuditEvent) => Effect.Effect<void, StorageError>
    /**
     * Run `write`, one write of a store of the same adapter, and append `events` in its
     * transaction: they are stored if and only if the write succeeds and commits.
     */
    readonly appendWith: <A, E>(
      events: ReadonlyArray<AuditEvent>,
      write: Effect.Effect<A, E>
    ) => Effect.Effect<A, E | StorageError>
    /** The newest `limit` events (optionally of one application), oldest first. */
    readonly tail: (options: {
      readonly limit: number
      readonly appKey?: string | undefined
    }) => Effect.Effect<ReadonlyArray<AuditEvent>, StorageError>
  }
>() {}

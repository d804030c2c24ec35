/**
 * The append-only audit record, bounded by a retention.
 */
import { Context, type Effect } from "effect"
import type { AuditEvent, EventType } from "../security/AuditEvent.js"
import { StorageError } from "./StorageError.js"

/** Days audit events stay append-only unless an adapter is told otherwise. */
export const defaultRetentionDays = 90
/** The longest retention an adapter takes (about ten years). */
export const maxRetentionDays = 3650

/** The retention `days` asks for (default `defaultRetentionDays`); throws StorageError unless a whole number from 1 to `maxRetentionDays`. */
export const retentionDaysOf = (days: number = defaultRetentionDays): number => {
  if (!Number.isSafeInteger(days) || days < 1 || days > maxRetentionDays) {
    throw new StorageError({
      message: `auditRetentionDays must be a whole number from 1 to ${maxRetentionDays}`
    })
  }
  return days
}

/** What `AuditStore.query` selects. */
export interface AuditQuery {
  readonly limit: number
  readonly appKey?: string | undefined
  readonly type?: EventType | undefined
  readonly since?: number | undefined
}

/**
 * Audit events, appended and never changed; deleted only once older than the retention, by
 * `purgeBefore` (the server's sweep). `Audit.layer` hands over events already cut to
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
    readonly appendWith: <A, E, R>(
      events: ReadonlyArray<AuditEvent>,
      write: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | StorageError, R>
    /** The newest `limit` events (optionally of one application), oldest first. */
    readonly tail: (options: {
      readonly limit: number
      readonly appKey?: string | undefined
    }) => Effect.Effect<ReadonlyArray<AuditEvent>, StorageError>
    /**
     * The newest `limit` events matching every filter given (of one application, of one type,
     * recorded at or after `since`, epoch seconds), newest first (by `at`, then in the order
     * appended).
     */
    readonly query: (filter: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEvent>, StorageError>
    /**
     * Delete at most `limit` events recorded before `cutoff` (`at < cutoff`, epoch seconds), oldest
     * first (by `at`, then in the order appended), and succeed with how many were deleted. A
     * `limit` that is not positive deletes nothing. An adapter that enforces a retention of its
     * own refuses, with StorageError and deleting nothing, a `cutoff` inside it: the SQLite store
     * does, in the database (`auditRetentionDays`), so rows inside the retention stay append-only
     * whatever the caller asks.
     */
    readonly purgeBefore: (cutoff: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

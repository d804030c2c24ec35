/**
 * Infrastructure failures of a store. Grants map them to `temporarily_unavailable`;
 * their cause never reaches a response.
 */
import { Schema } from "effect"

/** The store could not be reached or failed to answer (busy, disconnected, disk full). */
export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {}

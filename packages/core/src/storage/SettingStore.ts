/**
 * Server settings kept in the database, such as a generated server key.
 */
import { Context, type Effect } from "effect"
import type { StorageError } from "./StorageError.js"

/** Named settings, each written once. */
export class SettingStore extends Context.Tag("@latchkey/core/SettingStore")<
  SettingStore,
  {
    /** The stored value of `name`, storing `candidate` first when there is none. */
    readonly getOrCreate: (name: string, candidate: string) => Effect.Effect<string, StorageError>
  }
>() {}

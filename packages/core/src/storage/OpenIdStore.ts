/**
 * The open_id mappings: (App Key, user) → open_id, fixed once first derived.
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "./StorageError.js"

/** open_id mappings and server settings kept in the database. */
export class OpenIdStore extends Context.Tag("@latchkey/core/OpenIdStore")<
  OpenIdStore,
  {
    /** The recorded open_id of the user in the application, recording `candidate` when there is none. */
    readonly getOrCreate: (
      appKey: string,
      userId: string,
      candidate: string
    ) => Effect.Effect<string, StorageError>
    /** The user whose recorded open_id in the application is `openId`, if any. */
    readonly findUser: (appKey: string, openId: string) => Effect.Effect<Option.Option<string>, StorageError>
  }
>() {}

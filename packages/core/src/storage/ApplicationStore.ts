/**
 * Storage of registered applications.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Application } from "../Application.js"
import type { StorageError } from "./StorageError.js"

/** An application with this App Key exists already. */
export class AppKeyTaken extends Schema.TaggedError<AppKeyTaken>()("AppKeyTaken", {
  appKey: Schema.String
}) {}

/** Applications by App Key. */
export class ApplicationStore extends Context.Tag("@latchkey/core/ApplicationStore")<
  ApplicationStore,
  {
    /** Register a new application. */
    readonly insert: (app: Application) => Effect.Effect<void, AppKeyTaken | StorageError>
    /** The application with this App Key, if any. */
    readonly find: (appKey: string) => Effect.Effect<Option.Option<Application>, StorageError>
    /** Every application, oldest first. */
    readonly list: () => Effect.Effect<ReadonlyArray<Application>, StorageError>
    /** Replace the secret digest; false when there is no such application. */
    readonly updateSecret: (appKey: string, secretDigest: string) => Effect.Effect<boolean, StorageError>
    /** Delete the application and revoke everything issued to it; false when there was none. */
    readonly remove: (appKey: string, now: number) => Effect.Effect<boolean, StorageError>
  }
>() {}

/**
 * Storage of the signing keys (`model/SigningKey.ts`), shared by every process on the store so
 * that all of them sign with the same key and publish the same set.
 */
import { Context, type Effect } from "effect"
import type { SigningKey } from "../model/SigningKey.js"
import type { StorageError } from "./StorageError.js"

/** Signing keys. At most one key has `retiredAt` null: the signing key. */
export class KeyStore extends Context.Tag("@latchkey/core/KeyStore")<
  KeyStore,
  {
    /** Every stored key, newest first. */
    readonly list: () => Effect.Effect<ReadonlyArray<SigningKey>, StorageError>
    /**
     * Store `candidate` as the signing key if there is none, in one atomic write: of processes
     * starting together on an empty store exactly one key is kept, and the others' are dropped.
     */
    readonly initialize: (candidate: SigningKey) => Effect.Effect<void, StorageError>
    /**
     * Make `next` the signing key, in one transaction: the current signing key (if any) is retired
     * at `now` and published until `publishUntil`, and `next` is stored. Concurrent rotations
     * are serialized: each retires the key the one before it stored.
     */
    readonly rotate: (
      next: SigningKey,
      now: number,
      publishUntil: number
    ) => Effect.Effect<void, StorageError>
    /** Delete the retired keys no longer published at `now` (`publishUntil <= now`); how many. */
    readonly removeExpired: (now: number) => Effect.Effect<number, StorageError>
  }
>() {}

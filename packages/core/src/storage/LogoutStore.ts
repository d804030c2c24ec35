/**
 * OpenID Connect Back-Channel Logout 1.0: the applications each sign-in session handed an ID token
 * to (its clients), and the outbox of logout tokens to deliver once a session ended. A store writes
 * a session's deliveries in the same transaction that deletes the session, whatever deletes it (a
 * logout, a sign-out elsewhere, a disable, delete or new password, the sweep, an eviction), so no
 * ending is ever lost; delivery workers of any number of instances claim them with a lease.
 */
import { Context, type Effect, Schema } from "effect"
import type { StorageError } from "./StorageError.js"

/** An application that received an ID token in a session: what its logout token will name. */
export const SessionClient = Schema.Struct({
  appKey: Schema.String,
  /** The platform user signed in (for the audit trail; never sent). */
  userId: Schema.String,
  /** The ID token's `sub`: the application's open_id of the user. */
  sub: Schema.String,
  /** The ID token's `sid` (`Session.sidOf`). */
  sid: Schema.String
})
/** An application that received an ID token in a session. */
export type SessionClient = typeof SessionClient.Type

/** A logout token owed to one application for one ended session; times are epoch seconds. */
export const Delivery = Schema.Struct({
  ...SessionClient.fields,
  /** How many times a worker claimed it (each claim is one attempt, a crash included). */
  attempts: Schema.Number,
  /** Not claimed before this time (0: at once). */
  nextAttemptAt: Schema.Number
})
/** A logout token owed to one application for one ended session. */
export type Delivery = typeof Delivery.Type

/** What names one delivery: the session's `sid` and the application (one delivery each). */
export type DeliveryKey = Pick<Delivery, "sid" | "appKey">

/** Most applications recorded for one session; more are not recorded (and not notified). */
export const maxClientsPerSession = 32

/** The clients of sessions and the outbox of their logout tokens. */
export class LogoutStore extends Context.Tag("@latchkey/core/LogoutStore")<
  LogoutStore,
  {
    /**
     * Remember that the session `sessionHash` handed `client.appKey` an ID token: once per
     * application, at most `maxClientsPerSession` per session, and only while the session is
     * stored (a session ended meanwhile records nothing, in any store).
     */
    readonly record: (sessionHash: string, client: SessionClient) => Effect.Effect<void, StorageError>
    /**
     * Claim at most `limit` deliveries due at `now` (`nextAttemptAt <= now`) and not under another
     * claim's lease, for `claim` until `leaseUntil`: each claimed one has its `attempts` counted up
     * (the value returned). A delivery under a lease is claimed by nobody else until it ends.
     */
    readonly claim: (
      now: number,
      limit: number,
      leaseUntil: number,
      claim: string
    ) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
    /** Delete a delivery (sent, or given up) while `claim` still holds it; whether it did. */
    readonly finish: (key: DeliveryKey, claim: string) => Effect.Effect<boolean, StorageError>
    /** Release a delivery `claim` holds, due again at `at`; whether it did. */
    readonly retry: (key: DeliveryKey, claim: string, at: number) => Effect.Effect<boolean, StorageError>
    /** How many deliveries are waiting, claimed or not. */
    readonly pending: () => Effect.Effect<number, StorageError>
  }
>() {}

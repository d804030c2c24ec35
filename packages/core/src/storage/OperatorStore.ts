/**
 * Operator accounts (`Operator`) and their console sessions, keyed by the SHA-256 of the session
 * id (the store never holds the id). Changing an operator's password or deleting the operator ends
 * their sessions in the same write.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Operator, Role } from "../model/Operator.js"
import type { StorageError } from "./StorageError.js"

/** A console session as stored. Times are epoch seconds. */
export const ConsoleSession = Schema.Struct({
  /** SHA-256 of the session id the console's cookie carries. */
  idHash: Schema.String,
  /** The operator signed in. */
  operator: Schema.String,
  createdAt: Schema.Number,
  /** When it ends, whatever happens meanwhile. */
  expiresAt: Schema.Number
})
/** A console session as stored. */
export type ConsoleSession = typeof ConsoleSession.Type

/** An operator with this name exists already: nothing was written. */
export class OperatorNameTaken extends Schema.TaggedError<OperatorNameTaken>()("OperatorNameTaken", {
  name: Schema.String
}) {}

/** Operators by name, and console sessions by id digest. */
export class OperatorStore extends Context.Tag("@latchkey/core/OperatorStore")<
  OperatorStore,
  {
    /** Record a new operator; `OperatorNameTaken`, and nothing written (its audit events neither), when the name is taken. */
    readonly insert: (operator: Operator) => Effect.Effect<void, OperatorNameTaken | StorageError>
    /** The operator with this name, if any. */
    readonly find: (name: string) => Effect.Effect<Option.Option<Operator>, StorageError>
    /** Every operator, by name (code unit order). */
    readonly list: () => Effect.Effect<ReadonlyArray<Operator>, StorageError>
    /** Change an operator's role; false, and nothing changed, when there is no such operator. */
    readonly setRole: (name: string, role: Role) => Effect.Effect<boolean, StorageError>
    /** Change an operator's password hash and end every session of theirs; false when there is no such operator. */
    readonly setPasswordHash: (name: string, passwordHash: string) => Effect.Effect<boolean, StorageError>
    /** Delete an operator and every session of theirs; false when there is no such operator. */
    readonly remove: (name: string) => Effect.Effect<boolean, StorageError>
    /**
     * Store a new session of `session.operator` and record the sign-in at `session.createdAt`;
     * false, and nothing stored, when the operator is gone.
     */
    readonly startSession: (session: ConsoleSession) => Effect.Effect<boolean, StorageError>
    /** The session with this id digest, if any and not expired at `now`. */
    readonly findSession: (
      idHash: string,
      now: number
    ) => Effect.Effect<Option.Option<ConsoleSession>, StorageError>
    /** End a session; false when there is none with this digest. */
    readonly endSession: (idHash: string) => Effect.Effect<boolean, StorageError>
    /** Delete at most `limit` sessions expired at `now`: how many. */
    readonly purgeExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

/**
 * Storage of the users' second factors: the authenticator app (its secret sealed) and the
 * digests of its recovery codes. Every write is one transaction; single use (a time step, a
 * recovery code) is decided by one conditional statement, so it holds across instances.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { TotpFactor } from "../model/TotpFactor.js"
import type { StorageError } from "./StorageError.js"

/** The user has a confirmed authenticator app already: nothing was written (reset it first). */
export class FactorActive extends Schema.TaggedError<FactorActive>()("FactorActive", {
  userId: Schema.String
}) {}

/** There is no pending enrolment of the user with that secret (confirmed already, replaced or reset): nothing was written. */
export class NotPending extends Schema.TaggedError<NotPending>()("NotPending", {
  userId: Schema.String
}) {}

/** The user has no unused recovery code with that digest: nothing was written. */
export class UnknownRecoveryCode extends Schema.TaggedError<UnknownRecoveryCode>()("UnknownRecoveryCode", {
  userId: Schema.String
}) {}

/** The user has no confirmed authenticator app: nothing was written. */
export class NoFactor extends Schema.TaggedError<NoFactor>()("NoFactor", {
  userId: Schema.String
}) {}

/**
 * The users' authenticator apps and recovery codes. A write that finds nothing to change fails
 * (rather than answering false) where it is audited, so its events are dropped with it.
 */
export class FactorStore extends Context.Tag("@latchkey/core/FactorStore")<
  FactorStore,
  {
    /** The user's authenticator app, pending or confirmed, if any. */
    readonly find: (userId: string) => Effect.Effect<Option.Option<TotpFactor>, StorageError>
    /**
     * Store `factor` (pending) as the user's enrolment, replacing a pending one; `FactorActive`,
     * nothing written, when the user's is confirmed.
     */
    readonly enrol: (factor: TotpFactor) => Effect.Effect<void, FactorActive | StorageError>
    /**
     * Confirm the user's pending enrolment whose secret is still `sealedSecret` with a code of
     * `step` at `now`, and store the recovery codes' digests, in one transaction: `NotPending`,
     * nothing written, when there is no such pending enrolment (confirmed already, replaced or reset).
     */
    readonly confirm: (
      userId: string,
      sealedSecret: string,
      step: number,
      recoveryDigests: ReadonlyArray<string>,
      now: number
    ) => Effect.Effect<void, NotPending | StorageError>
    /**
     * Accept a code of time step `step` of the user's confirmed authenticator app, once: true
     * when its last accepted step was before `step` (and now is `step`), false otherwise, in one
     * conditional write (of two uses of one step, exactly one is accepted).
     */
    readonly useStep: (userId: string, step: number) => Effect.Effect<boolean, StorageError>
    /** Use the user's recovery code with this digest, once (it is gone now): `UnknownRecoveryCode` when there is no such unused one. */
    readonly useRecoveryCode: (
      userId: string,
      digest: string
    ) => Effect.Effect<void, UnknownRecoveryCode | StorageError>
    /**
     * Replace every recovery code of the user's confirmed authenticator app with these digests, in
     * one transaction: `NoFactor`, nothing written, when the user has no confirmed app.
     */
    readonly replaceRecoveryCodes: (
      userId: string,
      recoveryDigests: ReadonlyArray<string>
    ) => Effect.Effect<void, NoFactor | StorageError>
    /** How many of the user's recovery codes are unused. */
    readonly recoveryCodesLeft: (userId: string) => Effect.Effect<number, StorageError>
    /**
     * Remove the user's authenticator app (pending or confirmed) and every recovery code of
     * theirs, in one transaction; false when there was nothing to remove.
     */
    readonly reset: (userId: string) => Effect.Effect<boolean, StorageError>
  }
>() {}

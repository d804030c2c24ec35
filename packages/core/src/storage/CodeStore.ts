/**
 * Storage of authorization codes, with the atomic single-use redemption.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { AuthorizationCode } from "../model/AuthorizationCode.js"
import type { Token } from "../model/Token.js"
import type { ConsentWithdrawn } from "./ConsentStore.js"
import type { StorageError } from "./StorageError.js"
import type { UserInactive } from "./UserStore.js"

/** No redeemable code with this hash: unknown or expired. */
export class CodeNotFound extends Schema.TaggedError<CodeNotFound>()("CodeNotFound", {}) {}

/** The code was used before: the caller revokes its family (RFC 6749 §4.1.2). */
export class CodeAlreadyUsed extends Schema.TaggedError<CodeAlreadyUsed>()("CodeAlreadyUsed", {
  familyId: Schema.String
}) {}

/** Authorization codes by the SHA-256 of their value. */
export class CodeStore extends Context.Tag("@latchkey/core/CodeStore")<
  CodeStore,
  {
    /** Save a newly issued code. */
    readonly insert: (code: AuthorizationCode) => Effect.Effect<void, StorageError>
    /** The code with this hash, used or not, if it is still stored. */
    readonly find: (codeHash: string) => Effect.Effect<Option.Option<AuthorizationCode>, StorageError>
    /**
     * Mark the code used and save the tokens issued for it, all in one atomic step.
     * Succeeds at most once per code, however many callers race; the losers get
     * `CodeAlreadyUsed` and nothing is written. Like `TokenStore.insert`, refused with
     * `UserInactive` (after the code's own state) when a token's user is disabled or gone; then
     * with `ConsentWithdrawn` (D15) when the code's user's consent to its application does not
     * stand or does not cover the code's scope. The tokens name the code's user.
     */
    readonly redeem: (
      codeHash: string,
      now: number,
      tokens: ReadonlyArray<Token>
    ) => Effect.Effect<void, CodeNotFound | CodeAlreadyUsed | UserInactive | ConsentWithdrawn | StorageError>
    /** Delete at most `limit` codes that expired before `now`; returns how many. */
    readonly purgeExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
  }
>() {}

/** The memory store of authorization codes. */
import { Effect, Option } from "effect"
import { CodeAlreadyUsed, CodeNotFound, type CodeStore } from "../CodeStore.js"
import type { ConsentWithdrawn } from "../ConsentStore.js"
import { StorageError } from "../StorageError.js"
import type { UserInactive } from "../UserStore.js"
import { guard, inactiveUser, insertTokens, purge, type State, withdrawn } from "./state.js"

/** Codes in `state.codes`; a redemption saves its tokens in the same step. */
export const codeStore = (state: State): CodeStore["Type"] => {
  const { codes } = state
  return {
    insert: (code) =>
      guard(() => {
        if (codes.has(code.codeHash)) throw new StorageError({ message: "duplicate code hash" })
        codes.set(code.codeHash, {
          ...code,
          nonce: code.nonce ?? null,
          authTime: code.authTime ?? null,
          sid: code.sid ?? null
        })
      }),
    find: (codeHash) => Effect.sync(() => Option.fromNullable(codes.get(codeHash))),
    redeem: (codeHash, now, issued) =>
      Effect.suspend(
        (): Effect.Effect<
          void,
          CodeNotFound | CodeAlreadyUsed | UserInactive | ConsentWithdrawn | StorageError
        > => {
          const code = codes.get(codeHash)
          if (code === undefined) return Effect.fail(new CodeNotFound())
          if (code.usedAt !== null) return Effect.fail(new CodeAlreadyUsed({ familyId: code.familyId }))
          if (code.expiresAt <= now) return Effect.fail(new CodeNotFound())
          const refused = inactiveUser(state, issued) ?? withdrawn(state, code)
          if (refused !== undefined) return Effect.fail(refused)
          return guard(() => {
            insertTokens(state, issued)
            codes.set(codeHash, { ...code, usedAt: now })
          })
        }
      ),
    purgeExpired: (now, limit) => Effect.sync(() => purge(codes, (c) => c.expiresAt <= now, limit))
  }
}

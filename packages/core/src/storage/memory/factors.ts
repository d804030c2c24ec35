/** The memory store of second factors. */
import { Effect, Option } from "effect"
import { FactorActive, type FactorStore, NoFactor, NotPending, UnknownRecoveryCode } from "../FactorStore.js"
import type { State } from "./state.js"

/** Authenticator apps in `state.factors`, recovery codes in `state.recoveryCodes`; each operation is one synchronous step. */
export const factorStore = (state: State): FactorStore["Type"] => {
  const { factors, recoveryCodes } = state
  return {
    find: (userId) => Effect.sync(() => Option.fromNullable(factors.get(userId))),
    enrol: (factor) =>
      Effect.suspend(() => {
        if (factors.get(factor.userId)?.confirmedAt != null)
          return Effect.fail(new FactorActive({ userId: factor.userId }))
        factors.set(factor.userId, { ...factor })
        return Effect.void
      }),
    confirm: (userId, sealedSecret, step, recoveryDigests, now) =>
      Effect.suspend(() => {
        const f = factors.get(userId)
        if (f === undefined || f.confirmedAt !== null || f.sealedSecret !== sealedSecret)
          return Effect.fail(new NotPending({ userId }))
        factors.set(userId, { ...f, confirmedAt: now, lastStep: step })
        recoveryCodes.set(userId, new Set(recoveryDigests))
        return Effect.void
      }),
    useStep: (userId, step) =>
      Effect.sync(() => {
        const f = factors.get(userId)
        if (f === undefined || f.confirmedAt === null || (f.lastStep !== null && f.lastStep >= step))
          return false
        factors.set(userId, { ...f, lastStep: step })
        return true
      }),
    useRecoveryCode: (userId, digest) =>
      recoveryCodes.get(userId)?.delete(digest) === true
        ? Effect.void
        : Effect.fail(new UnknownRecoveryCode({ userId })),
    replaceRecoveryCodes: (userId, recoveryDigests) =>
      Effect.suspend(() => {
        if (factors.get(userId)?.confirmedAt == null) return Effect.fail(new NoFactor({ userId }))
        recoveryCodes.set(userId, new Set(recoveryDigests))
        return Effect.void
      }),
    recoveryCodesLeft: (userId) => Effect.sync(() => recoveryCodes.get(userId)?.size ?? 0),
    reset: (userId) =>
      Effect.sync(() => {
        const codes = recoveryCodes.delete(userId)
        return factors.delete(userId) || codes
      })
  }
}

/** The SQLite store of second factors. */
import { FactorStore, Tables } from "@latchkey/core"
import { attempt } from "../database.js"
import { insertSql, optional, params, selectFrom } from "../rows.js"
import { refuse } from "../writer.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  find: db.prepare(selectFrom(Tables.totpFactors, "WHERE user_id = ?")),
  // A pending enrolment is replaced; a confirmed one is kept (no row changes).
  enrol: db.prepare(
    `${insertSql(Tables.totpFactors)} ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret,
      created_at = excluded.created_at, last_step = NULL WHERE totp_factors.confirmed_at IS NULL`
  ),
  confirm: db.prepare(
    `UPDATE totp_factors SET confirmed_at = ?, last_step = ?
      WHERE user_id = ? AND sealed_secret = ? AND confirmed_at IS NULL`
  ),
  // RFC 6238 §5.2: each step once, decided by this one conditional statement.
  useStep: db.prepare(
    `UPDATE totp_factors SET last_step = ?
      WHERE user_id = ? AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < ?)`
  ),
  isConfirmed: db
    .prepare("SELECT count(*) FROM totp_factors WHERE user_id = ? AND confirmed_at IS NOT NULL")
    .pluck(),
  insertCode: db.prepare(insertSql(Tables.recoveryCodes)),
  useCode: db.prepare("DELETE FROM recovery_codes WHERE user_id = ? AND code_digest = ?"),
  codesLeft: db.prepare("SELECT count(*) FROM recovery_codes WHERE user_id = ?").pluck(),
  deleteCodes: db.prepare("DELETE FROM recovery_codes WHERE user_id = ?"),
  deleteFactor: db.prepare("DELETE FROM totp_factors WHERE user_id = ?")
})

/**
 * Authenticator apps in `totp_factors`, recovery codes (digests) in `recovery_codes`. Every write
 * goes through the writer (BEGIN IMMEDIATE), so a confirmation's update and its codes commit
 * together, and a reset removes both at once.
 */
export const factorStore = (over: Over): FactorStore.FactorStore["Type"] => {
  const { write } = over
  const q = prepare(over)
  return {
    find: (userId) => attempt(() => optional(Tables.totpFactors, q.find.get(userId))),
    enrol: (factor) =>
      write(() => {
        if (q.enrol.run(params(Tables.totpFactors, factor)).changes === 0)
          refuse(new FactorStore.FactorActive({ userId: factor.userId }))
      }),
    confirm: (userId, sealedSecret, step, digests, now) =>
      write(() => {
        if (q.confirm.run(now, step, userId, sealedSecret).changes === 0)
          refuse(new FactorStore.NotPending({ userId }))
        q.deleteCodes.run(userId)
        for (const codeDigest of digests)
          q.insertCode.run(params(Tables.recoveryCodes, { userId, codeDigest }))
      }),
    useStep: (userId, step) => write(() => q.useStep.run(step, userId, step).changes === 1),
    useRecoveryCode: (userId, digest) =>
      write(() => {
        if (q.useCode.run(userId, digest).changes === 0)
          refuse(new FactorStore.UnknownRecoveryCode({ userId }))
      }),
    replaceRecoveryCodes: (userId, digests) =>
      write(() => {
        if (q.isConfirmed.get(userId) === 0) refuse(new FactorStore.NoFactor({ userId }))
        q.deleteCodes.run(userId)
        for (const codeDigest of digests)
          q.insertCode.run(params(Tables.recoveryCodes, { userId, codeDigest }))
      }),
    recoveryCodesLeft: (userId) => attempt(() => q.codesLeft.get(userId) as number),
    reset: (userId) =>
      write(() => {
        const codes = q.deleteCodes.run(userId).changes
        return q.deleteFactor.run(userId).changes + codes > 0
      })
  }
}

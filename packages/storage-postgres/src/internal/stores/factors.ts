/** The PostgreSQL store of second factors. */
import { FactorStore, Tables } from "@latchkey/core"
import { Effect } from "effect"
import { changed, first, insertSql, params, selectFrom } from "../rows.js"
import type { Over } from "./shared.js"

const findSql = selectFrom(Tables.totpFactors, "WHERE user_id = $1")
// A pending enrolment is replaced; a confirmed one is kept (no row changes).
const enrolSql = `${insertSql(Tables.totpFactors)} ON CONFLICT (user_id) DO UPDATE SET
  sealed_secret = excluded.sealed_secret, created_at = excluded.created_at, last_step = NULL
  WHERE totp_factors.confirmed_at IS NULL`
const confirmSql = `UPDATE totp_factors SET confirmed_at = $1, last_step = $2
  WHERE user_id = $3 AND sealed_secret = $4 AND confirmed_at IS NULL`
// RFC 6238 §5.2: each step once, decided by this one conditional statement (a concurrent use of
// the same step waits for the row and finds last_step moved on).
const useStepSql = `UPDATE totp_factors SET last_step = $1
  WHERE user_id = $2 AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < $1)`
const deleteCodesSql = "DELETE FROM recovery_codes WHERE user_id = $1"

/**
 * Authenticator apps in `totp_factors`, recovery codes (digests) in `recovery_codes`. An audited
 * write that finds nothing to change fails inside its transaction, so its events roll back with it.
 */
export const factorStore = ({ db }: Over): FactorStore.FactorStore["Type"] => ({
  find: (userId) => Effect.flatMap(db.lookup(findSql, [userId]), (r) => first(Tables.totpFactors, r.rows)),
  enrol: (factor) =>
    db.transaction((tx) =>
      Effect.flatMap(tx.query(enrolSql, params(Tables.totpFactors, factor)), (r) =>
        changed(r) === 1 ? Effect.void : Effect.fail(new FactorStore.FactorActive({ userId: factor.userId }))
      )
    ),
  confirm: (userId, sealedSecret, step, digests, now) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const confirmed = yield* tx.query(confirmSql, [now, step, userId, sealedSecret])
        if (changed(confirmed) === 0) return yield* Effect.fail(new FactorStore.NotPending({ userId }))
        yield* tx.query(deleteCodesSql, [userId])
        if (digests.length === 0) return
        const rows = digests.flatMap((codeDigest) => params(Tables.recoveryCodes, { userId, codeDigest }))
        yield* tx.query(insertSql(Tables.recoveryCodes, digests.length), rows)
      })
    ),
  useStep: (userId, step) => Effect.map(db.write(useStepSql, [step, userId]), (r) => changed(r) === 1),
  useRecoveryCode: (userId, digest) =>
    db.transaction((tx) =>
      Effect.flatMap(
        tx.query("DELETE FROM recovery_codes WHERE user_id = $1 AND code_digest = $2", [userId, digest]),
        (r) => (changed(r) === 1 ? Effect.void : Effect.fail(new FactorStore.UnknownRecoveryCode({ userId })))
      )
    ),
  replaceRecoveryCodes: (userId, digests) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        // The factor's row locked: a reset at the same time waits, or is seen
        const factor = yield* tx.query(
          "SELECT 1 FROM totp_factors WHERE user_id = $1 AND confirmed_at IS NOT NULL FOR UPDATE",
          [userId]
        )
        if (factor.rows.length === 0) return yield* Effect.fail(new FactorStore.NoFactor({ userId }))
        yield* tx.query(deleteCodesSql, [userId])
        if (digests.length === 0) return
        const rows = digests.flatMap((codeDigest) => params(Tables.recoveryCodes, { userId, codeDigest }))
        yield* tx.query(insertSql(Tables.recoveryCodes, digests.length), rows)
      })
    ),
  recoveryCodesLeft: (userId) =>
    Effect.map(
      db.lookup("SELECT count(*)::int AS left FROM recovery_codes WHERE user_id = $1", [userId]),
      (r) => Number(r.rows[0]?.left ?? 0)
    ),
  reset: (userId) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        const codes = yield* tx.query(deleteCodesSql, [userId])
        const factor = yield* tx.query("DELETE FROM totp_factors WHERE user_id = $1", [userId])
        return changed(codes) + changed(factor) > 0
      })
    )
})

/** The PostgreSQL store of authorization codes. */
import { CodeStore, type ConsentStore, Tables, type Token, type UserStore } from "@latchkey/core"
import { Effect } from "effect"
import type { Tx } from "../database.js"
import { attemptSync } from "../errors.js"
import { bound, changed, first, insertSql, params, purgeSql, selectFrom } from "../rows.js"
import { consentRefusal, insertTokens, lockUsers } from "../tokenWrites.js"
import type { Over } from "./shared.js"

// D1 and D5 (docs/security.md): the conditional write decides the winner; its row state,
// not a timestamp, decides reuse. The tokens are saved in the transaction that consumes the code.
const redeem = (tx: Tx, codeHash: string, now: number, tokens: ReadonlyArray<Token.Token>) =>
  Effect.gen(function* () {
    const refused = yield* lockUsers(tx, tokens)
    const consumed = yield* tx.query(
      `UPDATE authorization_codes SET used_at = $2
        WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id, app_key, scope`,
      [codeHash, now]
    )
    const code = consumed.rows[0]
    if (code === undefined) {
      const state = yield* tx.query(
        "SELECT used_at IS NOT NULL AS used, family_id FROM authorization_codes WHERE code_hash = $1",
        [codeHash]
      )
      const row = state.rows[0]
      return yield* row === undefined || row.used !== true
        ? Effect.fail(new CodeStore.CodeNotFound())
        : Effect.fail(new CodeStore.CodeAlreadyUsed({ familyId: String(row.family_id) }))
    }
    if (refused !== undefined) return yield* Effect.fail(refused)
    // D15: only under the code's consent, read after the user's lock (consentRefusal)
    const scope = yield* attemptSync(() => Tables.scopeOf(code.scope))
    const under = { userId: String(code.user_id), appKey: String(code.app_key), scope }
    const withdrawn = yield* consentRefusal(tx, under)
    if (withdrawn !== undefined) return yield* Effect.fail(withdrawn)
    yield* insertTokens(tx, tokens)
  })

/** Codes in the `authorization_codes` table; a redemption saves its tokens in its transaction. */
export const codeStore = ({ db }: Over): CodeStore.CodeStore["Type"] => ({
  insert: (c) => Effect.asVoid(db.write(insertSql(Tables.codes), params(Tables.codes, c))),
  find: (codeHash) =>
    Effect.flatMap(db.lookup(selectFrom(Tables.codes, "WHERE code_hash = $1"), [codeHash]), (r) =>
      first(Tables.codes, r.rows)
    ),
  redeem: (codeHash, now, tokens) =>
    db.transaction<
      void,
      | CodeStore.CodeNotFound
      | CodeStore.CodeAlreadyUsed
      | UserStore.UserInactive
      | ConsentStore.ConsentWithdrawn
    >((tx) => redeem(tx, codeHash, now, tokens)),
  purgeExpired: (now, limit) =>
    Effect.map(db.write(purgeSql("authorization_codes", ["code_hash"]), [now, bound(limit)]), changed)
})

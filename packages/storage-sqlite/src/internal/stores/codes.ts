/** The SQLite store of authorization codes. */
import { CodeStore, type ConsentStore, Tables, type Token, type UserStore } from "@latchkey/core"
import { attempt } from "../database.js"
import { bound, insertSql, optional, params, purgeSql, selectFrom } from "../rows.js"
import { refuse } from "../writer.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  insert: db.prepare(insertSql(Tables.codes)),
  find: db.prepare(selectFrom(Tables.codes, "WHERE code_hash = ?")),
  // D1 and D5 (docs/security.md): the conditional write decides the winner; its row state, not a timestamp, decides reuse.
  consume: db.prepare(`UPDATE authorization_codes SET used_at = ?
    WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING user_id, app_key, scope`),
  state: db.prepare(
    "SELECT used_at AS usedAt, family_id AS familyId FROM authorization_codes WHERE code_hash = ?"
  ),
  purge: db.prepare(purgeSql("authorization_codes"))
})

/** Codes in the `authorization_codes` table; a redemption saves its tokens in its transaction. */
export const codeStore = (over: Over): CodeStore.CodeStore["Type"] => {
  const { write, shared } = over
  const q = prepare(over)
  // Run only as a write's job, whose savepoint (or transaction) a refusal rolls back: the code's use
  // is undone when the insert is refused, without a savepoint of its own.
  const redeem = (codeHash: string, now: number, tokens: ReadonlyArray<Token.Token>): void => {
    const code = q.consume.get(now, codeHash, now) as
      | { user_id: string; app_key: string; scope: string }
      | undefined
    if (code === undefined) {
      const state = q.state.get(codeHash) as { usedAt: number | null; familyId: string } | undefined
      if (state === undefined || state.usedAt === null) refuse(new CodeStore.CodeNotFound())
      else refuse(new CodeStore.CodeAlreadyUsed({ familyId: state.familyId }))
      return
    }
    // The tokens are saved in the transaction that consumes the code, under the code's consent.
    const scope = Tables.scopeOf(code.scope)
    shared.insertTokens(tokens, { userId: code.user_id, appKey: code.app_key, scope })
  }
  return {
    insert: (c) =>
      write(() => {
        q.insert.run(params(Tables.codes, c))
      }),
    find: (codeHash) => attempt(() => optional(Tables.codes, q.find.get(codeHash))),
    redeem: (codeHash, now, tokens) =>
      write<
        void,
        | CodeStore.CodeNotFound
        | CodeStore.CodeAlreadyUsed
        | UserStore.UserInactive
        | ConsentStore.ConsentWithdrawn
      >(() => redeem(codeHash, now, tokens)),
    purgeExpired: (now, limit) => write(() => q.purge.run(now, bound(limit)).changes)
  }
}

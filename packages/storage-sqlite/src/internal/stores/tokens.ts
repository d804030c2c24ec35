/** The SQLite store of access and refresh tokens. */
import { type ConsentStore, Tables, type Token, TokenStore, type UserStore } from "@latchkey/core"
import { attempt } from "../database.js"
import { bound, optional, purgeSql, selectFrom } from "../rows.js"
import { refuse } from "../writer.js"
import type { Over } from "./shared.js"

const prepare = ({ db }: Over) => ({
  find: db.prepare(selectFrom(Tables.tokens, "WHERE kind = ? AND token_hash = ?")),
  // The grace window is the only time rule; otherwise rotated_at IS NULL decides.
  rotate: db.prepare(`UPDATE tokens SET rotated_at = coalesce(rotated_at, @now)
    WHERE kind = 'refresh' AND token_hash = @hash AND revoked_at IS NULL AND expires_at > @now
      AND (rotated_at IS NULL OR (@grace > 0 AND rotated_at >= @now - @grace))
    RETURNING family_id`),
  refreshState: db.prepare(`SELECT revoked_at AS revokedAt, expires_at AS expiresAt, family_id AS familyId
    FROM tokens WHERE kind = 'refresh' AND token_hash = ?`),
  revokeFamily: db.prepare("UPDATE tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL"),
  revokeByOpenId: db.prepare(
    "UPDATE tokens SET revoked_at = ? WHERE app_key = ? AND open_id = ? AND revoked_at IS NULL"
  ),
  revoke: db.prepare(
    "UPDATE tokens SET revoked_at = ? WHERE kind = ? AND token_hash = ? AND revoked_at IS NULL"
  ),
  purge: db.prepare(purgeSql("tokens"))
})

/** Tokens in the `tokens` table, by kind and hash. */
export const tokenStore = (over: Over): TokenStore.TokenStore["Type"] => {
  const { write, shared } = over
  const q = prepare(over)
  // Run only as a write's job, whose savepoint (or transaction) a refusal rolls back: the rotation
  // is undone when the insert is refused, without a savepoint of its own.
  const rotate = (hash: string, now: number, grace: number, tokens: ReadonlyArray<Token.Token>): void => {
    if (q.rotate.get({ hash, now, grace }) === undefined) {
      const state = q.refreshState.get(hash) as
        | { revokedAt: number | null; expiresAt: number; familyId: string }
        | undefined
      if (state === undefined || state.revokedAt !== null || state.expiresAt <= now) {
        refuse(new TokenStore.TokenInactive())
      } else refuse(new TokenStore.RefreshAlreadyRotated({ familyId: state.familyId }))
    }
    shared.insertTokens(tokens)
  }
  return {
    insert: (tokens) => write<void, UserStore.UserInactive>(() => shared.insertTokens(tokens)),
    insertUnderConsent: (tokens, under) =>
      write<void, UserStore.UserInactive | ConsentStore.ConsentWithdrawn>(() =>
        shared.insertTokens(tokens, under)
      ),
    find: (kind, tokenHash) => attempt(() => optional(Tables.tokens, q.find.get(kind, tokenHash))),
    rotate: (refreshHash, now, grace, tokens) =>
      write<void, TokenStore.TokenInactive | TokenStore.RefreshAlreadyRotated | UserStore.UserInactive>(() =>
        rotate(refreshHash, now, grace, tokens)
      ),
    // Committed before the caller fails the request.
    revokeFamily: (familyId, now) => write(() => q.revokeFamily.run(now, familyId).changes),
    revokeSubject: (subject, now) =>
      write(() =>
        "openId" in subject
          ? q.revokeByOpenId.run(now, subject.appKey, subject.openId).changes
          : shared.revokeAppUser(subject.appKey, subject.userId, now)
      ),
    revoke: (kind, tokenHash, now) => write(() => q.revoke.run(now, kind, tokenHash).changes > 0),
    purgeExpired: (now, limit) => write(() => q.purge.run(now, bound(limit)).changes)
  }
}

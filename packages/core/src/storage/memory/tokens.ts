/** The memory store of access and refresh tokens. */
import { Effect, Option } from "effect"
import type { ConsentWithdrawn } from "../ConsentStore.js"
import type { StorageError } from "../StorageError.js"
import { RefreshAlreadyRotated, TokenInactive, type TokenStore } from "../TokenStore.js"
import type { UserInactive } from "../UserStore.js"
import {
  guard,
  inactiveUser,
  insertTokens,
  purge,
  revokeWhere,
  type State,
  tokenKey,
  withdrawn
} from "./state.js"

/** Tokens in `state.tokens`, by kind and hash. */
export const tokenStore = (state: State): TokenStore["Type"] => {
  const { tokens } = state
  return {
    insert: (ts) =>
      Effect.suspend((): Effect.Effect<void, UserInactive | StorageError> => {
        const inactive = inactiveUser(state, ts)
        return inactive === undefined ? guard(() => insertTokens(state, ts)) : Effect.fail(inactive)
      }),
    insertUnderConsent: (ts, under) =>
      Effect.suspend((): Effect.Effect<void, UserInactive | ConsentWithdrawn | StorageError> => {
        const refused = inactiveUser(state, ts) ?? withdrawn(state, under)
        return refused === undefined ? guard(() => insertTokens(state, ts)) : Effect.fail(refused)
      }),
    find: (kind, hash) => Effect.sync(() => Option.fromNullable(tokens.get(tokenKey(kind, hash)))),
    rotate: (hash, now, grace, issued) =>
      Effect.suspend(
        (): Effect.Effect<void, TokenInactive | RefreshAlreadyRotated | UserInactive | StorageError> => {
          const t = tokens.get(tokenKey("refresh", hash))
          if (t === undefined || t.revokedAt !== null || t.expiresAt <= now)
            return Effect.fail(new TokenInactive())
          if (t.rotatedAt !== null && !(grace > 0 && t.rotatedAt >= now - grace)) {
            return Effect.fail(new RefreshAlreadyRotated({ familyId: t.familyId }))
          }
          const inactive = inactiveUser(state, issued)
          if (inactive !== undefined) return Effect.fail(inactive)
          return guard(() => {
            insertTokens(state, issued)
            tokens.set(tokenKey("refresh", hash), { ...t, rotatedAt: t.rotatedAt ?? now })
          })
        }
      ),
    revokeFamily: (familyId, now) =>
      Effect.sync(() => revokeWhere(state, (t) => t.familyId === familyId, now)),
    revokeSubject: (subject, now) =>
      Effect.sync(() =>
        revokeWhere(
          state,
          (t) =>
            t.appKey === subject.appKey &&
            ("openId" in subject ? t.openId === subject.openId : t.userId === subject.userId),
          now
        )
      ),
    revoke: (kind, hash, now) =>
      Effect.sync(() => {
        const t = tokens.get(tokenKey(kind, hash))
        if (t === undefined || t.revokedAt !== null) return false
        tokens.set(tokenKey(kind, hash), { ...t, revokedAt: now })
        return true
      }),
    purgeExpired: (now, limit) => Effect.sync(() => purge(tokens, (t) => t.expiresAt <= now, limit))
  }
}

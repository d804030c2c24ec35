/** The memory store of remembered consents. */
import { Effect, Option } from "effect"
import * as Scope from "../../model/Scope.js"
import type { ConsentStore } from "../ConsentStore.js"
import { pairKey, retireCodes, revokeWhere, type State } from "./state.js"

/** Consents in `state.consents`, by user and App Key; a withdrawal retires codes and revokes tokens. */
export const consentStore = (state: State): ConsentStore["Type"] => {
  const { consents } = state
  return {
    find: (userId, appKey) =>
      Effect.sync(() => Option.fromNullable(consents.get(pairKey(userId, appKey))?.scope)),
    grant: (userId, appKey, scope, now) =>
      Effect.sync(() => {
        const k = pairKey(userId, appKey)
        consents.set(k, { scope: Scope.union(consents.get(k)?.scope ?? Scope.empty, scope), updatedAt: now })
      }),
    // By App Key, in code unit order
    list: (userId) =>
      Effect.sync(() =>
        [...consents.entries()]
          .filter(([k]) => k.startsWith(pairKey(userId, "")))
          .map(([k, c]) => ({ appKey: k.slice(userId.length + 1), scope: c.scope, updatedAt: c.updatedAt }))
          .sort((a, b) => (a.appKey < b.appKey ? -1 : a.appKey > b.appKey ? 1 : 0))
      ),
    withdraw: (userId, appKey, now) =>
      Effect.sync(() => {
        if (!consents.delete(pairKey(userId, appKey))) return false
        retireCodes(state, userId, appKey)
        revokeWhere(state, (t) => t.appKey === appKey && t.userId === userId, now)
        return true
      })
  }
}

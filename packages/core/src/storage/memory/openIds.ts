/** The memory store of open_ids. */
import { Effect, Option } from "effect"
import type { OpenIdStore } from "../OpenIdStore.js"
import { pairKey, type State } from "./state.js"

/** open_ids in `state.openIds`, and their reverse in `state.usersByOpenId`. */
export const openIdStore = (state: State): OpenIdStore["Type"] => ({
  getOrCreate: (appKey, userId, candidate) =>
    Effect.sync(() => {
      const k = pairKey(appKey, userId)
      const found = state.openIds.get(k)
      if (found !== undefined) return found
      state.openIds.set(k, candidate)
      state.usersByOpenId.set(pairKey(appKey, candidate), userId)
      return candidate
    }),
  findUser: (appKey, openId) =>
    Effect.sync(() => Option.fromNullable(state.usersByOpenId.get(pairKey(appKey, openId))))
})

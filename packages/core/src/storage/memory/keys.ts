/** The memory store of signing keys. */
import { Effect } from "effect"
import type { KeyStore } from "../KeyStore.js"
import type { State } from "./state.js"

/** Signing keys in `state.keys`, oldest first; each operation is one synchronous step. */
export const keyStore = (state: State): KeyStore["Type"] => ({
  list: () => Effect.sync(() => [...state.keys].reverse()),
  initialize: (candidate) =>
    Effect.sync(() => {
      if (!state.keys.some((k) => k.retiredAt === null)) state.keys.push(candidate)
    }),
  rotate: (next, now, publishUntil) =>
    Effect.sync(() => {
      state.keys.forEach((k, i) => {
        if (k.retiredAt === null) state.keys[i] = { ...k, retiredAt: now, publishUntil }
      })
      state.keys.push(next)
    }),
  removeExpired: (now) =>
    Effect.sync(() => {
      const kept = state.keys.filter(
        (k) => k.retiredAt === null || k.publishUntil === null || k.publishUntil > now
      )
      const removed = state.keys.length - kept.length
      state.keys.splice(0, state.keys.length, ...kept)
      return removed
    })
})

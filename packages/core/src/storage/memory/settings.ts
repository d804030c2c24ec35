/** The memory store of settings. */
import { Effect } from "effect"
import type { SettingStore } from "../SettingStore.js"
import type { State } from "./state.js"

/** Settings in `state.settings`: the first value stored under a name stays. */
export const settingStore = (state: State): SettingStore["Type"] => ({
  getOrCreate: (name, candidate) =>
    Effect.sync(() => {
      const found = state.settings.get(name)
      if (found !== undefined) return found
      state.settings.set(name, candidate)
      return candidate
    })
})

/** The PostgreSQL store of settings. */
import type { SettingStore } from "@latchkey/core"
import { Effect } from "effect"
import type { Over } from "./shared.js"

/** Settings in the `settings` table: the first value stored under a name stays. */
export const settingStore = ({ db }: Over): SettingStore.SettingStore["Type"] => ({
  getOrCreate: (name, candidate) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        yield* tx.query("INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", [
          name,
          candidate
        ])
        const found = yield* tx.query("SELECT value FROM settings WHERE name = $1", [name])
        return String(found.rows[0]?.value ?? candidate)
      })
    )
})

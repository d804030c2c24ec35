/** The SQLite store of settings. */
import type { SettingStore } from "@latchkey/core"
import type { Over } from "./shared.js"

/** Settings in the `settings` table: the first value stored under a name stays. */
export const settingStore = ({ db, write }: Over): SettingStore.SettingStore["Type"] => {
  const insert = db.prepare("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
  const find = db.prepare("SELECT value FROM settings WHERE name = ?").pluck()
  const getOrCreate = db.transaction((name: string, candidate: string): string => {
    insert.run(name, candidate)
    return find.get(name) as string
  })
  return { getOrCreate: (name, candidate) => write(() => getOrCreate(name, candidate)) }
}

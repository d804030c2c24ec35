/** The SQLite store of open_ids. */
import type { OpenIdStore } from "@latchkey/core"
import { Option } from "effect"
import { attempt } from "../database.js"
import type { Over } from "./shared.js"

/** open_ids in the `open_ids` table: the first one stored for an (App Key, user) stays. */
export const openIdStore = ({ db, write }: Over): OpenIdStore.OpenIdStore["Type"] => {
  const insert = db.prepare(
    "INSERT INTO open_ids (app_key, user_id, open_id) VALUES (?, ?, ?) ON CONFLICT (app_key, user_id) DO NOTHING"
  )
  const find = db.prepare("SELECT open_id FROM open_ids WHERE app_key = ? AND user_id = ?").pluck()
  const findUser = db
    .prepare("SELECT user_id FROM open_ids WHERE app_key = ? AND open_id = ? LIMIT 1")
    .pluck()
  const getOrCreate = db.transaction((appKey: string, userId: string, candidate: string): string => {
    insert.run(appKey, userId, candidate)
    return find.get(appKey, userId) as string
  })
  return {
    getOrCreate: (appKey, userId, candidate) => write(() => getOrCreate(appKey, userId, candidate)),
    findUser: (appKey, openId) =>
      attempt(() => Option.fromNullable(findUser.get(appKey, openId) as string | undefined))
  }
}

/** The PostgreSQL store of open_ids. */
import type { OpenIdStore } from "@latchkey/core"
import { Effect, Option } from "effect"
import type { Over } from "./shared.js"

/** open_ids in the `open_ids` table: the first one stored for an (App Key, user) stays. */
export const openIdStore = ({ db }: Over): OpenIdStore.OpenIdStore["Type"] => ({
  // The insert waits for a concurrent one of the same pair; the read after it sees the winner.
  getOrCreate: (appKey, userId, candidate) =>
    db.transaction((tx) =>
      Effect.gen(function* () {
        yield* tx.query(
          `INSERT INTO open_ids (app_key, user_id, open_id) VALUES ($1, $2, $3)
            ON CONFLICT (app_key, user_id) DO NOTHING`,
          [appKey, userId, candidate]
        )
        const found = yield* tx.query("SELECT open_id FROM open_ids WHERE app_key = $1 AND user_id = $2", [
          appKey,
          userId
        ])
        return String(found.rows[0]?.open_id ?? candidate)
      })
    ),
  findUser: (appKey, openId) =>
    Effect.map(
      db.lookup("SELECT user_id FROM open_ids WHERE app_key = $1 AND open_id = $2 LIMIT 1", [appKey, openId]),
      (r) => Option.map(Option.fromNullable(r.rows[0]), (row) => String(row.user_id))
    )
})

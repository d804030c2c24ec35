/**
 * Users the contract's token writes name: a store saves a user's token only while that user exists
 * and is enabled (D13).
 */
import { UserStore } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"

/** Insert a fresh enabled user and answer their id. */
export const insertUser: Effect.Effect<string, unknown, UserStore.UserStore> = Effect.flatMap(
  UserStore.UserStore,
  (users) => {
    const u = F.user()
    return Effect.as(users.insert(u), u.userId)
  }
)

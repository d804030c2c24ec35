/**
 * Users the contract's token writes name: a store saves a user's token only while that user exists
 * and is enabled (D13); and the consents its codes are issued under: a code redeems only while its
 * user's consent to its application covers its scope (D15).
 */
import { type AuthorizationCode, CodeStore, ConsentStore, UserStore } from "@latchkey/core"
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

/** Insert `code` with the consent it is issued under (its user's, to its application, for its scope). */
export const insertCode = (
  code: AuthorizationCode.AuthorizationCode
): Effect.Effect<void, unknown, CodeStore.CodeStore | ConsentStore.ConsentStore> =>
  Effect.gen(function* () {
    const consents = yield* ConsentStore.ConsentStore
    yield* consents.grant(code.userId, code.appKey, code.scope, code.issuedAt)
    yield* Effect.flatMap(CodeStore.CodeStore, (codes) => codes.insert(code))
  })

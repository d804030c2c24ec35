/**
 * The claims of the userinfo endpoint (OpenID Connect Core 1.0 §5.3): about the user an access
 * token was granted by, as the application knows them (its open_id as `sub`), chosen by the
 * token's scope through the same table as the ID token's (`Claims.forScope`).
 */
import { Effect, Option } from "effect"
import type * as Scope from "../model/Scope.js"
import { isDisabled } from "../model/User.js"
import { OpenIdStore } from "../storage/OpenIdStore.js"
import type { StorageError } from "../storage/StorageError.js"
import { UserStore } from "../storage/UserStore.js"
import * as Claims from "./Claims.js"

/** What an accepted access token says about its subject (the fields of `Bearer.Principal` read here). */
export interface Holder {
  readonly clientId: string
  readonly openId: string | null
  /** `user` when a platform user granted the token. */
  readonly subjectType: "user" | "application" | null
  readonly scope: Scope.ScopeSet
}

/**
 * The userinfo answer for a token's holder: `sub` and the claims of its scope, or none when no
 * enabled platform user stands behind the token (an application's own token, whose open_id it
 * asserted or has none, or a user since deleted or disabled).
 */
export const claims = (
  holder: Holder
): Effect.Effect<Option.Option<Readonly<Record<string, string>>>, StorageError, OpenIdStore | UserStore> =>
  Effect.gen(function* () {
    if (holder.openId === null || holder.subjectType !== "user") return Option.none()
    const sub = holder.openId
    const userId = yield* Effect.flatMap(OpenIdStore, (store) => store.findUser(holder.clientId, sub))
    if (Option.isNone(userId)) return Option.none()
    const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId.value))
    if (Option.isNone(user) || isDisabled(user.value)) return Option.none()
    return Option.some({ sub, ...Claims.forScope(user.value, holder.scope) })
  })

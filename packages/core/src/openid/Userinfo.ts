/**
 * The claims of the userinfo endpoint (OpenID Connect Core 1.0 §5.3): about the user an access
 * token was granted by, as the application knows them (its open_id as `sub`), chosen by the
 * token's scope through the same table as the ID token's (`Claims.forScope`).
 */
import { type Context, Effect, Option } from "effect"
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

/** The services `claims` reads. */
export interface Readers {
  readonly openIds: Context.Tag.Service<OpenIdStore>
  readonly users: Context.Tag.Service<UserStore>
}

/**
 * `claims` with the stores given: the rules as plain code between the two reads, as an endpoint
 * runs it in its request's services.
 */
export const claimsWith = (
  readers: Readers,
  holder: Holder
): Effect.Effect<Option.Option<Readonly<Record<string, string>>>, StorageError> => {
  if (holder.openId === null || holder.subjectType !== "user") return Effect.succeed(Option.none())
  const sub = holder.openId
  return Effect.flatMap(readers.openIds.findUser(holder.clientId, sub), (userId) =>
    Option.isNone(userId)
      ? Effect.succeed(Option.none())
      : Effect.map(readers.users.findById(userId.value), (user) =>
          Option.isNone(user) || isDisabled(user.value)
            ? Option.none()
            : Option.some({ sub, ...Claims.forScope(user.value, holder.scope) })
        )
  )
}

/**
 * The userinfo answer for a token's holder: `sub` and the claims of its scope, or none when no
 * enabled platform user stands behind the token (an application's own token, whose open_id it
 * asserted or has none, or a user since deleted or disabled).
 *
 * @public
 */
export const claims = (
  holder: Holder
): Effect.Effect<Option.Option<Readonly<Record<string, string>>>, StorageError, OpenIdStore | UserStore> =>
  Effect.flatMap(OpenIdStore, (openIds) =>
    Effect.flatMap(UserStore, (users) => claimsWith({ openIds, users }, holder))
  )

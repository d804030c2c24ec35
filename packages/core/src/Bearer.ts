/**
 * Resource-server side: checking a Bearer access token (RFC 6750).
 */
import { Effect, Option } from "effect"
import { sha256 } from "./Digest.js"
import { nowSeconds } from "./internal/time.js"
import { InsufficientScope, InvalidRequest, InvalidToken } from "./OAuthError.js"
import { caps } from "./requests/Params.js"
import * as Scope from "./Scope.js"
import { ApplicationStore } from "./storage/ApplicationStore.js"
import { TokenStore } from "./storage/TokenStore.js"

/** Who an accepted access token speaks for. */
export interface Principal {
  readonly clientId: string
  readonly openId: string | null
  readonly scope: Scope.ScopeSet
  readonly expiresAt: number
}

/**
 * Verify `Authorization: Bearer <token>` and that the token carries every scope
 * in `required`.
 */
export const verify = Effect.fnUntraced(function* (
  authorization: string | undefined,
  required: Scope.ScopeSet
) {
  if (authorization === undefined)
    return yield* Effect.fail(new InvalidRequest({ description: "a Bearer token is required" }))
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)
  if (m === null || (m[1] as string).length > caps.token) {
    return yield* Effect.fail(new InvalidRequest({ description: "malformed Authorization header" }))
  }
  const tokens = yield* TokenStore
  const found = yield* tokens.find("access", yield* sha256(m[1] as string))
  const now = yield* nowSeconds
  const invalid = new InvalidToken({ description: "the access token is invalid, expired or revoked" })
  if (Option.isNone(found) || found.value.revokedAt !== null || found.value.expiresAt <= now)
    return yield* Effect.fail(invalid)
  const t = found.value
  if (Option.isNone(yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(t.appKey))))
    return yield* Effect.fail(invalid)
  if (!Scope.isSubset(required, t.scope)) {
    return yield* Effect.fail(
      new InsufficientScope({
        description: "the access token lacks a required scope",
        scope: Scope.format(required)
      })
    )
  }
  return { clientId: t.appKey, openId: t.openId, scope: t.scope, expiresAt: t.expiresAt } satisfies Principal
})

/**
 * open_id: the stable, per-application pseudonym of a platform user (docs/decisions.md).
 */
import { Effect, Schema } from "effect"
import { hmac } from "../services/Digest.js"
import { OpenIdStore } from "../storage/OpenIdStore.js"
import { Config } from "./Config.js"

/** An open_id sent by a caller: 1–128 visible ASCII characters, `!` to `~` (docs/decisions.md). */
export const OpenIdParam = Schema.String.pipe(Schema.pattern(/^[\x21-\x7E]{1,128}$/))

/** The open_id `forUser` records for `userId` in `appKey` when none is recorded yet: HMAC(server key, app key ‖ user id). */
export const candidate = (appKey: string, userId: string) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    Effect.map(hmac(serverKey, `open_id\u0000${appKey}\u0000${userId}`), (digest) => digest.slice(0, 32))
  )

/**
 * The open_id of `userId` in `appKey`: its `candidate`, recorded on first use so it stays the
 * same even if the server key later changes.
 */
export const forUser = Effect.fnUntraced(function* (appKey: string, userId: string) {
  const first = yield* candidate(appKey, userId)
  return yield* Effect.flatMap(OpenIdStore, (store) => store.getOrCreate(appKey, userId, first))
})

/**
 * Client authentication at the token, introspection and revocation endpoints:
 * HTTP Basic only (RFC 6749 §2.3.1), keyed digests compared in constant time.
 */
import { Effect, Either, Option } from "effect"
import type { Application } from "./Application.js"
import * as Audit from "./Audit.js"
import { Config } from "./Config.js"
import { hmac, timingSafeEqual } from "./Digest.js"
import { InvalidClient, InvalidRequest } from "./OAuthError.js"
import * as BasicAuth from "./requests/BasicAuth.js"
import type { Params } from "./requests/Form.js"
import { ApplicationStore } from "./storage/ApplicationStore.js"
import * as Throttle from "./Throttle.js"

/** The keyed digest of an App Secret, as stored. */
export const secretDigest = (appKey: string, appSecret: string): Effect.Effect<string, never, Config> =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(serverKey, `app_secret\u0000${appKey}\u0000${appSecret}`))

const failed = new InvalidClient({ description: "client authentication failed" })

/**
 * Authenticate the application from the Authorization header. Credentials also
 * sent in the body are `invalid_request`; an unknown App Key and a wrong secret
 * get the same answer. Failures are throttled per App Key from one address and
 * per address; while throttled, even the right secret from there gets 429.
 */
export const authenticate = Effect.fnUntraced(function* (
  authorization: string | undefined,
  params: Params,
  address: string | undefined
) {
  const creds = yield* Either.match(BasicAuth.decode(authorization), {
    onLeft: (e) => Effect.fail(e),
    onRight: (c) => Effect.succeed(c)
  })
  // RFC 6749 §2.3.1: one authentication method per request
  if (
    params.client_secret !== undefined ||
    (params.client_id !== undefined && params.client_id !== creds.appKey)
  ) {
    return yield* Effect.fail(
      new InvalidRequest({ description: "client credentials must be sent only in the Authorization header" })
    )
  }
  const keys = Throttle.clientKeys(creds.appKey, address)
  yield* Throttle.check(keys)
  const apps = yield* ApplicationStore
  const found = yield* apps.find(creds.appKey)
  const digest = yield* secretDigest(creds.appKey, creds.appSecret)
  const expected = Option.match(found, { onNone: () => "", onSome: (a) => a.secretDigest })
  const ok = timingSafeEqual(digest, expected.length > 0 ? expected : digest.replace(/./g, "!"))
  if (Option.isNone(found) || !ok) {
    // One audit event per lockout, not one per refused request
    if (yield* Throttle.failure(keys))
      yield* Audit.record("client_auth_throttled", { appKey: creds.appKey.slice(0, 128) })
    yield* Audit.record("client_auth_failed", { appKey: creds.appKey.slice(0, 128) })
    return yield* Effect.fail(failed)
  }
  return found.value satisfies Application
})

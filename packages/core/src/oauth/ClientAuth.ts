/**
 * Client authentication at the token, introspection and revocation endpoints: a confidential
 * application uses HTTP Basic only (RFC 6749 §2.3.1), keyed digests compared in constant time;
 * a public application (RFC 6749 §2.1) names itself with `client_id` and sends no Authorization
 * header and no secret.
 */
import { Effect, Either, Option } from "effect"
import { type Application, isPublic, livePreviousSecret } from "../model/Application.js"
import { Config } from "../model/Config.js"
import { InvalidClient, InvalidRequest } from "../model/OAuthError.js"
import * as Audit from "../security/Audit.js"
import * as Throttle from "../security/Throttle.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { nowSeconds } from "../services/internal/time.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import * as BasicAuth from "./requests/BasicAuth.js"
import type { Params } from "./requests/Form.js"

/** The keyed digest of an App Secret, as stored. */
export const secretDigest = (appKey: string, appSecret: string): Effect.Effect<string, never, Config> =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(serverKey, `app_secret\u0000${appKey}\u0000${appSecret}`))

const failed = new InvalidClient({ description: "client authentication failed" })

/** The answer to a request with no Authorization header that names no public application. */
const basicRequired = new InvalidClient({
  description:
    "client authentication failed: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1)"
})

/** The answer to a request with `client_secret` in the body and no Authorization header. */
const secretInBody = new InvalidClient({
  description:
    "client authentication failed: send the App Secret with HTTP Basic (RFC 6749 §2.3.1), not in the body"
})

/** The answer to a public application sending `client_secret`: it has none. */
const publicWithSecret = new InvalidClient({
  description: "client authentication failed: a public application has no App Secret; send only client_id"
})

/**
 * The application a request without an Authorization header names: the public application of
 * its `client_id`, else `invalid_client` (the same answer for a confidential application and an
 * unknown App Key, so it tells nothing about which App Keys exist). Nothing is a secret check
 * here, so nothing counts toward throttling.
 */
const publicClient = Effect.fnUntraced(function* (params: Params) {
  const appKey = params.client_id
  const app =
    appKey === undefined || appKey === ""
      ? null
      : Option.getOrNull(yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(appKey)))
  if (app !== null && isPublic(app)) {
    if (params.client_secret !== undefined) return yield* Effect.fail(publicWithSecret)
    return app
  }
  return yield* Effect.fail(params.client_secret !== undefined ? secretInBody : basicRequired)
})

/**
 * The application `appKey` names, once the throttle check of `keys` passed (`RateLimited` while
 * one is locked): in one read when the application store keeps the throttle's counters
 * (`ApplicationStore.findForClient`), else the check and then the lookup.
 */
const checkedFind = Effect.fnUntraced(function* (appKey: string, keys: ReadonlyArray<Throttle.Key>) {
  const apps = yield* ApplicationStore
  const { counters } = yield* Throttle.ThrottleStore
  const read =
    apps.findForClient !== undefined && counters !== undefined
      ? yield* apps.findForClient(appKey, keys, counters)
      : null
  if (read === null || read.entries === null) {
    yield* Throttle.check(keys)
    return read?.app ?? (yield* apps.find(appKey))
  }
  yield* Throttle.checkEntries(keys, read.entries)
  return read.app
})

/**
 * Authenticate the application from the Authorization header (`null`: one sent more than once,
 * malformed). With no header at all, the application is the public one `client_id` names
 * (`publicClient`); otherwise, credentials also sent in the body are `invalid_request`; an
 * unknown App Key, a wrong secret and a public application's App Key get the same answer. Failures are throttled per App Key from one address and
 * per address; while throttled, even the right secret from there gets 429.
 *
 * The current App Secret authenticates, and so does the previous one while its grace
 * lasts (`now < previousSecretExpiresAt`, see `Admin.rotateSecret`). Both digests are
 * compared in constant time on every request, against stand-ins that never match when
 * there is no application or no previous secret, so timing tells neither which matched
 * nor whether the App Key exists. The first use of a previous secret after a rotation is
 * recorded once (`client_auth_previous_secret`, in the write that marks it), not per request.
 */
export const authenticate = Effect.fnUntraced(function* (
  authorization: string | null | undefined,
  params: Params,
  address: string | undefined
) {
  if (authorization === undefined) return yield* publicClient(params)
  const creds = yield* Either.match(BasicAuth.decode(authorization ?? undefined), {
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
  const found = yield* checkedFind(creds.appKey, keys)
  const digest = yield* secretDigest(creds.appKey, creds.appSecret)
  const now = yield* nowSeconds
  // A digest is base64url, so a string of "!" never equals it
  const never = digest.replace(/./g, "!")
  const app = Option.getOrNull(found)
  const current = app !== null && app.secretDigest.length > 0 ? app.secretDigest : never
  const previous = (app !== null ? livePreviousSecret(app, now) : null) ?? never
  const currentOk = timingSafeEqual(digest, current)
  const previousOk = timingSafeEqual(digest, previous)
  // A public application has no secret (its digest is empty), so Basic never authenticates it
  if (app === null || isPublic(app) || !(currentOk || previousOk)) {
    // One audit event per lockout, not one per refused request
    if (yield* Throttle.failure(keys))
      yield* Audit.record("client_auth_throttled", { appKey: creds.appKey.slice(0, 128) })
    yield* Audit.record("client_auth_failed", { appKey: creds.appKey.slice(0, 128) })
    return yield* Effect.fail(failed)
  }
  if (!currentOk && (app.previousSecretUsedAt ?? null) === null) yield* markPreviousUsed(app, previous, now)
  return app satisfies Application
})

/**
 * Mark the first use of the previous secret since its rotation and record it in the same
 * write; a use marked already (by a concurrent request or another process) writes nothing.
 * Best effort, like every audit record: it never fails the authentication.
 */
const markPreviousUsed = (app: Application, previous: string, now: number) =>
  Effect.flatMap(ApplicationStore, (apps) =>
    Audit.recordWith(apps.markPreviousSecretUsed(app.appKey, previous, now), [
      [
        "client_auth_previous_secret",
        {
          appKey: app.appKey,
          detail: `previous secret works until ${new Date((app.previousSecretExpiresAt ?? now) * 1000).toISOString()}`
        }
      ]
    ])
  ).pipe(
    Effect.catchAll((e) =>
      e._tag === "PreviousSecretMarked"
        ? Effect.void
        : Effect.logWarning("use of a previous App Secret not recorded").pipe(
            Effect.annotateLogs({ appKey: app.appKey, reason: e.message })
          )
    ),
    Effect.catchAllCause(() => Effect.void)
  )

/**
 * `authenticate`, for an endpoint only confidential applications use (introspection, RFC 7662
 * §2.1): a public application is `invalid_client`.
 */
export const authenticateConfidential = (
  authorization: string | null | undefined,
  params: Params,
  address: string | undefined
) =>
  Effect.filterOrFail(
    authenticate(authorization, params, address),
    (app) => !isPublic(app),
    () =>
      new InvalidClient({
        description:
          "a public application may not introspect tokens: only confidential applications, with HTTP Basic"
      })
  )

/**
 * Client authentication at the token, introspection and revocation endpoints: a confidential
 * application uses the method it registered (RFC 6749 §2.3.1), HTTP Basic (`client_secret_basic`,
 * the default) or `client_id` and `client_secret` in the body (`client_secret_post`), keyed
 * digests compared in constant time; a public application (RFC 6749 §2.1) names itself with
 * `client_id` and sends no Authorization header and no secret.
 */
import { Effect, Either, Option } from "effect"
import {
  type Application,
  isPublic,
  livePreviousSecret,
  type TokenEndpointAuthMethod,
  tokenEndpointAuthMethod
} from "../model/Application.js"
import { Config } from "../model/Config.js"
import { InvalidClient, InvalidRequest } from "../model/OAuthError.js"
import * as Audit from "../security/Audit.js"
import * as Throttle from "../security/Throttle.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { nowSeconds } from "../services/internal/time.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import * as BasicAuth from "./requests/BasicAuth.js"
import type { Params } from "./requests/Form.js"
import { caps, isPlainText } from "./requests/Params.js"

/** The keyed digest of an App Secret, as stored. */
export const secretDigest = (appKey: string, appSecret: string): Effect.Effect<string, never, Config> =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(serverKey, `app_secret\u0000${appKey}\u0000${appSecret}`))

const failed = new InvalidClient({ description: "client authentication failed" })

/** The answer to a request with no Authorization header that names no public application. */
const basicRequired = new InvalidClient({
  description:
    "client authentication failed: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1)"
})

/**
 * The answer to an application that authenticated with a method other than the one it registered
 * (an unknown App Key counts as `client_secret_basic`, the default), whether the secret was right or not.
 */
const wrongMethod = (registered: TokenEndpointAuthMethod): InvalidClient =>
  new InvalidClient({
    description:
      registered === "client_secret_basic"
        ? "client authentication failed: this application authenticates with client_secret_basic: send the App Key and App Secret with HTTP Basic (RFC 6749 §2.3.1), not in the body"
        : "client authentication failed: this application authenticates with client_secret_post: send client_id and client_secret in the body (RFC 6749 §2.3.1), not with HTTP Basic"
  })

/**
 * The method a request used refused for the application it names: the method it registered when
 * that is another (an unknown App Key registered nothing, so it gets the default's answer); none
 * when the method is the registered one, or the application is public (refused elsewhere).
 */
const methodRefusal = (app: Application | null, used: TokenEndpointAuthMethod): InvalidClient | null => {
  const registered = app === null ? "client_secret_basic" : tokenEndpointAuthMethod(app)
  return (app === null || !isPublic(app)) && registered !== used ? wrongMethod(registered) : null
}

/** The answer to a public application sending `client_secret`: it has none. */
const publicWithSecret = new InvalidClient({
  description: "client authentication failed: a public application has no App Secret; send only client_id"
})

/**
 * The application a request without an Authorization header and without `client_secret` names:
 * the public application of its `client_id`, else `invalid_client` (the same answer for an
 * application registered for `client_secret_basic` and an unknown App Key, so it tells nothing
 * about which App Keys exist; an application registered for `client_secret_post` is told so).
 * Nothing is a secret check here, so nothing counts toward throttling.
 */
const publicClient = Effect.fnUntraced(function* (params: Params) {
  const appKey = params.client_id
  const app =
    appKey === undefined || appKey === ""
      ? null
      : Option.getOrNull(yield* Effect.flatMap(ApplicationStore, (apps) => apps.find(appKey)))
  if (app !== null && isPublic(app)) return app
  return yield* Effect.fail(
    app !== null && tokenEndpointAuthMethod(app) === "client_secret_post"
      ? wrongMethod("client_secret_post")
      : basicRequired
  )
})

/**
 * RFC 6749 §2.3.1: `client_id` and `client_secret` from the body, refused like malformed Basic
 * credentials when either is missing, empty, too long or not plain text.
 */
const bodyCredentials = (params: Params): Either.Either<BasicAuth.Credentials, InvalidClient> => {
  const appKey = params.client_id ?? ""
  const appSecret = params.client_secret ?? ""
  const fits = (s: string, max: number) => s.length > 0 && s.length <= max && isPlainText(s)
  return fits(appKey, caps.client_id) && fits(appSecret, caps.client_secret)
    ? Either.right({ appKey, appSecret })
    : Either.left(failed)
}

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
 * Authenticate the application: with an Authorization header (`null`: one sent more than once,
 * malformed), from HTTP Basic, where credentials also sent in the body are `invalid_request`
 * (RFC 6749 §2.3.1: one method per request); without one but with `client_secret`, from the body;
 * with neither, the application is the public one `client_id` names (`publicClient`). An unknown
 * App Key, a wrong secret and a public application's App Key get the same answer. An application
 * that used a method it did not register (`methodRefusal`) is told the one it registered, whether
 * the secret was right or not, and counts as a failure. Failures are throttled per App Key from
 * one address and per address; while throttled, even the right secret from there gets 429.
 */
export const authenticate = Effect.fnUntraced(function* (
  authorization: string | null | undefined,
  params: Params,
  address: string | undefined
) {
  if (authorization === undefined) {
    if (params.client_secret === undefined) return yield* publicClient(params)
    return yield* verify(yield* bodyCredentials(params), "client_secret_post", address)
  }
  const creds = yield* BasicAuth.decode(authorization ?? undefined)
  // RFC 6749 §2.3.1: one authentication method per request
  if (
    params.client_secret !== undefined ||
    (params.client_id !== undefined && params.client_id !== creds.appKey)
  ) {
    return yield* Effect.fail(
      new InvalidRequest({ description: "client credentials must be sent only in the Authorization header" })
    )
  }
  return yield* verify(creds, "client_secret_basic", address)
})

/**
 * Check credentials sent with the method `used`. The current App Secret authenticates, and so
 * does the previous one while its grace lasts (`now < previousSecretExpiresAt`, see
 * `Admin.rotateSecret`). Both digests are compared in constant time on every request, against
 * stand-ins that never match when there is no application or no previous secret, so timing
 * tells neither which matched nor whether the App Key exists. The first use of a previous secret
 * after a rotation is recorded once (`client_auth_previous_secret`, in the write that marks it),
 * not per request.
 */
const verify = Effect.fnUntraced(function* (
  creds: BasicAuth.Credentials,
  used: TokenEndpointAuthMethod,
  address: string | undefined
) {
  const keys = Throttle.clientKeys(creds.appKey, address)
  const found = yield* checkedFind(creds.appKey, keys)
  const app = Option.getOrNull(found)
  if (used === "client_secret_post" && app !== null && isPublic(app))
    return yield* Effect.fail(publicWithSecret)
  const digest = yield* secretDigest(creds.appKey, creds.appSecret)
  const now = yield* nowSeconds
  // A digest is base64url, so a string of "!" never equals it
  const never = digest.replace(/./g, "!")
  const current = app !== null && app.secretDigest.length > 0 ? app.secretDigest : never
  const previous = (app !== null ? livePreviousSecret(app, now) : null) ?? never
  const currentOk = timingSafeEqual(digest, current)
  const previousOk = timingSafeEqual(digest, previous)
  const refusal = methodRefusal(app, used)
  // A public application has no secret (its digest is empty), so Basic never authenticates it
  if (app === null || isPublic(app) || refusal !== null || !(currentOk || previousOk)) {
    // One audit event per lockout, not one per refused request
    if (yield* Throttle.failure(keys))
      yield* Audit.record("client_auth_throttled", { appKey: creds.appKey.slice(0, 128) })
    yield* Audit.record("client_auth_failed", { appKey: creds.appKey.slice(0, 128) })
    return yield* Effect.fail(refusal ?? failed)
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

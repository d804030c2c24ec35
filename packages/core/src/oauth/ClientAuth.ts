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
import { InvalidClient, InvalidRequest, RateLimited } from "../model/OAuthError.js"
import * as Throttle from "../security/Throttle.js"
import { hmac, timingSafeEqual } from "../services/Digest.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import type { StorageError } from "../storage/StorageError.js"
import * as Call from "./Call.js"
import * as BasicAuth from "./requests/BasicAuth.js"
import type { Params } from "./requests/Form.js"
import { caps, isPlainText } from "./requests/Params.js"

// What the keyed digest of an App Secret is computed over
const secretInput = (appKey: string, appSecret: string): string =>
  `app_secret\u0000${appKey}\u0000${appSecret}`

/** The keyed digest of an App Secret, as stored. */
export const secretDigest = (appKey: string, appSecret: string): Effect.Effect<string, never, Config> =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(serverKey, secretInput(appKey, appSecret)))

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

/** What authenticating a request reads: the stores, the throttle's policy, the Config. */
export type Requirements = ApplicationStore | Throttle.ThrottleStore | Throttle.ThrottlePolicy | Config

/**
 * The application a request without an Authorization header and without `client_secret` names:
 * the public application of its `client_id`, else `invalid_client` (the same answer for an
 * application registered for `client_secret_basic` and an unknown App Key, so it tells nothing
 * about which App Keys exist; an application registered for `client_secret_post` is told so).
 * Nothing is a secret check here, so nothing counts toward throttling.
 */
const publicClient = (call: Call.Call<Requirements>, params: Params) => {
  const appKey = params.client_id
  const found =
    appKey === undefined || appKey === ""
      ? Effect.succeed(Option.none<Application>())
      : Call.use(call, ApplicationStore).find(appKey)
  return Effect.flatMap(found, (option) => {
    const app = Option.getOrNull(option)
    if (app !== null && isPublic(app)) return Effect.succeed(app)
    return Effect.fail(
      app !== null && tokenEndpointAuthMethod(app) === "client_secret_post"
        ? wrongMethod("client_secret_post")
        : basicRequired
    )
  })
}

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

// The wait is a whole number of seconds the code computed: the error's fields need no validation
const limited = (wait: number): Effect.Effect<never, RateLimited> =>
  Effect.fail(
    new RateLimited({ description: "too many failed attempts; try again later", retryAfter: wait }, true)
  )

/**
 * The application `appKey` names, once the throttle check of `keys` passed (`RateLimited` while
 * one is locked): in one read when the application store keeps the throttle's counters
 * (`ApplicationStore.findForClient`), else the check and then the lookup.
 */
const checkedFind = (
  call: Call.Call<Requirements>,
  appKey: string,
  keys: ReadonlyArray<Throttle.Key>,
  now: number
): Effect.Effect<Option.Option<Application>, RateLimited | StorageError> => {
  const apps = Call.use(call, ApplicationStore)
  const throttle = Call.use(call, Throttle.ThrottleStore)
  const separately: Effect.Effect<Option.Option<Application>, RateLimited | StorageError> = Effect.flatMap(
    throttle.lockedFor(keys, now),
    (wait): Effect.Effect<Option.Option<Application>, RateLimited | StorageError> =>
      wait > 0 ? limited(wait) : apps.find(appKey)
  )
  if (apps.findForClient === undefined || throttle.counters === undefined) return separately
  return Effect.flatMap(apps.findForClient(appKey, keys, throttle.counters), (read): typeof separately => {
    if (read.entries === null) return separately
    const wait = Throttle.lockWait(keys, read.entries, now)
    return wait > 0 ? limited(wait) : Effect.succeed(read.app)
  })
}

/**
 * Authenticate the application of the request `call`: with an Authorization header (`null`: one
 * sent more than once, malformed), from HTTP Basic, where credentials also sent in the body are
 * `invalid_request` (RFC 6749 §2.3.1: one method per request); without one but with
 * `client_secret`, from the body; with neither, the application is the public one `client_id`
 * names (`publicClient`). An unknown App Key, a wrong secret and a public application's App Key
 * get the same answer. An application that used a method it did not register (`methodRefusal`)
 * is told the one it registered, whether the secret was right or not, and counts as a failure.
 * Failures are throttled per App Key from one address and per address; while throttled, even the
 * right secret from there gets 429.
 */
export const authenticateCall = (
  call: Call.Call<Requirements>,
  authorization: string | null | undefined,
  params: Params
): Effect.Effect<Application, InvalidClient | InvalidRequest | RateLimited | StorageError> => {
  if (authorization === undefined) {
    if (params.client_secret === undefined) return publicClient(call, params)
    const creds = bodyCredentials(params)
    return Either.isLeft(creds) ? Effect.fail(creds.left) : verify(call, creds.right, "client_secret_post")
  }
  const creds = BasicAuth.decode(authorization ?? undefined)
  if (Either.isLeft(creds)) return Effect.fail(creds.left)
  // RFC 6749 §2.3.1: one authentication method per request
  if (
    params.client_secret !== undefined ||
    (params.client_id !== undefined && params.client_id !== creds.right.appKey)
  ) {
    return Effect.fail(
      new InvalidRequest({ description: "client credentials must be sent only in the Authorization header" })
    )
  }
  return verify(call, creds.right, "client_secret_basic")
}

/** `authenticateCall` for a request from `address`, its services read from the fiber. */
export const authenticate = (
  authorization: string | null | undefined,
  params: Params,
  address: string | undefined
): Effect.Effect<Application, InvalidClient | InvalidRequest | RateLimited | StorageError, Requirements> =>
  Call.run({ remoteAddress: address }, (call: Call.Call<Requirements>) =>
    authenticateCall(call, authorization, params)
  )

/** The refusal of credentials: a failure counted on `keys` and recorded, then `refusal`. */
const refuse = (
  call: Call.Call<Requirements>,
  creds: BasicAuth.Credentials,
  keys: ReadonlyArray<Throttle.Key>,
  now: number,
  refusal: InvalidClient
): Effect.Effect<never, InvalidClient | StorageError> => {
  const fields = { appKey: creds.appKey.slice(0, 128) }
  const policy = Call.use(call, Throttle.ThrottlePolicy)
  return Effect.flatMap(Call.use(call, Throttle.ThrottleStore).fail(keys, now, policy), (started) =>
    // One audit event per lockout, not one per refused request
    Effect.zipRight(
      started
        ? Effect.zipRight(
            Call.record(call, "client_auth_throttled", fields),
            Call.record(call, "client_auth_failed", fields)
          )
        : Call.record(call, "client_auth_failed", fields),
      Effect.fail(refusal)
    )
  )
}

/**
 * Check credentials sent with the method `used`. The current App Secret authenticates, and so
 * does the previous one while its grace lasts (`now < previousSecretExpiresAt`, see
 * `Admin.rotateSecret`). Both digests are compared in constant time on every request, against
 * stand-ins that never match when there is no application or no previous secret, so timing
 * tells neither which matched nor whether the App Key exists. The first use of a previous secret
 * after a rotation is recorded once (`client_auth_previous_secret`, in the write that marks it),
 * not per request.
 */
const verify = (
  call: Call.Call<Requirements>,
  creds: BasicAuth.Credentials,
  used: TokenEndpointAuthMethod
): Effect.Effect<Application, InvalidClient | RateLimited | StorageError> => {
  const keys = Throttle.clientKeys(creds.appKey, call.address)
  const now = Call.seconds(call)
  const digested = call.digest.hmac(call.config.serverKey, secretInput(creds.appKey, creds.appSecret))
  return Effect.flatMap(checkedFind(call, creds.appKey, keys, now), (found) => {
    const app = Option.getOrNull(found)
    if (used === "client_secret_post" && app !== null && isPublic(app)) return Effect.fail(publicWithSecret)
    return Effect.flatMap(digested, (digest) => {
      // A digest is base64url, so a string of "!" never equals it
      const never = "!".repeat(digest.length)
      const current = app !== null && app.secretDigest.length > 0 ? app.secretDigest : never
      const previous = (app !== null ? livePreviousSecret(app, now) : null) ?? never
      const currentOk = timingSafeEqual(digest, current)
      const previousOk = timingSafeEqual(digest, previous)
      const refusal = methodRefusal(app, used)
      // A public application has no secret (its digest is empty), so Basic never authenticates it
      if (app === null || isPublic(app) || refusal !== null || !(currentOk || previousOk))
        return refuse(call, creds, keys, now, refusal ?? failed)
      if (!currentOk && (app.previousSecretUsedAt ?? null) === null)
        return Effect.as(markPreviousUsed(call, app, previous, now), app)
      return Effect.succeed(app)
    })
  })
}

/**
 * Mark the first use of the previous secret since its rotation and record it in the same
 * write; a use marked already (by a concurrent request or another process) writes nothing.
 * Best effort, like every audit record: it never fails the authentication.
 */
const markPreviousUsed = (call: Call.Call<Requirements>, app: Application, previous: string, now: number) =>
  Call.audited(call, Call.use(call, ApplicationStore).markPreviousSecretUsed(app.appKey, previous, now), [
    [
      "client_auth_previous_secret",
      {
        appKey: app.appKey,
        detail: `previous secret works until ${new Date((app.previousSecretExpiresAt ?? now) * 1000).toISOString()}`
      }
    ]
  ]).pipe(
    Effect.catchAll((e) =>
      e._tag === "PreviousSecretMarked"
        ? Effect.void
        : Effect.logWarning("use of a previous App Secret not recorded").pipe(
            Effect.annotateLogs({ appKey: app.appKey, reason: e.message })
          )
    ),
    Effect.catchAllCause(() => Effect.void)
  )

const publicRefused = new InvalidClient({
  description:
    "a public application may not introspect tokens: only confidential applications, with HTTP Basic"
})

/**
 * `authenticateCall`, for an endpoint only confidential applications use (introspection, RFC 7662
 * §2.1): a public application is `invalid_client`.
 */
export const authenticateConfidential = (
  call: Call.Call<Requirements>,
  authorization: string | null | undefined,
  params: Params
): Effect.Effect<Application, InvalidClient | InvalidRequest | RateLimited | StorageError> =>
  Effect.flatMap(authenticateCall(call, authorization, params), (app) =>
    isPublic(app) ? Effect.fail(publicRefused) : Effect.succeed(app)
  )

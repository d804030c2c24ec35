/**
 * The token endpoint's grants through the core's `Http.route` over a storage layer, for an
 * adapter's tests to count what each request costs the database (e.g. the statements it runs).
 */
import {
  Accounts,
  Admin,
  Audit,
  AuditStore,
  Authorize,
  BasicAuth,
  Http,
  Metadata,
  type StorageError,
  type Stores
} from "@latchkey/core"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { grantServices } from "./internal/grants.js"

/** What each token request counted, in order: each answered 200 with a token set. */
export interface TokenCounts {
  /** `client_credentials`: the application's own token. */
  readonly clientCredentials: number
  /** `authorization_code`: a code the user approved, exchanged for an access and a refresh token. */
  readonly authorizationCode: number
  /** `refresh_token`: that refresh token rotated into a new access and refresh token. */
  readonly refreshToken: number
}

const cb = "https://app.example/cb"

const formOf = (fields: Record<string, string>): string => new URLSearchParams(fields).toString()

/** The services the endpoints need besides the stores: the grants', quiet logs. */
const services = Layer.merge(grantServices, Logger.minimumLogLevel(LogLevel.Warning))

/**
 * Over `storage` (with its audit store as the audit log): a new application and user, a code the
 * user approved at the authorize endpoint; then the three token requests, each with HTTP Basic,
 * answered with what `counter()` (a running count the caller keeps, e.g. of statements run) grew
 * by during each. Fails unless each answers 200 with its tokens and the audit trail holds each
 * grant's events (`token_issued` three times, `refresh_rotated` once).
 */
export const tokenCounts = <E>(
  storage: Layer.Layer<Stores.Stores | AuditStore.AuditStore, E>,
  counter: () => number
): Effect.Effect<TokenCounts, E | StorageError.StorageError | Error> =>
  Effect.gen(function* () {
    const { app, appSecret } = yield* Admin.createApplication({
      name: "Tokens",
      redirectUris: [cb],
      scope: "read",
      grantTypes: ["authorization_code", "client_credentials", "refresh_token"]
    })
    const user = yield* Accounts.createUser(`user-${crypto.randomUUID()}`, "correct horse battery")
    const query = formOf({ response_type: "code", client_id: app.appKey, redirect_uri: cb, state: "s" })
    const location = yield* Effect.flatMap(Authorize.validate(query), (req) =>
      Authorize.approve(req, user.userId)
    )
    const code = new URL(location).searchParams.get("code") ?? ""
    const authorization = BasicAuth.encode({ appKey: app.appKey, appSecret })
    const post = (params: Record<string, string>) =>
      Effect.gen(function* () {
        const before = counter()
        const answer = yield* Option.getOrThrow(
          Http.route({
            method: "POST",
            path: Metadata.paths.token,
            query: "",
            headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
            body: formOf(params),
            remoteAddress: "192.0.2.1"
          })
        )
        const count = counter() - before
        if (answer.status !== 200)
          return yield* Effect.fail(
            new Error(`${params.grant_type} answered ${answer.status} ${answer.body}`)
          )
        return { count, body: JSON.parse(answer.body) as Record<string, string> }
      })
    const cc = yield* post({ grant_type: "client_credentials" })
    const redeemed = yield* post({ grant_type: "authorization_code", code, redirect_uri: cb })
    if (redeemed.body.refresh_token === undefined)
      return yield* Effect.fail(new Error("the code was exchanged without a refresh token"))
    const refreshed = yield* post({ grant_type: "refresh_token", refresh_token: redeemed.body.refresh_token })
    // Each grant's audit events stored with its change
    const trail = yield* Effect.flatMap(AuditStore.AuditStore, (audit) => audit.tail({ limit: 1000 }))
    const types = trail
      .filter((e) => e.appKey === app.appKey && (e.type === "token_issued" || e.type === "refresh_rotated"))
      .map((e) => `${e.type}${e.detail === null ? "" : ` ${e.detail}`}`)
    const expected = [
      "token_issued client_credentials",
      "token_issued authorization_code",
      "refresh_rotated",
      "token_issued refresh_token"
    ]
    if (JSON.stringify(types) !== JSON.stringify(expected)) {
      return yield* Effect.fail(new Error(`the audit trail of the grants is ${JSON.stringify(types)}`))
    }
    return { clientCredentials: cc.count, authorizationCode: redeemed.count, refreshToken: refreshed.count }
  }).pipe(Effect.provide(Layer.mergeAll(storage, Layer.provide(Audit.layer, storage), services)))

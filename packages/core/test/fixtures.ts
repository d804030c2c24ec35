import { createHash, createHmac } from "node:crypto"
import { Effect, Layer, Option } from "effect"
import * as Admin from "../src/admin/Admin.js"
import * as Http from "../src/http/Http.js"
import * as Config from "../src/model/Config.js"
import * as Authorize from "../src/oauth/Authorize.js"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Accounts from "../src/security/Accounts.js"
import * as PasswordChecks from "../src/security/PasswordChecks.js"
import * as Throttle from "../src/security/Throttle.js"
import * as Digest from "../src/services/Digest.js"
import * as Entropy from "../src/services/Entropy.js"
import { PasswordHasher } from "../src/services/PasswordHasher.js"
import * as Memory from "../src/storage/Memory.js"

export const issuer = "https://auth.example"

/** A cheap, deterministic hasher: the real one is scrypt in the server. */
export const TestHasher = Layer.succeed(PasswordHasher, {
  hash: (p) => Effect.succeed(`test$${p}`),
  verify: (p, h) => Effect.succeed(h === `test$${p}`)
})

/**
 * Digests computed synchronously, each one Effect step, as the reference server's node:crypto ones:
 * for a test that pins an interleaving by yielding (nothing waits on the thread pool) or counts steps.
 */
export const SyncDigest = Digest.layer({
  sha256: (value) => Effect.sync(() => createHash("sha256").update(value).digest("base64url")),
  hmac: (key, value) => Effect.sync(() => createHmac("sha256", key).update(value).digest("base64url"))
})

export const settings = (overrides: Partial<Config.Settings> = {}) =>
  Config.layer({ issuer, serverKey: "test-server-key-0123456789abcdef", ...overrides })

/** Fresh in-memory stores and every service the endpoints need. */
export const TestLayer = (
  overrides: Partial<Config.Settings> = {},
  policy: Throttle.Policy = Throttle.defaultPolicy,
  checks: PasswordChecks.Limits = PasswordChecks.defaultLimits
) =>
  Layer.mergeAll(Memory.layer, settings(overrides), Entropy.layer, TestHasher, Throttle.layer(policy, checks))

export const cb = "https://app.example/cb"

export const newApp = (input: Omit<Partial<Admin.NewApplication>, "public"> = {}) =>
  Effect.map(
    Admin.createApplication({
      name: "Test App",
      redirectUris: [cb],
      scope: "read,write",
      grantTypes: ["authorization_code", "implicit", "password", "client_credentials", "refresh_token"],
      ...input
    }),
    (c) => ({ ...c, basic: BasicAuth.encode({ appKey: c.app.appKey, appSecret: c.appSecret }) })
  )

/** A public application whose one redirect URI is a private-use scheme (RFC 8252 §7.1). */
export const newNativeApp = (redirectUri = "com.example.app:/cb") =>
  Admin.createApplication({ name: "Native", redirectUris: [redirectUri], scope: "read", public: true })

export const newUser = (
  username = `user-${Math.random().toString(36).slice(2)}`,
  password = "correct horse battery"
) => Effect.map(Accounts.createUser(username, password), (user) => ({ user, password }))

export const form = (params: Record<string, string>): string => new URLSearchParams(params).toString()

/** POST a form to a JSON endpoint through the pure HTTP layer. */
export const post = (
  path: string,
  params: Record<string, string> | string,
  authorization?: string,
  extra: Partial<Http.HttpRequest> = {}
) => {
  const req: Http.HttpRequest = {
    method: "POST",
    path,
    query: "",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(authorization !== undefined ? { authorization } : {})
    },
    body: typeof params === "string" ? params : form(params),
    remoteAddress: "127.0.0.1",
    ...extra
  }
  return Option.getOrThrow(Http.route(req)).pipe(
    Effect.map((res) => ({
      ...res,
      json: res.body === "" ? undefined : (JSON.parse(res.body) as Record<string, unknown>)
    }))
  )
}

export const token = (params: Record<string, string> | string, authorization?: string) =>
  post("/oauth2/oauth2/token", params, authorization)

/** Run the authorize endpoint for a signed-in user who allows the request; returns the redirect location. */
export const authorize = (query: Record<string, string>, userId: string) =>
  Effect.flatMap(Authorize.validate(form(query)), (req) => Authorize.approve(req, userId))

/** Authorize a code for `app` and return it. */
export const issueCode = (appKey: string, userId: string, extra: Record<string, string> = {}) =>
  Effect.map(
    authorize({ response_type: "code", client_id: appKey, redirect_uri: cb, state: "s1", ...extra }, userId),
    (location) => new URL(location).searchParams.get("code") as string
  )

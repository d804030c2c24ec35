/**
 * Fetch.verifyBearer, the resource-server check on Web Request/Response: JWT access tokens
 * (RFC 9068) verified locally for the expected audience, opaque tokens from the store, and
 * every refusal as the Response to send.
 */
import {
  Admin,
  ApplicationStore,
  BasicAuth,
  type Bearer,
  Config,
  Entropy,
  type Http,
  Memory,
  PasswordHasher,
  Throttle
} from "@latchkey/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Fetch } from "../src/index.js"

const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) => Effect.succeed(`plain$${password}`),
  verify: (password, stored) => Effect.succeed(stored === `plain$${password}`)
})

const issuer = "https://auth.example"
const ordersAudience = "https://orders.example"
const invalid =
  'Bearer realm="orders", error="invalid_token", error_description="the access token is invalid, expired or revoked"'

describe("Fetch.verifyBearer", () => {
  let runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>
  let handle: (request: Request) => Promise<Response>

  /** Register an application (JWT access tokens for `audience` when `jwt`) and return a client_credentials token. */
  const accessToken = async (format: "opaque" | "jwt", audience?: string): Promise<[string, string]> => {
    const created = await runtime.runPromise(
      Effect.gen(function* () {
        const c = yield* Admin.createApplication({
          name: "Fetch",
          redirectUris: ["https://app.example/cb"],
          scope: "orders profile",
          grantTypes: ["client_credentials"]
        })
        if (format === "jwt") {
          // Registered again with the format set (nothing was issued to it yet)
          const store = yield* ApplicationStore.ApplicationStore
          yield* store.remove(c.app.appKey, 0)
          yield* store.insert({
            ...c.app,
            accessTokenFormat: "jwt",
            ...(audience === undefined ? {} : { accessTokenAudience: audience })
          })
        }
        return c
      })
    )
    const res = await handle(
      new Request(`${issuer}/oauth2/oauth2/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: BasicAuth.encode({ appKey: created.app.appKey, appSecret: created.appSecret })
        },
        body: "grant_type=client_credentials&open_id=device-1"
      })
    )
    return [created.app.appKey, ((await res.json()) as { access_token: string }).access_token]
  }

  const check = (token: string | null, options: Fetch.BearerOptions = {}) =>
    Fetch.verifyBearer(
      runtime,
      new Request("https://orders.example/orders", {
        headers: token === null ? {} : { authorization: `Bearer ${token}` }
      }),
      { realm: "orders", ...options }
    )

  const principal = (r: Bearer.Principal | Response) => {
    if (r instanceof Response) throw new Error(`refused with ${r.status}`)
    return [r.clientId, r.openId, r.scope.join(",")]
  }

  beforeAll(() => {
    runtime = ManagedRuntime.make(
      Layer.mergeAll(
        Memory.layer,
        Config.layer({ issuer, serverKey: "test-server-key-0123456789abcdef" }),
        Entropy.layer,
        hasher,
        Throttle.layer()
      )
    )
    handle = Fetch.handler(runtime)
  })
  afterAll(() => runtime.dispose())

  it("accepts a JWT access token for the expected audience and returns its principal", async () => {
    const [appKey, token] = await accessToken("jwt", ordersAudience)
    assert.strictEqual(token.split(".").length, 3)
    const r = await check(token, { scope: "orders", audience: ordersAudience })
    assert.deepStrictEqual(principal(r), [appKey, "device-1", "orders,profile"])
  })

  it("answers a JWT access token for another audience with 401 invalid_token and the challenge", async () => {
    const [, token] = await accessToken("jwt")
    const r = await check(token, { audience: ordersAudience })
    assert.instanceOf(r, Response)
    const res = r as Response
    assert.strictEqual(res.status, 401)
    assert.strictEqual(res.headers.get("www-authenticate"), invalid)
    assert.strictEqual(((await res.json()) as { error: string }).error, "invalid_token")
    // Without an audience the issuer is expected, which that token names
    assert.strictEqual(principal(await check(token))[1], "device-1")
  })

  it("still accepts an opaque token, looked up in the store", async () => {
    const [appKey, token] = await accessToken("opaque")
    assert.match(token, /^[A-Za-z0-9_-]{43}$/)
    assert.deepStrictEqual(principal(await check(token, { audience: ordersAudience })), [
      appKey,
      "device-1",
      "orders,profile"
    ])
  })

  it("answers a missing token with a bare challenge and a lacking scope with 403 insufficient_scope", async () => {
    const missing = (await check(null)) as Response
    assert.strictEqual(missing.status, 401)
    assert.strictEqual(missing.headers.get("www-authenticate"), 'Bearer realm="orders"')
    const [, token] = await accessToken("jwt")
    const lacking = (await check(token, { scope: ["admin"] })) as Response
    assert.strictEqual(lacking.status, 403)
    assert.match(
      lacking.headers.get("www-authenticate") as string,
      /error="insufficient_scope".*scope="admin"/
    )
  })

  it("throws a TypeError for a malformed scope option", async () => {
    let thrown: unknown
    await check(null, { scope: "a\u0000b" }).catch((e: unknown) => {
      thrown = e
    })
    assert.instanceOf(thrown, TypeError)
  })
})

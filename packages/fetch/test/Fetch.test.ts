import {
  Admin,
  ApplicationStore,
  BasicAuth,
  Config,
  Entropy,
  type Http,
  Memory,
  PasswordHasher,
  Throttle
} from "@latchkey/core"
import { NodeHttp } from "@latchkey/node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Fetch } from "../src/index.js"

const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) => Effect.succeed(`plain$${password}`),
  verify: (password, stored) => Effect.succeed(stored === `plain$${password}`)
})

const base = "https://auth.example/auth"

describe("Fetch.handler on Web Request/Response", () => {
  let runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>
  let handle: (request: Request) => Promise<Response>
  let basic: string
  let appKey: string
  const errors: Array<unknown> = []
  const addresses: Array<string> = []

  beforeAll(async () => {
    runtime = ManagedRuntime.make(
      Layer.mergeAll(
        Memory.layer,
        Config.layer({ issuer: base, serverKey: "test-server-key-0123456789abcdef" }),
        Entropy.layer,
        hasher,
        Throttle.layer()
      )
    )
    handle = Fetch.handler(runtime, {
      prefix: "/auth",
      address: (request) => {
        const address = request.headers.get("x-test-address") ?? undefined
        if (address !== undefined) addresses.push(address)
        return address
      },
      onError: (e) => errors.push(e)
    })
    const app = await runtime.runPromise(
      Admin.createApplication({
        name: "Fetch",
        redirectUris: ["https://app.example/cb"],
        scope: "profile",
        grantTypes: ["client_credentials"]
      })
    )
    basic = BasicAuth.encode({ appKey: app.app.appKey, appSecret: app.appSecret })
    appKey = app.app.appKey
  })
  afterAll(() => runtime.dispose())

  const token = (init: RequestInit = {}) =>
    handle(
      new Request(`${base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: {
          authorization: basic,
          "content-type": "application/x-www-form-urlencoded",
          "x-test-address": "192.0.2.7"
        },
        body: "grant_type=client_credentials",
        ...init
      })
    )

  it("issues a client_credentials token with the no-store and hardening headers", async () => {
    const res = await token()
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("content-type"), "application/json; charset=utf-8")
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    assert.strictEqual(res.headers.get("pragma"), "no-cache")
    assert.strictEqual(res.headers.get("x-content-type-options"), "nosniff")
    assert.strictEqual(res.headers.get("x-frame-options"), "DENY")
    const body = (await res.json()) as Record<string, unknown>
    assert.strictEqual(body.token_type, "Bearer")
    assert.strictEqual(body.scope, "profile")
    assert.strictEqual(body.expires_in, 3600)
    assert.match(String(body.access_token), /^[A-Za-z0-9_-]{43}$/)
    assert.include(addresses, "192.0.2.7")
  })

  it("sends the same hardening headers as @latchkey/node", () => {
    assert.deepStrictEqual(Fetch.hardeningHeaders, NodeHttp.hardeningHeaders(false))
  })

  it("answers 401 invalid_client with WWW-Authenticate for a wrong secret", async () => {
    const res = await token({
      headers: {
        authorization: BasicAuth.encode({ appKey: "nobody", appSecret: "wrong" }),
        "content-type": "application/x-www-form-urlencoded"
      }
    })
    assert.strictEqual(res.status, 401)
    assert.strictEqual(res.headers.get("www-authenticate"), 'Basic realm="latchkey"')
    assert.strictEqual(((await res.json()) as { error: string }).error, "invalid_client")
  })

  it("answers 405 with Allow for GET on the token endpoint", async () => {
    const res = await handle(new Request(`${base}/oauth2/oauth2/token`))
    assert.strictEqual(res.status, 405)
    assert.strictEqual(res.headers.get("allow"), "POST")
  })

  it("answers 413 past 16 KiB, declared or streamed, reading no more than the cap", async () => {
    const big = await token({ body: `grant_type=client_credentials&pad=${"a".repeat(17 * 1024)}` })
    assert.strictEqual(big.status, 413)
    assert.strictEqual(((await big.json()) as { error: string }).error, "invalid_request")

    // A stream without a length that would go on forever: the handler stops after the cap.
    let pulled = 0
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        pulled += 1024
        controller.enqueue(new Uint8Array(1024).fill(97))
      }
    })
    const streamed = await token({ body: endless, duplex: "half" } as RequestInit)
    assert.strictEqual(streamed.status, 413)
    assert.isAtMost(pulled, 20 * 1024)
  })

  it("serves the metadata document (and HEAD without a body)", async () => {
    const res = await handle(new Request(`${base}/.well-known/oauth-authorization-server?x=1`))
    assert.strictEqual(res.status, 200)
    const doc = (await res.json()) as { issuer: string; token_endpoint: string }
    assert.strictEqual(doc.issuer, base)
    assert.strictEqual(doc.token_endpoint, `${base}/oauth2/oauth2/token`)
    const head = await handle(
      new Request(`${base}/.well-known/oauth-authorization-server`, { method: "HEAD" })
    )
    assert.strictEqual(head.status, 200)
    assert.strictEqual(await head.text(), "")
  })

  it("serves the JWKS and the OpenID configuration on GET, and userinfo on GET and POST (body token)", async () => {
    const doc = (await (await handle(new Request(`${base}/.well-known/openid-configuration`))).json()) as {
      jwks_uri: string
      userinfo_endpoint: string
    }
    const jwks = await handle(new Request(doc.jwks_uri))
    assert.strictEqual(jwks.status, 200)
    assert.isAbove(((await jwks.json()) as { keys: Array<unknown> }).keys.length, 0)
    const issued = await handle(
      new Request(`${base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials"
      })
    )
    const access = ((await issued.json()) as { access_token: string }).access_token
    // The application's token lacks openid: the userinfo endpoint read it from the header and from the body
    const get = await handle(
      new Request(doc.userinfo_endpoint, { headers: { authorization: `Bearer ${access}` } })
    )
    assert.strictEqual(get.status, 403)
    const post = await handle(
      new Request(doc.userinfo_endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `access_token=${access}`
      })
    )
    assert.strictEqual(post.status, 403)
    assert.strictEqual(((await post.json()) as { error: string }).error, "insufficient_scope")
  })

  it("carries the core's CORS answers: OPTIONS routed to the core (204 without a body), the grant on the revocation answer, `*` on discovery", async () => {
    const spa = "https://spa.example"
    await runtime.runPromise(
      Effect.flatMap(ApplicationStore.ApplicationStore, (apps) =>
        apps.update(appKey, { webOrigins: [spa] }, 0)
      )
    )
    const revoke = (method: string, origin: string | undefined) =>
      handle(
        new Request(`${base}/oauth2/oauth2/revoke`, {
          method,
          headers: {
            ...(origin === undefined ? {} : { origin }),
            ...(method === "OPTIONS"
              ? { "access-control-request-method": "POST" }
              : { authorization: basic, "content-type": "application/x-www-form-urlencoded" })
          },
          ...(method === "OPTIONS" ? {} : { body: "token=unknown" })
        })
      )
    const corsOf = async (res: Response) => [
      res.status,
      res.headers.get("access-control-allow-origin"),
      res.headers.get("vary"),
      await res.text()
    ]
    const cases = [
      ["OPTIONS", spa, [204, spa, "Origin", ""]],
      ["OPTIONS", "https://other.example", [405, null, null]],
      ["POST", spa, [200, spa, "Origin", ""]],
      ["POST", "https://other.example", [200, null, null, ""]],
      ["POST", undefined, [200, null, null, ""]]
    ] as const
    for (const [method, origin, expected] of cases) {
      const got = await corsOf(await revoke(method, origin))
      assert.deepStrictEqual(got.slice(0, expected.length), [...expected], `${method} ${origin}`)
    }
    const discovery = await handle(
      new Request(`${base}/.well-known/openid-configuration`, {
        headers: { origin: "https://anyone.example" }
      })
    )
    assert.strictEqual(discovery.headers.get("access-control-allow-origin"), "*")
    assert.deepStrictEqual(errors, [])
  })

  it("passes the query string through: a token in the URL is refused", async () => {
    const res = await handle(
      new Request(`${base}/oauth2/oauth2/introspect?token=abc`, {
        method: "POST",
        headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
        body: "token=abc"
      })
    )
    assert.strictEqual(res.status, 400)
  })

  it("answers 404 (or the fallback) for other paths and the endpoints without the prefix", async () => {
    for (const path of [
      "https://auth.example/oauth2/oauth2/token",
      `${base}/oauth2/oauth2/authorize`,
      `${base}/oauth2/oauth2/token/`
    ]) {
      const res = await handle(new Request(path, { method: "POST", body: "x" }))
      assert.strictEqual(res.status, 404, path)
    }
    const mine = Fetch.handler(runtime, { fallback: () => new Response("not mine", { status: 418 }) })
    const res = await mine(new Request("https://auth.example/elsewhere"))
    assert.strictEqual(res.status, 418)
    assert.strictEqual(await res.text(), "not mine")
    assert.deepStrictEqual(errors, [])
  })
})

describe("Fetch.toResponse", () => {
  it("sends the headers under the core's, the core's replacing one of the same name, and no body on HEAD", async () => {
    const response: Http.HttpResponse = {
      status: 200,
      headers: { "content-type": "text/plain", "x-frame-options": "SAMEORIGIN" },
      body: "hi"
    }
    const res = Fetch.toResponse(response, { "x-frame-options": "DENY", "x-a": "1" })
    const sent: Array<[string, string]> = []
    res.headers.forEach((value, name) => {
      sent.push([name, value])
    })
    assert.deepStrictEqual(sent, [
      ["content-type", "text/plain"],
      ["x-a", "1"],
      ["x-frame-options", "SAMEORIGIN"]
    ])
    assert.strictEqual(await res.text(), "hi")
    assert.isNull(Fetch.toResponse(response, {}, "HEAD").body)
  })
})

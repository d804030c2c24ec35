import { createServer, type Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import {
  Admin,
  ApplicationStore,
  Config,
  Entropy,
  type Http,
  Memory,
  PasswordHasher,
  Throttle
} from "@latchkey/core"
import { Effect, FastCheck as fc, Layer, ManagedRuntime } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { NodeCrypto, NodeHttp } from "../src/index.js"

const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) => Effect.succeed(`plain$${password}`),
  verify: (password, stored) => Effect.succeed(stored === `plain$${password}`)
})

describe("NodeHttp.handler on a plain node:http server", () => {
  let server: Server
  let base: string
  let runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>
  let basic: string
  let appKey: string
  const errors: Array<unknown> = []
  const closed: Array<{ readonly url: string | undefined; readonly finished: boolean }> = []
  const closeWaiters: Array<() => void> = []
  // The error code each response was written with, by its request target, once written
  const codes = new Map<string | undefined, string | undefined>()
  const answered: Array<{
    readonly url: string | undefined
    readonly status: number
    readonly body: string
  }> = []

  beforeAll(async () => {
    server = createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    runtime = ManagedRuntime.make(
      Layer.mergeAll(
        Memory.layer,
        Config.layer({ issuer: `${base}/auth`, serverKey: "test-server-key-0123456789abcdef" }),
        Entropy.layer,
        hasher,
        Throttle.layer()
      ).pipe(Layer.provideMerge(NodeCrypto.layer))
    )
    const json = NodeHttp.handler(runtime, {
      prefix: "/auth",
      onError: (e) => errors.push(e),
      onResponse: (req, response) => {
        answered.push({ url: req.url, status: response.status, body: response.body })
        if (req.url?.includes("hook-throws") === true) throw new Error("hook failed")
      }
    })
    server.on("request", (req, res) => {
      res.on("finish", () => codes.set(req.url, NodeHttp.errorOf(res)))
      res.on("close", () => {
        closed.push({ url: req.url, finished: res.writableFinished })
        for (const resolve of closeWaiters.splice(0)) resolve()
      })
      if (!json(req, res)) {
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("not mine")
      }
    })
    const app = await runtime.runPromise(
      Admin.createApplication({
        name: "Bench",
        redirectUris: ["https://app.example/cb"],
        scope: "profile",
        grantTypes: ["client_credentials"]
      })
    )
    basic = `Basic ${Buffer.from(`${app.app.appKey}:${app.appSecret}`).toString("base64")}`
    appKey = app.app.appKey
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await runtime.dispose()
  })

  const token = (init: RequestInit = {}) =>
    fetch(`${base}/auth/oauth2/oauth2/token`, {
      method: "POST",
      headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
      ...init
    })

  it("issues a client_credentials token with the no-store and hardening headers", async () => {
    const res = await token()
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    assert.strictEqual(res.headers.get("x-content-type-options"), "nosniff")
    assert.strictEqual(res.headers.get("x-frame-options"), "DENY")
    const body = (await res.json()) as Record<string, unknown>
    assert.strictEqual(body.token_type, "Bearer")
    assert.match(String(body.access_token), /^[A-Za-z0-9_-]{43}$/)
  })

  it("leaves other paths, and the endpoints without the prefix, to the caller", async () => {
    for (const path of [
      "/oauth2/oauth2/token",
      "/auth/oauth2/oauth2/authorize",
      "/auth/oauth2/oauth2/token/"
    ]) {
      const res = await fetch(`${base}${path}`, { method: "POST" })
      assert.strictEqual(res.status, 404, path)
      assert.strictEqual(await res.text(), "not mine")
    }
  })

  it("keeps the error code of each core response beside it (errorOf): the body's error, none on success", async () => {
    const path = `${base}/auth/oauth2/oauth2/token`
    const answers = [
      await token({ method: "POST" }).then((r) => [`${path}`, r] as const),
      await fetch(`${path}?case=get`).then((r) => [`${path}?case=get`, r] as const),
      await fetch(`${path}?case=wrong`, {
        method: "POST",
        headers: {
          authorization: "Basic bm9ib2R5Ondyb25n",
          "content-type": "application/x-www-form-urlencoded"
        },
        body: "grant_type=client_credentials"
      }).then((r) => [`${path}?case=wrong`, r] as const),
      await fetch(`${path}?case=big`, {
        method: "POST",
        headers: { authorization: basic, "content-length": String(17 * 1024) },
        body: "a".repeat(17 * 1024)
      }).then((r) => [`${path}?case=big`, r] as const)
    ]
    for (const [url, res] of answers) {
      const body = (await res.json()) as { error?: string }
      assert.strictEqual(codes.get(url.slice(base.length)), body.error, url)
    }
    assert.deepStrictEqual(
      answers.map(([, r]) => r.status),
      [200, 405, 401, 413]
    )
  })

  it("answers the core's errors: 405 for GET, 413 with Connection: close past 16 KiB, 401 for a wrong secret", async () => {
    const get = await fetch(`${base}/auth/oauth2/oauth2/token`)
    assert.strictEqual(get.status, 405)
    assert.strictEqual(get.headers.get("allow"), "POST")
    const big = await token({ body: `grant_type=client_credentials&pad=${"a".repeat(17 * 1024)}` })
    assert.strictEqual(big.status, 413)
    assert.strictEqual(big.headers.get("connection"), "close")
    const wrong = await token({
      headers: {
        authorization: `Basic ${Buffer.from("nobody:wrong").toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      }
    })
    assert.strictEqual(wrong.status, 401)
    assert.strictEqual(((await wrong.json()) as { error: string }).error, "invalid_client")
  })

  it("serves the metadata document and passes the query string through", async () => {
    const res = await fetch(`${base}/auth/.well-known/oauth-authorization-server?x=1`)
    assert.strictEqual(res.status, 200)
    assert.strictEqual(((await res.json()) as { issuer: string }).issuer, `${base}/auth`)
    const inQuery = await fetch(`${base}/auth/oauth2/oauth2/introspect?token=abc`, {
      method: "POST",
      headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
      body: "token=abc"
    })
    assert.strictEqual(inQuery.status, 400)
    assert.deepStrictEqual(errors, [])
  })

  it("serves the JWKS and the OpenID configuration on GET, and userinfo on GET and POST (body token)", async () => {
    const doc = (await (await fetch(`${base}/auth/.well-known/openid-configuration`)).json()) as {
      jwks_uri: string
      userinfo_endpoint: string
    }
    const jwks = await fetch(doc.jwks_uri)
    assert.strictEqual(jwks.status, 200)
    assert.isAbove(((await jwks.json()) as { keys: Array<unknown> }).keys.length, 0)
    const access = ((await (await token()).json()) as { access_token: string }).access_token
    // The application's token lacks openid: the userinfo endpoint read it from the header and from the body
    const get = await fetch(doc.userinfo_endpoint, { headers: { authorization: `Bearer ${access}` } })
    assert.strictEqual(get.status, 403)
    const post = await fetch(doc.userinfo_endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `access_token=${access}`
    })
    assert.strictEqual(post.status, 403)
    assert.strictEqual(((await post.json()) as { error: string }).error, "insufficient_scope")
    assert.deepStrictEqual(errors, [])
  })

  it("carries the core's CORS answers: OPTIONS preflight routed to it, the grant on the answer, `*` on the JWKS", async () => {
    const spa = "https://spa.example"
    await runtime.runPromise(
      Effect.flatMap(ApplicationStore.ApplicationStore, (apps) =>
        apps.update(appKey, { webOrigins: [spa] }, 0)
      )
    )
    const preflight = await fetch(`${base}/auth/oauth2/oauth2/token`, {
      method: "OPTIONS",
      headers: { origin: spa, "access-control-request-method": "POST" }
    })
    assert.strictEqual(preflight.status, 204)
    assert.strictEqual(preflight.headers.get("access-control-allow-origin"), spa)
    assert.strictEqual(preflight.headers.get("access-control-allow-methods"), "POST")
    assert.strictEqual(preflight.headers.get("access-control-allow-headers"), "Authorization, Content-Type")
    const other = await fetch(`${base}/auth/oauth2/oauth2/token`, {
      method: "OPTIONS",
      headers: { origin: "https://other.example", "access-control-request-method": "POST" }
    })
    assert.deepStrictEqual([other.status, other.headers.get("access-control-allow-origin")], [405, null])
    const granted = await token({
      headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded", origin: spa }
    })
    assert.strictEqual(granted.status, 200)
    assert.strictEqual(granted.headers.get("access-control-allow-origin"), spa)
    assert.strictEqual(granted.headers.get("vary"), "Origin")
    assert.strictEqual(granted.headers.get("x-frame-options"), "DENY")
    assert.isNull(granted.headers.get("access-control-allow-credentials"))
    const plain = await token()
    assert.deepStrictEqual(
      [plain.headers.get("access-control-allow-origin"), plain.headers.get("vary")],
      [null, null]
    )
    const jwks = await fetch(`${base}/auth/oauth2/oauth2/jwks`, {
      headers: { origin: "https://anyone.example" }
    })
    assert.strictEqual(jwks.headers.get("access-control-allow-origin"), "*")
    assert.deepStrictEqual(errors, [])
  })

  it("hands each core response to onResponse before writing it; a throwing hook goes to onError", async () => {
    answered.length = 0
    const wrong = await token({
      headers: {
        authorization: `Basic ${Buffer.from("nobody:wrong").toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      }
    })
    const body = await wrong.text()
    assert.deepStrictEqual(answered, [{ url: "/auth/oauth2/oauth2/token", status: 401, body }])
    assert.strictEqual((JSON.parse(body) as { error: string }).error, "invalid_client")
    const other = await fetch(`${base}/auth/oauth2/oauth2/authorize`)
    assert.strictEqual(other.status, 404)
    assert.strictEqual(answered.length, 1)
    const thrown = await fetch(`${base}/auth/.well-known/oauth-authorization-server?hook-throws`)
    assert.strictEqual(thrown.status, 200)
    assert.strictEqual(answered.length, 2)
    assert.deepStrictEqual(
      errors.map((e) => (e as Error).message),
      ["hook failed"]
    )
    errors.length = 0
  })

  const rawSocket = (text: string, abandon: boolean): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), "127.0.0.1")
      let received = ""
      socket.on("data", (d: Buffer) => {
        received += d.toString("utf8")
      })
      socket.on("error", reject)
      socket.on("end", () => resolve(received))
      socket.write(text, () => {
        if (!abandon) return
        socket.destroy()
        resolve("")
      })
    })

  it("answers an absolute-form target (RFC 9112 §3.2.2) like its origin-form", async () => {
    const request = (target: string) =>
      rawSocket(
        `POST ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nauthorization: ${basic}\r\n` +
          "content-type: application/x-www-form-urlencoded\r\ncontent-length: 17\r\n\r\ngrant_type=nope&x",
        false
      )
    const bodyOf = (r: string) => r.slice(r.indexOf("\r\n\r\n") + 4)
    const origin = await request("/auth/oauth2/oauth2/token?a=1")
    assert.match(origin, /^HTTP\/1\.1 400 /)
    for (const target of [
      `${base}/auth/oauth2/oauth2/token?a=1`,
      "https://other.example/auth/oauth2/oauth2/token?a=1"
    ]) {
      const res = await request(target)
      assert.match(res, /^HTTP\/1\.1 400 /, target)
      assert.strictEqual(bodyOf(res), bodyOf(origin), target)
    }
    assert.deepStrictEqual(errors, [])
  })

  it("an abandoned body is no error: onError is not called and the response closes unfinished", async () => {
    closed.length = 0
    // The server's own event: the response of the abandoned request closes (unfinished)
    const responseClosed = new Promise<void>((resolve) => closeWaiters.push(resolve))
    await rawSocket(
      "POST /auth/oauth2/oauth2/token HTTP/1.1\r\nhost: 127.0.0.1\r\n" +
        "content-type: application/x-www-form-urlencoded\r\ncontent-length: 1000\r\n\r\n0123456789",
      true
    )
    await responseClosed
    assert.deepStrictEqual(closed, [{ url: "/auth/oauth2/oauth2/token", finished: false }])
    // A later request is read in a later turn of the event loop than the abandoned one's failure
    assert.strictEqual((await fetch(`${base}/auth/.well-known/oauth-authorization-server`)).status, 200)
    assert.deepStrictEqual(errors, [])
  })
})

describe("NodeHttp.target", () => {
  it("gives an absolute-form target the path and query of its origin-form", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._~%!$&'()*+,;=:@-]{0,12}$/)
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join("/")}`)
    const query = fc.option(fc.stringMatching(/^[^#]{0,20}$/), { nil: undefined })
    const authority = fc.constantFrom("127.0.0.1:8080", "other.example", "user:pass@h", "[::1]:1", "")
    fc.assert(
      fc.property(fc.constantFrom("http", "https", "HTTP"), authority, path, query, (scheme, host, p, q) => {
        const origin = `${p}${q === undefined ? "" : `?${q}`}`
        const expected = { path: p, query: q ?? "" }
        assert.deepStrictEqual(NodeHttp.target(origin), expected)
        assert.deepStrictEqual(NodeHttp.target(`${scheme}://${host}${origin}`), expected)
      })
    )
    assert.deepStrictEqual(NodeHttp.target("http://h"), { path: "/", query: "" })
    assert.deepStrictEqual(NodeHttp.target("http://h?x=1"), { path: "/", query: "x=1" })
    assert.deepStrictEqual(NodeHttp.target("*"), { path: "*", query: "" })
    assert.deepStrictEqual(NodeHttp.target(undefined), { path: "/", query: "" })
  })
})

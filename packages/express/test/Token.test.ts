import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  authorizeAndAllow,
  Browser,
  basic,
  codeOf,
  createApp,
  createUser,
  pkce,
  postForm,
  startServer,
  type TestServer,
  tokenRequest
} from "./helpers.js"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer()
  app = await createApp(s)
})
afterAll(() => s.close())

const expectError = async (res: Response, status: number, error: string) => {
  assert.strictEqual(res.status, status)
  assert.strictEqual(res.headers.get("content-type"), "application/json; charset=utf-8")
  assert.strictEqual(res.headers.get("cache-control"), "no-store")
  assert.strictEqual(res.headers.get("pragma"), "no-cache")
  const body = (await res.json()) as { error: string; error_description: string }
  assert.strictEqual(body.error, error)
  assert.isString(body.error_description)
  return body
}

describe("token endpoint framing", () => {
  it("answers client_credentials with the no-store headers and a numeric expires_in", async () => {
    const res = await tokenRequest(s, app, { grant_type: "client_credentials" })
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("content-type"), "application/json; charset=utf-8")
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    assert.strictEqual(res.headers.get("pragma"), "no-cache")
    assert.isNull(res.headers.get("access-control-allow-origin"))
    const body = (await res.json()) as Record<string, unknown>
    assert.strictEqual(body.token_type, "Bearer")
    assert.strictEqual(body.expires_in, 3600)
    assert.strictEqual(body.scope, "email,profile")
    assert.isUndefined(body.refresh_token)
    assert.isUndefined(body.open_id)
  })

  it("gives a per-user client_credentials token a refresh token and open_id", async () => {
    const res = await tokenRequest(s, app, { grant_type: "client_credentials", open_id: "device-42" })
    const body = (await res.json()) as Record<string, unknown>
    assert.strictEqual(res.status, 200)
    assert.strictEqual(body.open_id, "device-42")
    assert.isString(body.refresh_token)
  })

  it("refuses other content types", async () => {
    for (const type of [
      "application/json",
      "text/plain",
      "multipart/form-data; boundary=x",
      "application/x-www-form-urlencoded; charset=koi8-r"
    ]) {
      const res = await fetch(`${s.base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: { "content-type": type, authorization: basic(app.appKey, app.appSecret) },
        body:
          type === "application/json"
            ? '{"grant_type":"client_credentials"}'
            : "grant_type=client_credentials"
      })
      await expectError(res, 400, "invalid_request")
    }
  })

  it("refuses a repeated parameter", async () => {
    const res = await postForm(
      `${s.base}/oauth2/oauth2/token`,
      "grant_type=client_credentials&grant_type=client_credentials",
      {
        authorization: basic(app.appKey, app.appSecret)
      }
    )
    const body = await expectError(res, 400, "invalid_request")
    assert.match(body.error_description, /repeated/)
  })

  it("answers 413 to a body over 16 KiB, declared or streamed", async () => {
    const big = `grant_type=client_credentials&pad=${"a".repeat(17 * 1024)}`
    const res = await postForm(`${s.base}/oauth2/oauth2/token`, big, {
      authorization: basic(app.appKey, app.appSecret)
    })
    await expectError(res, 413, "invalid_request")
    const streamed = await fetch(`${s.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: basic(app.appKey, app.appSecret)
      },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big))
          c.close()
        }
      }),
      duplex: "half"
    } as RequestInit)
    await expectError(streamed, 413, "invalid_request")
  })

  it("accepts a body of exactly 16 KiB", async () => {
    const prefix = "grant_type=client_credentials&pad="
    const body = prefix + "a".repeat(16 * 1024 - prefix.length)
    const res = await postForm(`${s.base}/oauth2/oauth2/token`, body, {
      authorization: basic(app.appKey, app.appSecret)
    })
    assert.strictEqual(res.status, 200)
  })

  it("refuses compressed bodies", async () => {
    const res = await postForm(`${s.base}/oauth2/oauth2/token`, "grant_type=client_credentials", {
      authorization: basic(app.appKey, app.appSecret),
      "content-encoding": "gzip"
    })
    await expectError(res, 415, "invalid_request")
  })

  it("answers 405 with Allow to other methods and never reads the query", async () => {
    const res = await fetch(`${s.base}/oauth2/oauth2/token?grant_type=client_credentials`, {
      headers: { authorization: basic(app.appKey, app.appSecret) }
    })
    await expectError(res, 405, "invalid_request")
    assert.strictEqual(res.headers.get("allow"), "POST")
    const query = await postForm(`${s.base}/oauth2/oauth2/token?grant_type=client_credentials`, "", {
      authorization: basic(app.appKey, app.appSecret)
    })
    await expectError(query, 400, "invalid_request")
  })

  it("answers 401 with WWW-Authenticate, the same for an unknown key and a wrong secret", async () => {
    const missing = await postForm(`${s.base}/oauth2/oauth2/token`, { grant_type: "client_credentials" })
    await expectError(missing, 401, "invalid_client")
    assert.strictEqual(missing.headers.get("www-authenticate"), 'Basic realm="latchkey"')
    const wrong = await tokenRequest(
      s,
      { appKey: app.appKey, appSecret: "nope" },
      { grant_type: "client_credentials" }
    )
    const unknown = await tokenRequest(
      s,
      { appKey: "nobody", appSecret: "nope" },
      { grant_type: "client_credentials" }
    )
    assert.strictEqual(wrong.status, 401)
    assert.strictEqual(unknown.status, 401)
    assert.strictEqual(wrong.headers.get("www-authenticate"), 'Basic realm="latchkey"')
    assert.strictEqual(await wrong.text(), await unknown.text())
    const bearer = await postForm(
      `${s.base}/oauth2/oauth2/token`,
      { grant_type: "client_credentials" },
      { authorization: "Bearer abc" }
    )
    await expectError(bearer, 401, "invalid_client")
  })

  it("refuses two Authorization headers, whichever comes first (docs/security.md, catalogue H14)", async () => {
    const { request } = await import("node:http")
    const send = (values: ReadonlyArray<string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`${s.base}/oauth2/oauth2/token`)
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            // raw header list: Node sends every entry as it is (and adds no Host)
            headers: [
              "host",
              url.host,
              ...values.flatMap((v) => ["authorization", v]),
              "content-type",
              "application/x-www-form-urlencoded"
            ]
          },
          (res) => {
            let body = ""
            res.setEncoding("utf8").on("data", (d: string) => {
              body += d
            })
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
          }
        )
        req.on("error", reject)
        req.end("grant_type=client_credentials")
      })
    const valid = basic(app.appKey, app.appSecret)
    for (const pair of [
      [valid, basic("nobody", "nope")],
      [basic("nobody", "nope"), valid],
      [valid, valid]
    ]) {
      const r = await send(pair)
      assert.strictEqual(r.status, 401, r.body)
      assert.strictEqual((JSON.parse(r.body) as { error: string }).error, "invalid_client")
    }
  })

  it("refuses credentials also sent in the body", async () => {
    const res = await tokenRequest(s, app, { grant_type: "client_credentials", client_secret: app.appSecret })
    await expectError(res, 400, "invalid_request")
  })

  it("answers unsupported_grant_type and unauthorized_client", async () => {
    await expectError(await tokenRequest(s, app, { grant_type: "urn:x:foo" }), 400, "unsupported_grant_type")
    await expectError(await tokenRequest(s, app, { grant_type: "PASSWORD" }), 400, "unsupported_grant_type")
    await expectError(await tokenRequest(s, app, {}), 400, "invalid_request")
    const limited = await createApp(s, { grantTypes: ["authorization_code"] })
    await expectError(
      await tokenRequest(s, limited, { grant_type: "client_credentials" }),
      400,
      "unauthorized_client"
    )
    await expectError(
      await tokenRequest(s, limited, { grant_type: "password", username: "a", password: "b" }),
      400,
      "unauthorized_client"
    )
  })

  it("is not served on path variants", async () => {
    for (const path of [
      "/oauth2/oauth2/token/",
      "/OAUTH2/oauth2/token",
      "/oauth2//oauth2/token",
      "/oauth2/oauth2/token%2f"
    ]) {
      const direct = await postForm(
        `${s.base}${path}`,
        { grant_type: "client_credentials" },
        {
          authorization: basic(app.appKey, app.appSecret)
        }
      )
      assert.strictEqual(direct.status, 404, path)
    }
  })
})

describe("password grant", () => {
  it("issues tokens and answers one generic invalid_grant for a bad user or password", async () => {
    const user = await createUser(s)
    const ok = await tokenRequest(s, app, { grant_type: "password", ...user })
    assert.strictEqual(ok.status, 200)
    const body = (await ok.json()) as Record<string, unknown>
    assert.isString(body.refresh_token)
    assert.isString(body.open_id)
    const wrong = await expectError(
      await tokenRequest(s, app, {
        grant_type: "password",
        username: user.username,
        password: "wrong password"
      }),
      400,
      "invalid_grant"
    )
    const unknown = await expectError(
      await tokenRequest(s, app, {
        grant_type: "password",
        username: "no-such-user",
        password: "wrong password"
      }),
      400,
      "invalid_grant"
    )
    assert.deepStrictEqual(wrong, unknown)
  })
})

describe("authorization_code grant", () => {
  it("exchanges a code once; a replay is invalid_grant and revokes the tokens", async () => {
    const user = await createUser(s)
    const location = await authorizeAndAllow(
      s,
      new Browser(),
      { response_type: "code", client_id: app.appKey, redirect_uri: app.redirectUri, state: "xyz" },
      user
    )
    const code = codeOf(location)
    const first = await tokenRequest(s, app, {
      grant_type: "authorization_code",
      code,
      redirect_uri: app.redirectUri
    })
    assert.strictEqual(first.status, 200)
    const tokens = (await first.json()) as {
      access_token: string
      refresh_token: string
      scope: string
      open_id: string
    }
    assert.strictEqual(tokens.scope, "email,profile")
    assert.isString(tokens.open_id)
    const replay = await tokenRequest(s, app, {
      grant_type: "authorization_code",
      code,
      redirect_uri: app.redirectUri
    })
    await expectError(replay, 400, "invalid_grant")
    const introspected = await postForm(
      `${s.base}/oauth2/oauth2/introspect`,
      { token: tokens.access_token },
      {
        authorization: basic(app.appKey, app.appSecret)
      }
    )
    assert.deepStrictEqual(await introspected.json(), { active: false })
    const refresh = await tokenRequest(s, app, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token
    })
    await expectError(refresh, 400, "invalid_grant")
  })

  it("binds the code to the client and the redirect URI", async () => {
    const user = await createUser(s)
    const other = await createApp(s)
    const location = await authorizeAndAllow(
      s,
      new Browser(),
      { response_type: "code", client_id: app.appKey, redirect_uri: app.redirectUri },
      user
    )
    const code = codeOf(location)
    await expectError(
      await tokenRequest(s, other, { grant_type: "authorization_code", code, redirect_uri: app.redirectUri }),
      400,
      "invalid_grant"
    )
    await expectError(
      await tokenRequest(s, app, {
        grant_type: "authorization_code",
        code,
        redirect_uri: `${app.redirectUri}/`
      }),
      400,
      "invalid_grant"
    )
  })

  it("checks PKCE S256: the right verifier works, a missing or wrong one fails", async () => {
    const user = await createUser(s)
    const run = async () => {
      const p = pkce()
      const location = await authorizeAndAllow(
        s,
        new Browser(),
        {
          response_type: "code",
          client_id: app.appKey,
          redirect_uri: app.redirectUri,
          code_challenge: p.challenge,
          code_challenge_method: "S256"
        },
        user
      )
      return { code: codeOf(location), verifier: p.verifier }
    }
    const a = await run()
    await expectError(
      await tokenRequest(s, app, {
        grant_type: "authorization_code",
        code: a.code,
        redirect_uri: app.redirectUri
      }),
      400,
      "invalid_grant"
    )
    const b = await run()
    await expectError(
      await tokenRequest(s, app, {
        grant_type: "authorization_code",
        code: b.code,
        redirect_uri: app.redirectUri,
        code_verifier: pkce().verifier
      }),
      400,
      "invalid_grant"
    )
    const c = await run()
    const ok = await tokenRequest(s, app, {
      grant_type: "authorization_code",
      code: c.code,
      redirect_uri: app.redirectUri,
      code_verifier: c.verifier
    })
    assert.strictEqual(ok.status, 200)
  })

  it("refuses a code_verifier for a code issued without a challenge (no downgrade)", async () => {
    const user = await createUser(s)
    const location = await authorizeAndAllow(
      s,
      new Browser(),
      { response_type: "code", client_id: app.appKey, redirect_uri: app.redirectUri },
      user
    )
    await expectError(
      await tokenRequest(s, app, {
        grant_type: "authorization_code",
        code: codeOf(location),
        redirect_uri: app.redirectUri,
        code_verifier: pkce().verifier
      }),
      400,
      "invalid_grant"
    )
  })
})

describe("refresh_token grant", () => {
  const passwordTokens = async () => {
    const user = await createUser(s)
    const res = await tokenRequest(s, app, { grant_type: "password", ...user })
    return (await res.json()) as { access_token: string; refresh_token: string; scope: string }
  }

  it("narrows scope per request, refuses a wider one with invalid_scope", async () => {
    const t = await passwordTokens()
    await expectError(
      await tokenRequest(s, app, {
        grant_type: "refresh_token",
        refresh_token: t.refresh_token,
        scope: "email,profile,admin"
      }),
      400,
      "invalid_scope"
    )
    const narrowed = await tokenRequest(s, app, {
      grant_type: "refresh_token",
      refresh_token: t.refresh_token,
      scope: "profile"
    })
    assert.strictEqual(narrowed.status, 200)
    const n = (await narrowed.json()) as { refresh_token: string; scope: string }
    assert.strictEqual(n.scope, "profile")
    const full = await tokenRequest(s, app, { grant_type: "refresh_token", refresh_token: n.refresh_token })
    assert.strictEqual(((await full.json()) as { scope: string }).scope, "email,profile")
  })

  it("revokes the whole family when a rotated refresh token is reused", async () => {
    const t = await passwordTokens()
    const next = await tokenRequest(s, app, { grant_type: "refresh_token", refresh_token: t.refresh_token })
    const n = (await next.json()) as { access_token: string; refresh_token: string }
    await expectError(
      await tokenRequest(s, app, { grant_type: "refresh_token", refresh_token: t.refresh_token }),
      400,
      "invalid_grant"
    )
    await expectError(
      await tokenRequest(s, app, { grant_type: "refresh_token", refresh_token: n.refresh_token }),
      400,
      "invalid_grant"
    )
    const introspected = await postForm(
      `${s.base}/oauth2/oauth2/introspect`,
      { token: n.access_token },
      {
        authorization: basic(app.appKey, app.appSecret)
      }
    )
    assert.deepStrictEqual(await introspected.json(), { active: false })
  })

  it("refuses another client's refresh token", async () => {
    const t = await passwordTokens()
    const other = await createApp(s)
    await expectError(
      await tokenRequest(s, other, { grant_type: "refresh_token", refresh_token: t.refresh_token }),
      400,
      "invalid_grant"
    )
  })
})

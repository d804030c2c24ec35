/**
 * Back-channel logout against the server's own services and listener (SQLite): an application
 * registered with `--backchannel-logout-uri` (a test application listening on 127.0.0.1) signs a
 * user in with the code flow, the user logs out, and the application receives a logout token it
 * verifies with jose against the server's JWKS. When the application is down at first, it gets
 * the token on a retry. The worker is driven one run at a time (`deliverBackchannel`), a retry's
 * time set on a TestClock, never by sleeping.
 */
import { createServer, type RequestListener, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { LogoutStore } from "@latchkey/core"
import { ScryptHasher } from "@latchkey/node"
import { Clock, Effect, ManagedRuntime, TestClock, TestContext } from "effect"
import * as jose from "jose"
import * as App from "../src/App.js"
import * as Env from "../src/Env.js"
import * as Log from "../src/Log.js"
import * as Metrics from "../src/Metrics.js"
import { deliverBackchannel } from "../src/Server.js"
import * as Services from "../src/Services.js"
import { Browser, basic, cliInProcess, createUser, formOf, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "backchannel.sqlite")
const user = { username: "bc-user", password: "back-channel password 1" }
const redirectUri = "http://127.0.0.1/cb"

/** A test application's back-channel endpoint: answers `status()` and keeps every logout token. */
const receiver = async () => {
  const tokens: Array<string> = []
  let answer = 200
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => {
      body += c
    })
    req.on("end", () => {
      if (answer === 200) tokens.push(new URLSearchParams(body).get("logout_token") ?? "")
      res.writeHead(answer).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel`
  return { server, url, tokens, answer: (status: number) => (answer = status) }
}

let rp: Awaited<ReturnType<typeof receiver>>
let listener: Server
let base: string
let runtime: ManagedRuntime.ManagedRuntime<Services.Services, unknown>
let app: { app_key: string; app_secret: string }
const metrics = Metrics.make({ defaults: false })

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

beforeAll(async () => {
  rp = await receiver()
  await createUser(db, user.username, user.password, {}, true)
  const created = await cliInProcess(db, [
    ...[
      "app",
      "create",
      "--name",
      "Back-channel RP",
      "--redirect-uri",
      redirectUri,
      "--scope",
      "openid,profile"
    ],
    ...["--grant-types", "authorization_code", "--backchannel-logout-uri", rp.url, "--json"]
  ])
  app = JSON.parse(created.stdout)
  assert.strictEqual((app as unknown as { backchannel_logout_uri: string }).backchannel_logout_uri, rp.url)
  let handler: RequestListener = (_req, res) => res.writeHead(503).end()
  listener = createServer((req, res) => handler(req, res))
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
  const env = Env.read({ LATCHKEY_DB: db })
  runtime = ManagedRuntime.make(
    Services.layer(env, base, Log.make("silent"), { hasher: ScryptHasher.layer({ N: 1024, r: 8, p: 1 }) })
  )
  await runtime.runtime()
  metrics.bindBackchannel(() =>
    runtime.runPromise(Effect.flatMap(LogoutStore.LogoutStore, (s) => s.pending()))
  )
  handler = App.make({
    runtime,
    issuer: base,
    log: Log.make("silent"),
    scopeDescriptions: {},
    trustProxy: false
  })
}, 60_000)

afterAll(async () => {
  await runtime?.dispose()
  if (listener !== undefined) await close(listener)
  if (rp !== undefined) await close(rp.server)
  tmp.cleanup()
})

/** Sign in and allow with a cookie-keeping browser; the browser and the ID token of the code it got. */
const signedIn = async () => {
  const browser = new Browser()
  const query = new URLSearchParams({
    response_type: "code",
    client_id: app.app_key,
    redirect_uri: redirectUri,
    scope: "openid profile",
    state: "s"
  })
  const login = formOf(await (await browser.fetch(`${base}/oauth2/oauth2/authorize?${query}`)).text())
  const signed = await browser.postForm(base + login.action, { ...login.fields, ...user })
  let next = await browser.fetch(base + (signed.headers.get("location") as string))
  if (next.status !== 302) {
    const consent = formOf(await next.text())
    next = await browser.postForm(base + consent.action, { ...consent.fields, decision: "allow" })
  }
  const code = new URL(next.headers.get("location") as string).searchParams.get("code") as string
  const token = await fetch(`${base}/oauth2/oauth2/token`, {
    method: "POST",
    headers: {
      authorization: basic(app.app_key, app.app_secret),
      "content-type": "application/x-www-form-urlencoded"
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri
    }).toString()
  })
  const idToken = ((await token.json()) as { id_token: string }).id_token
  return { browser, idToken }
}

const logout = (browser: Browser, idToken: string) =>
  browser.fetch(`${base}/oauth2/oauth2/logout?${new URLSearchParams({ id_token_hint: idToken })}`)

/** One run of the worker, `later` seconds after now (a TestClock set from the runtime's clock). */
const deliverAt = (later = 0) =>
  runtime.runPromise(
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.zipRight(TestClock.setTime(now + later * 1000), deliverBackchannel).pipe(
        Effect.provide(TestContext.TestContext)
      )
    )
  )

const pendingMetric = async () =>
  (await metrics.registry.getSingleMetric("latchkey_backchannel_logout_pending")?.get())?.values[0]?.value

/** Verify a logout token as a relying party does: the server's JWKS, its issuer, the App Key, the type. */
const verified = async (token: string) => {
  const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string
    backchannel_logout_supported: boolean
    backchannel_logout_session_supported: boolean
  }
  assert.isTrue(discovery.backchannel_logout_supported)
  assert.isTrue(discovery.backchannel_logout_session_supported)
  const jwks = jose.createRemoteJWKSet(new URL(discovery.jwks_uri))
  const { payload } = await jose.jwtVerify(token, jwks, {
    issuer: base,
    audience: app.app_key,
    typ: "logout+jwt"
  })
  return payload
}

describe("back-channel logout from a running server's services", () => {
  it("the application receives a logout token naming the session, verifiable with the server's JWKS", async () => {
    const { browser, idToken } = await signedIn()
    assert.strictEqual((await logout(browser, idToken)).status, 200)
    assert.strictEqual(await pendingMetric(), 1)
    assert.deepStrictEqual(await runtime.runPromise(deliverBackchannel), {
      delivered: 1,
      retried: 0,
      gaveUp: 0
    })
    assert.strictEqual(rp.tokens.length, 1)
    const claims = await verified(rp.tokens[0] as string)
    const id = jose.decodeJwt(idToken)
    assert.strictEqual(claims.sub, id.sub)
    assert.strictEqual(claims.sid, id.sid)
    assert.deepStrictEqual(claims.events, { "http://schemas.openid.net/event/backchannel-logout": {} })
    assert.notProperty(claims, "nonce")
    assert.strictEqual(await pendingMetric(), 0)
  }, 60_000)

  it("an application down at first gets the token on a retry, after the backoff", async () => {
    rp.tokens.length = 0
    const { browser, idToken } = await signedIn()
    rp.answer(503)
    await logout(browser, idToken)
    assert.deepStrictEqual(await deliverAt(), { delivered: 0, retried: 1, gaveUp: 0 })
    rp.answer(200)
    // Not due yet: nothing is sent before the backoff ends
    assert.deepStrictEqual(await deliverAt(0), { delivered: 0, retried: 0, gaveUp: 0 })
    assert.deepStrictEqual(await deliverAt(11), { delivered: 1, retried: 0, gaveUp: 0 })
    assert.strictEqual(rp.tokens.length, 1)
    assert.strictEqual((await verified(rp.tokens[0] as string)).sid, jose.decodeJwt(idToken).sid)
  }, 60_000)

  it("the CLI clears the URI; a session of an application without one sends nothing", async () => {
    const cleared = await cliInProcess(db, [
      "app",
      "update",
      app.app_key,
      "--no-backchannel-logout-uri",
      "--json"
    ])
    assert.strictEqual(cleared.code, 0)
    assert.notProperty(JSON.parse(cleared.stdout), "backchannel_logout_uri")
    rp.tokens.length = 0
    const { browser, idToken } = await signedIn()
    await logout(browser, idToken)
    assert.deepStrictEqual(await deliverAt(), { delivered: 0, retried: 0, gaveUp: 0 })
    assert.strictEqual(rp.tokens.length, 0)
  }, 60_000)
})

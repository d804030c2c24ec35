import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, Page } from "playwright-core"
import { haveChromium, launchChromium } from "./chromium.js"
import { createApp, createUser, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

/** A site of its own origin (127.0.0.1 and a port of its own): a blank page at every path. */
const startSite = async (): Promise<{ readonly base: string; readonly close: () => Promise<void> }> => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end("<!doctype html><title>Single-page app</title><p>App</p>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** What `fetch` in the page gave: the status and text, or the rejection (a CORS refusal). */
type Fetched = { readonly status: number; readonly body: string } | { readonly rejected: string }

const fetchIn = (
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {}
) =>
  page.evaluate(
    async ({ url, init }): Promise<Fetched> => {
      try {
        const res = await fetch(url, init)
        return { status: res.status, body: await res.text() }
      } catch (e) {
        return { rejected: String(e) }
      }
    },
    { url, init }
  )

const readable = (f: Fetched): { readonly status: number; readonly json: Record<string, unknown> } => {
  assert.isFalse("rejected" in f, JSON.stringify(f))
  const { status, body } = f as { status: number; body: string }
  return { status, json: body === "" ? {} : (JSON.parse(body) as Record<string, unknown>) }
}

const password = "cors browser password"
const tmp = tempDir()
const db = join(tmp.dir, "cors.sqlite")
let server: ServerProcess
let browser: Browser
let spa: Awaited<ReturnType<typeof startSite>>
let rogue: Awaited<ReturnType<typeof startSite>>
let appKey: string

beforeAll(async () => {
  spa = await startSite()
  rogue = await startSite()
  const app = await createApp(db, [
    "--name",
    "Notes SPA",
    "--public",
    "--redirect-uri",
    `${spa.base}/cb`,
    "--scope",
    "openid,profile",
    "--grant-types",
    "authorization_code,refresh_token",
    "--web-origin",
    spa.base
  ])
  appKey = app.app_key
  await createUser(db, "cors-user", password, {}, true)
  const port = await freePort()
  server = await spawnServer(
    {
      LATCHKEY_DB: db,
      PORT: String(port),
      LATCHKEY_ISSUER: `http://127.0.0.1:${port}`
    },
    undefined,
    { timeoutMs: 60_000 }
  )
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await spa?.close()
  await rogue?.close()
  tmp.cleanup()
})

describe.skipIf(!haveChromium)("CORS in Chromium", () => {
  it("a page of the registered origin reads discovery and the JWK Set, redeems its code, refreshes, reads userinfo and revokes", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      const verifier = randomBytes(32).toString("base64url")
      const redirectUri = `${spa.base}/cb`
      await page.goto(
        `${server.base}/oauth2/oauth2/authorize?${new URLSearchParams({
          response_type: "code",
          client_id: appKey,
          redirect_uri: redirectUri,
          scope: "openid,profile",
          state: "spa",
          code_challenge: createHash("sha256").update(verifier).digest("base64url"),
          code_challenge_method: "S256"
        })}`
      )
      await page.getByLabel("Username").fill("cors-user")
      await page.getByLabel("Password").fill(password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await Promise.all([
        page.waitForURL(`${redirectUri}?**`),
        page.getByRole("button", { name: "Allow" }).click()
      ])
      const code = new URL(page.url()).searchParams.get("code") as string
      // Now on the application's own origin
      const discovery = readable(await fetchIn(page, `${server.base}/.well-known/openid-configuration`))
      assert.strictEqual(discovery.json.issuer, server.base)
      const jwks = readable(await fetchIn(page, discovery.json.jwks_uri as string))
      assert.isAbove((jwks.json.keys as Array<unknown>).length, 0)
      readable(await fetchIn(page, `${server.base}/.well-known/oauth-authorization-server`))
      const post = (body: Record<string, string>) =>
        fetchIn(page, discovery.json.token_endpoint as string, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(body).toString()
        })
      const redeem = { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: appKey }
      // An error answer is readable too, once the application is known
      const wrong = readable(await post({ ...redeem, code: "x".repeat(43), code_verifier: verifier }))
      assert.deepStrictEqual([wrong.status, wrong.json.error], [400, "invalid_grant"])
      const tokens = readable(await post({ ...redeem, code_verifier: verifier }))
      assert.strictEqual(tokens.status, 200, JSON.stringify(tokens.json))
      const refreshed = readable(
        await post({
          grant_type: "refresh_token",
          refresh_token: tokens.json.refresh_token as string,
          client_id: appKey
        })
      )
      assert.strictEqual(refreshed.status, 200, JSON.stringify(refreshed.json))
      assert.notStrictEqual(refreshed.json.access_token, tokens.json.access_token)
      const access = refreshed.json.access_token as string
      // Authorization makes the browser ask first (preflight)
      const userinfo = readable(
        await fetchIn(page, discovery.json.userinfo_endpoint as string, {
          headers: { authorization: `Bearer ${access}` }
        })
      )
      assert.deepStrictEqual([userinfo.status, userinfo.json.preferred_username], [200, "cors-user"])
      const revoked = readable(
        await fetchIn(page, discovery.json.revocation_endpoint as string, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token: access, client_id: appKey }).toString()
        })
      )
      assert.strictEqual(revoked.status, 200)
    } finally {
      await context.close()
    }
  })

  it("a page of an unregistered origin reads discovery and the JWK Set, but its token and userinfo calls are refused", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${rogue.base}/`)
      readable(await fetchIn(page, `${server.base}/.well-known/openid-configuration`))
      readable(await fetchIn(page, `${server.base}/oauth2/oauth2/jwks`))
      const token = await fetchIn(page, `${server.base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: "x".repeat(43),
          client_id: appKey
        }).toString()
      })
      assert.isTrue("rejected" in token, JSON.stringify(token))
      const userinfo = await fetchIn(page, `${server.base}/oauth2/oauth2/userinfo`, {
        headers: { authorization: "Bearer not-a-token" }
      })
      assert.isTrue("rejected" in userinfo, JSON.stringify(userinfo))
    } finally {
      await context.close()
    }
  })
})

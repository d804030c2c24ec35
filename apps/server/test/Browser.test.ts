import { existsSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Browser, chromium, type Page } from "playwright-core"
import {
  basic,
  createApp,
  createUser,
  freePort,
  type ServerProcess,
  spawnServer,
  tempDir
} from "./helpers.js"

const executablePath = "/usr/bin/chromium"
const tmp = tempDir()
const db = join(tmp.dir, "browser.sqlite")
let server: ServerProcess
let browser: Browser
let callback: Server
let callbackBase: string
const hits: Array<string> = []
let app: { app_key: string; app_secret: string }

beforeAll(async () => {
  callback = createServer((req, res) => {
    hits.push(req.url ?? "")
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end("<!doctype html><title>Callback</title><p>Back at the application.</p>")
  })
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve))
  callbackBase = `http://127.0.0.1:${(callback.address() as AddressInfo).port}`
  app = await createApp(db, [
    "--name",
    "Acme Notes",
    "--redirect-uri",
    `${callbackBase}/cb`,
    "--scope",
    "profile,email,notes.read",
    "--grant-types",
    "authorization_code,implicit,refresh_token"
  ])
  for (const name of ["browser-pc", "browser-mobile", "browser-implicit"])
    await createUser(db, name, "browser password")
  const port = await freePort()
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`,
    LATCHKEY_SCOPE_DESCRIPTIONS: JSON.stringify({
      profile: "See your name and profile picture",
      email: "See your email address",
      "notes.read": "Read your notes"
    })
  })
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await new Promise<void>((resolve) => callback.close(() => resolve()))
  tmp.cleanup()
})

const authorizeUrl = (params: Record<string, string>) =>
  `${server.base}/oauth2/oauth2/authorize?${new URLSearchParams({
    client_id: app.app_key,
    redirect_uri: `${callbackBase}/cb`,
    ...params
  })}`

const signIn = async (page: Page, username: string) => {
  await page.getByLabel("Username").fill(username)
  await page.getByLabel("Password").fill("browser password")
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("button", { name: "Allow" }).waitFor({ timeout: 10_000 })
}

describe.skipIf(!existsSync(executablePath))("in Chromium", () => {
  for (const layout of [
    { clientType: "PC", user: "browser-pc", viewport: { width: 1280, height: 860 }, isMobile: false },
    { clientType: "Mobile", user: "browser-mobile", viewport: { width: 390, height: 844 }, isMobile: true }
  ] as const) {
    it(`signs in, consents and lands on the callback with code and state (${layout.clientType})`, async () => {
      const context = await browser.newContext({
        viewport: layout.viewport,
        isMobile: layout.isMobile,
        deviceScaleFactor: layout.isMobile ? 2 : 1
      })
      try {
        const page = await context.newPage()
        const errors: Array<string> = []
        page.on("console", (m) => {
          if (m.type() === "error") errors.push(m.text())
        })
        await page.goto(
          authorizeUrl({
            response_type: "code",
            state: `st-${layout.clientType}`,
            client_type: layout.clientType
          })
        )
        assert.strictEqual(await page.title(), "Sign in · Latchkey")
        const name = layout.clientType.toLowerCase()
        await page.screenshot({ path: `/tmp/latchkey-login-${name}.png`, fullPage: true })
        await signIn(page, layout.user)
        assert.include(await page.content(), "Read your notes")
        await page.screenshot({ path: `/tmp/latchkey-consent-${name}.png`, fullPage: true })
        await Promise.all([
          page.waitForURL(`${callbackBase}/cb?**`),
          page.getByRole("button", { name: "Allow" }).click()
        ])
        const landed = new URL(page.url())
        assert.strictEqual(landed.searchParams.get("state"), `st-${layout.clientType}`)
        assert.strictEqual(landed.searchParams.get("iss"), server.base)
        const code = landed.searchParams.get("code") as string
        assert.isString(code)
        assert.isTrue(hits.some((h) => h.includes(`code=${encodeURIComponent(code)}`)))
        assert.deepStrictEqual(errors, [])
        const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
          method: "POST",
          headers: {
            authorization: basic(app.app_key, app.app_secret),
            "content-type": "application/x-www-form-urlencoded"
          },
          body: new URLSearchParams({
            grant_type: "authorization_code",
            code,
            redirect_uri: `${callbackBase}/cb`
          }).toString()
        })
        assert.strictEqual(res.status, 200)
      } finally {
        await context.close()
      }
    })
  }

  it("delivers the implicit token in the fragment", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(authorizeUrl({ response_type: "token", state: "imp", scope: "profile" }))
      await signIn(page, "browser-implicit")
      await Promise.all([
        page.waitForURL(`${callbackBase}/cb#**`),
        page.getByRole("button", { name: "Allow" }).click()
      ])
      const fragment = new URLSearchParams(new URL(page.url()).hash.slice(1))
      assert.isString(fragment.get("access_token"))
      assert.strictEqual(fragment.get("token_type"), "Bearer")
      assert.strictEqual(fragment.get("state"), "imp")
      assert.strictEqual(fragment.get("scope"), "profile")
      assert.isNull(fragment.get("refresh_token"))
      assert.notInclude(hits.join("\n"), "access_token")
      const me = await fetch(`${server.base}/api/me`, {
        headers: { authorization: `Bearer ${fragment.get("access_token")}` }
      })
      assert.strictEqual(me.status, 200)
      // remembered consent: the next authorization goes straight back
      await page.goto(authorizeUrl({ response_type: "token", state: "again", scope: "profile" }))
      await page.waitForURL(`${callbackBase}/cb#**`)
      assert.strictEqual(new URLSearchParams(new URL(page.url()).hash.slice(1)).get("state"), "again")
    } finally {
      await context.close()
    }
  })

  it("refuses to be framed", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${callbackBase}/frame`)
      await page.setContent(`<iframe src="${authorizeUrl({ response_type: "code" })}"></iframe>`)
      await page.waitForTimeout(500)
      const frame = page.frames().find((f) => f.url().includes("/oauth2/oauth2/authorize"))
      const text = frame === undefined ? "" : await frame.content().catch(() => "")
      assert.notInclude(text, "Sign in")
    } finally {
      await context.close()
    }
  })
})

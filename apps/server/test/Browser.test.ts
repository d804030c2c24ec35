import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser } from "playwright-core"
import {
  authorizeUrl,
  type BrowserFlowTarget,
  browserFlowTests,
  type Callback,
  scopeDescriptions,
  seedBrowserFlows,
  signIn,
  startCallback
} from "./browserFlows.js"
import { haveChromium, launchChromium } from "./chromium.js"
import { basic, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "browser.sqlite")
let server: ServerProcess
let browser: Browser
let callback: Callback
let target: BrowserFlowTarget

beforeAll(async () => {
  callback = await startCallback()
  const app = await seedBrowserFlows(db, callback.base)
  const port = await freePort()
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`,
    LATCHKEY_SCOPE_DESCRIPTIONS: scopeDescriptions
  })
  browser = await launchChromium()
  target = { base: server.base, browser, callback, app }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

describe.skipIf(!haveChromium)("in Chromium", () => {
  browserFlowTests(() => target, { screenshots: true })

  it("lists the consent on the consents page; Withdraw revokes the refresh token and the next authorization asks again", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      const errors: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text())
      })
      await page.goto(authorizeUrl(target, { response_type: "code", state: "withdraw" }))
      await signIn(page, "browser-consents")
      await Promise.all([
        page.waitForURL(`${callback.base}/cb?**`),
        page.getByRole("button", { name: "Allow" }).click()
      ])
      const code = new URL(page.url()).searchParams.get("code") as string
      const token = (body: Record<string, string>) =>
        fetch(`${target.base}/oauth2/oauth2/token`, {
          method: "POST",
          headers: {
            authorization: basic(target.app.app_key, target.app.app_secret),
            "content-type": "application/x-www-form-urlencoded"
          },
          body: new URLSearchParams(body).toString()
        })
      const issued = await token({
        grant_type: "authorization_code",
        code,
        redirect_uri: `${callback.base}/cb`
      })
      assert.strictEqual(issued.status, 200)
      const { refresh_token } = (await issued.json()) as { refresh_token: string }
      // the session cookie (Path=/oauth2/oauth2) reaches the consents page
      await page.goto(`${target.base}/oauth2/oauth2/consents`)
      assert.strictEqual(await page.title(), "Authorised applications · Latchkey")
      await page.getByRole("heading", { name: "Acme Notes" }).waitFor()
      assert.include(await page.content(), "See your email address")
      await Promise.all([
        page.waitForURL(`${target.base}/oauth2/oauth2/consents?withdrawn=**`),
        page.getByRole("button", { name: "Withdraw access" }).click()
      ])
      assert.strictEqual(
        (await page.getByRole("status").textContent())?.trim(),
        "Acme Notes can no longer access your account."
      )
      assert.strictEqual(await page.getByRole("button", { name: "Withdraw access" }).count(), 0)
      // the application's refresh token is refused
      const refreshed = await token({ grant_type: "refresh_token", refresh_token })
      assert.strictEqual(refreshed.status, 400)
      assert.strictEqual(((await refreshed.json()) as { error: string }).error, "invalid_grant")
      // still signed in, the next authorization shows the consent page again instead of going back
      await page.goto(authorizeUrl(target, { response_type: "code", state: "again" }))
      await page.getByRole("button", { name: "Allow" }).waitFor()
      assert.isTrue(page.url().startsWith(`${target.base}/oauth2/oauth2/authorize?`))
      // Sign out on the consents page: it asks to sign in again
      await page.goto(`${target.base}/oauth2/oauth2/consents`)
      await Promise.all([
        page.waitForURL(`${target.base}/oauth2/oauth2/consents`),
        page.getByRole("button", { name: "Sign out" }).click()
      ])
      await page.getByRole("heading", { name: "Sign in to manage authorised applications" }).waitFor()
      assert.deepStrictEqual(errors, [])
    } finally {
      await context.close()
    }
  })

  it("refuses to be framed", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${callback.base}/frame`)
      // The frame's load event (fired for the error page a refused frame shows too), not a pause:
      // the check below runs once the browser has decided
      await page.setContent(
        `<iframe src="${authorizeUrl(target, { response_type: "code" })}" onload="document.body.dataset.framed = 'loaded'"></iframe>`
      )
      await page.waitForSelector("body[data-framed=loaded]", { state: "attached" })
      const frame = page.frames().find((f) => f.url().includes("/oauth2/oauth2/authorize"))
      const text = frame === undefined ? "" : await frame.content().catch(() => "")
      assert.notInclude(text, "Sign in")
    } finally {
      await context.close()
    }
  })
})

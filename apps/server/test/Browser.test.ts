import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser } from "playwright-core"
import {
  authorizeUrl,
  type BrowserFlowTarget,
  browserFlowTests,
  type Callback,
  executablePath,
  launchChromium,
  scopeDescriptions,
  seedBrowserFlows,
  startCallback
} from "./browserFlows.js"
import { freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

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

describe.skipIf(!existsSync(executablePath))("in Chromium", () => {
  browserFlowTests(() => target, { screenshots: true })

  it("refuses to be framed", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${callback.base}/frame`)
      await page.setContent(`<iframe src="${authorizeUrl(target, { response_type: "code" })}"></iframe>`)
      await page.waitForTimeout(500)
      const frame = page.frames().find((f) => f.url().includes("/oauth2/oauth2/authorize"))
      const text = frame === undefined ? "" : await frame.content().catch(() => "")
      assert.notInclude(text, "Sign in")
    } finally {
      await context.close()
    }
  })
})

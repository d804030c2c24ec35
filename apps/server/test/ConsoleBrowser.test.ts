/**
 * The operator console in Chromium against the reference server: operators created with the CLI
 * sign in on the admin listener and see the applications; a viewer has no rotate button and a
 * forged rotation is 403 with the secret unchanged; an operator rotates and sees the new secret once.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { haveChromium, launchChromium } from "./chromium.js"
import { basic, cli, createApp, type ServerProcess, spawnServer, tempDir } from "./helpers.js"
import { adminPort, adminToken } from "./prometheus.js"

const tmp = tempDir()
const db = join(tmp.dir, "console.sqlite")
const password = "an operator passphrase"
let server: ServerProcess
let browser: Browser
let admin: string
let app: { app_key: string; app_secret: string }

beforeAll(async () => {
  for (const [name, role] of [
    ["ola", "operator"],
    ["vic", "viewer"]
  ] as const) {
    const created = await cli(
      db,
      ["operator", "create", name, `--role=${role}`, "--password-stdin"],
      `${password}\n`
    )
    if (created.code !== 0) throw new Error(created.stderr)
  }
  app = await createApp(db, [
    "--name",
    "Console App",
    "--redirect-uri",
    "https://app.example/cb",
    "--grant-types",
    "client_credentials"
  ])
  server = await spawnServer(
    {
      LATCHKEY_DB: db,
      PORT: "0",
      LATCHKEY_ADMIN_PORT: "0",
      LATCHKEY_ADMIN_TOKEN: adminToken,
      LATCHKEY_CONSOLE: "on"
    },
    undefined,
    { timeoutMs: 30_000 }
  )
  admin = `http://127.0.0.1:${await adminPort(server)}`
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  tmp.cleanup()
})

/** The token endpoint's status for client_credentials with this secret. */
const tokenStatus = async (secret: string): Promise<number> =>
  (
    await fetch(`${server.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: basic(app.app_key, secret),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "grant_type=client_credentials"
    })
  ).status

/** A new browser context signed in to the console as `name`, on the applications view. */
const signedIn = async (name: string): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${admin}/console`)
  await page.getByRole("heading", { name: "Sign in to the console" }).waitFor()
  await page.getByLabel("Operator name").fill(name)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { name: "Applications" }).waitFor({ timeout: 10_000 })
  return { context, page }
}

describe.skipIf(!haveChromium)("the operator console in Chromium", () => {
  it("a viewer sees the applications without a rotate button; a forged rotation is 403 and changes nothing", async () => {
    const { context, page } = await signedIn("vic")
    try {
      assert.strictEqual(await page.locator("html").getAttribute("lang"), "en")
      assert.strictEqual(await page.getByRole("heading", { name: "Console App" }).count(), 1)
      assert.include((await page.getByText(app.app_key).textContent()) ?? "", app.app_key)
      assert.strictEqual(await page.getByRole("button", { name: "Rotate secret" }).count(), 0)
      const csrf = await page.locator('input[name="csrf_token"]').first().getAttribute("value")
      const forged = await context.request.post(`${admin}/console/apps/rotate-secret`, {
        form: { csrf_token: csrf ?? "", app_key: app.app_key },
        maxRedirects: 0
      })
      assert.strictEqual(forged.status(), 403)
      assert.strictEqual(await tokenStatus(app.app_secret), 200, "the secret is unchanged")
    } finally {
      await context.close()
    }
  })

  it("an operator rotates the secret and sees the new one once; the old one stops", async () => {
    const { context, page } = await signedIn("ola")
    try {
      const response = page.waitForResponse((r) => r.url().endsWith("/console/apps/rotate-secret"))
      await page.getByRole("button", { name: "Rotate secret" }).click()
      const answer = await response
      assert.strictEqual(answer.status(), 200)
      assert.strictEqual(answer.headers()["cache-control"], "no-store")
      assert.strictEqual(answer.headers()["x-frame-options"], "DENY")
      assert.include(answer.headers()["content-security-policy"] ?? "", "frame-ancestors 'none'")
      const secret = await page.getByLabel("New App Secret").inputValue()
      assert.isAtLeast(secret.length, 32)
      assert.strictEqual(await tokenStatus(secret), 200)
      assert.strictEqual(await tokenStatus(app.app_secret), 401)
      app = { ...app, app_secret: secret }
      await page.goto(`${admin}/console/apps`)
      await page.getByRole("heading", { name: "Applications" }).waitFor()
      assert.strictEqual(await page.getByLabel("New App Secret").count(), 0, "shown once")
      await page.getByRole("button", { name: "Sign out" }).click()
      await page.getByRole("heading", { name: "Sign in to the console" }).waitFor()
    } finally {
      await context.close()
    }
  })
})

/**
 * The account page in Chromium against the reference server: sign in on the page, change the
 * password there, and the user's other browser is signed out while this one stays signed in; a
 * form posted to the page from another site is refused.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { type Callback, startCallback } from "./browserFlows.js"
import { haveChromium, launchChromium } from "./chromium.js"
import { cliInProcess, createUser, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "account.sqlite")
const username = "account-browser"
const firstPassword = "first passphrase"
const secondPassword = "second passphrase"
let server: ServerProcess
let browser: Browser
let callback: Callback

beforeAll(async () => {
  callback = await startCallback()
  await createUser(db, username, firstPassword, {}, true)
  const port = await freePort()
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`
  })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

const accountUrl = () => `${server.base}/oauth2/oauth2/account`

/** A new browser context signed in on the account page with `password`; its page shows the account. */
const signedIn = async (password: string): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(accountUrl())
  await page.getByRole("heading", { name: "Sign in to manage your account" }).waitFor()
  await page.getByLabel("Username").fill(username)
  await page.getByLabel("Password", { exact: true }).fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { name: "Your account" }).waitFor({ timeout: 10_000 })
  return { context, page }
}

describe.skipIf(!haveChromium)("the account page in Chromium", () => {
  it("sign in → account → change password: the other session ends, this one stays, the new password signs in", async () => {
    const here = await signedIn(firstPassword)
    const there = await signedIn(firstPassword)
    try {
      const { page } = here
      const errors: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text())
      })
      await page.reload()
      const region = page.getByRole("region", { name: "Where you are signed in" })
      // The section's first list is the sessions'; its second the trusted devices'
      const sessions = region.getByRole("list").first()
      assert.strictEqual(await sessions.getByRole("listitem").count(), 2)
      assert.strictEqual(await region.getByRole("list").nth(1).getByRole("listitem").count(), 2)
      assert.strictEqual(await sessions.getByText("This device", { exact: true }).count(), 1)
      assert.strictEqual(await page.title(), "Your account · Latchkey")
      await page.getByLabel("Current password").fill(firstPassword)
      await page.getByLabel("New password", { exact: true }).fill(secondPassword)
      await page.getByLabel("Confirm new password").fill(secondPassword)
      await Promise.all([
        page.waitForURL(`${accountUrl()}?done=**`),
        page.getByRole("button", { name: "Change password" }).click()
      ])
      assert.strictEqual(
        (await page.getByRole("status").textContent())?.trim(),
        "Your password has been changed. You were signed out everywhere else."
      )
      assert.strictEqual(await sessions.getByRole("listitem").count(), 1)
      // The other browser was signed out by the change
      await there.page.goto(accountUrl())
      await there.page.getByRole("heading", { name: "Sign in to manage your account" }).waitFor()
      // The new password signs in; the old one no longer
      const again = await signedIn(secondPassword)
      await again.context.close()
      await there.page.getByLabel("Username").fill(username)
      await there.page.getByLabel("Password", { exact: true }).fill(firstPassword)
      await there.page.getByRole("button", { name: "Sign in" }).click()
      await there.page.getByRole("alert").getByText("Username or password is incorrect.").waitFor()
      const audit = await cliInProcess(db, ["audit", "tail", "--type", "password_changed", "--json"])
      assert.strictEqual(audit.code, 0, audit.stderr)
      assert.match(audit.stdout, /"actor":\s*"user"/)
      assert.deepStrictEqual(errors, [])
    } finally {
      await here.context.close()
      await there.context.close()
    }
  })

  it("refuses a form posted to it from another site (CSRF): 403, nothing ended", async () => {
    const here = await signedIn(secondPassword)
    const other = await signedIn(secondPassword)
    try {
      const { page } = here
      await page.goto(`${callback.base}/evil`)
      await page.setContent(
        `<form method="post" action="${accountUrl()}"><input type="hidden" name="action" value="end_others"><input type="hidden" name="txn" value="x"><input type="hidden" name="csrf_token" value="y"><button>Go</button></form>`
      )
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === accountUrl()),
        page.getByRole("button", { name: "Go" }).click()
      ])
      assert.strictEqual(response.status(), 403)
      await other.page.reload()
      await other.page.getByRole("heading", { name: "Your account" }).waitFor()
    } finally {
      await here.context.close()
      await other.context.close()
    }
  })
})

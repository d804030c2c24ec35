/**
 * The authenticator app in Chromium: on the account page a user adds an app, reading the secret
 * from the page (and its QR code is there, as inline SVG), confirms it with a code computed from
 * that secret (`Totp.codeAt`) and sees ten recovery codes; signed out, the authorize flow's sign-in
 * asks for a code after the password and the application gets its code. Then a step-up: a session
 * signed in with the password alone before the app was added is asked for a code by a request
 * with `acr_values=urn:latchkey:acr:mfa`, gives one of the recovery codes the page showed, and the
 * application gets its code. And enrolment in the flow: a user without an app signs in to an
 * application created with `--require-mfa`, reads the secret from the flow's enrolment page, types
 * a computed code, sees the recovery codes, Continues, and the application gets a code whose ID
 * token has `acr` `urn:latchkey:acr:mfa`. The server runs on its real clock, so codes are computed
 * for the step the server is at, each later than the last.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Totp } from "@latchkey/core"
import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { type Callback, startCallback } from "./browserFlows.js"
import { haveChromium, launchChromium } from "./chromium.js"
import {
  basic,
  createApp,
  createUser,
  freePort,
  type ServerProcess,
  spawnServer,
  tempDir
} from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "mfa.sqlite")
const username = "mfa-owner"
const password = "mfa owner password"
let server: ServerProcess
let browser: Browser
let callback: Callback
let app: { readonly app_key: string }
let vault: { readonly app_key: string; readonly app_secret: string }
const newcomer = "mfa-newcomer"

beforeAll(async () => {
  callback = await startCallback()
  app = await createApp(db, [
    "--name",
    "Acme Notes",
    "--redirect-uri",
    `${callback.base}/cb`,
    "--scope",
    "openid,profile"
  ])
  await createUser(db, username, password, {}, true)
  vault = await createApp(db, [
    "--name",
    "Acme Vault",
    "--redirect-uri",
    `${callback.base}/cb`,
    "--scope",
    "openid,profile",
    "--require-mfa"
  ])
  await createUser(db, newcomer, password, {}, true)
  const port = await freePort()
  server = await spawnServer(
    { LATCHKEY_DB: db, PORT: String(port), LATCHKEY_ISSUER: `http://127.0.0.1:${port}` },
    undefined,
    { timeoutMs: 60_000 }
  )
  browser = await launchChromium()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

const authorizeUrl = (state: string, extra: Record<string, string> = {}, clientId = app.app_key) =>
  `${server.base}/oauth2/oauth2/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: `${callback.base}/cb`,
    scope: "openid profile",
    state,
    ...extra
  })}`

/** The callback hit of `state`, once the browser lands there: its code. */
const landed = async (page: Page, state: string) => {
  await page.waitForURL((u) => u.toString().startsWith(`${callback.base}/cb`), { timeout: 15_000 })
  const url = new URL(page.url())
  assert.strictEqual(url.searchParams.get("state"), state)
  return url.searchParams.get("code")
}

/** The steps already used: a code is accepted once per step, and only after the last one used. */
let lastStep = -1

/**
 * The code of `secret` for the step the server is at now, or the next one when that was used
 * (the server accepts one step either side of its own).
 */
const nextCode = (secret: string): Promise<string> => {
  const step = Math.max(Totp.stepAt(Math.floor(Date.now() / 1000)), lastStep + 1)
  lastStep = step
  return Effect.runPromise(Totp.codeAt(Totp.fromBase32(secret) ?? new Uint8Array(), step))
}

/** Sign in on the sign-in page shown with the password. */
const passwordStep = async (page: Page, as = username) => {
  await page.getByLabel("Username").fill(as)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in", exact: true }).click()
}

describe.skipIf(!haveChromium)("the authenticator app in Chromium", () => {
  it("adds an app on the account page, signs in with the password then a code, and steps up a password session by acr_values", async () => {
    // A session signed in with the password alone, before any app: kept for the step-up
    const earlier = await browser.newContext()
    const old = await earlier.newPage()
    await old.goto(authorizeUrl("before"))
    await passwordStep(old)
    await old.getByRole("button", { name: "Allow" }).click()
    assert.isNotNull(await landed(old, "before"))

    // The account page: sign in, add an app, read the secret, confirm with a computed code
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${server.base}/oauth2/oauth2/account`)
    await passwordStep(page)
    await page.getByRole("button", { name: "Add an authenticator app" }).click()
    const secret = (await page.locator("#totp-secret").textContent()) ?? ""
    assert.match(secret, /^[A-Z2-7]{32}$/)
    assert.include((await page.locator("#totp-uri").textContent()) ?? "", `secret=${secret}`)
    assert.strictEqual(await page.locator("svg.qr").count(), 1, "the QR code, inline")
    await page.getByLabel("Code from the app").fill(await nextCode(secret))
    await page.getByRole("button", { name: "Turn on" }).click()
    const recoveryCodes = await page.locator(".recovery-codes code").allTextContents()
    assert.strictEqual(recoveryCodes.length, 10)

    // Signed out: the authorize flow asks for the password, then a code
    await page.getByRole("button", { name: "Sign out" }).first().click()
    await page.goto(authorizeUrl("second-factor"))
    await passwordStep(page)
    await page.getByLabel("Code", { exact: true }).fill(await nextCode(secret))
    await page.getByRole("button", { name: "Continue" }).click()
    assert.isNotNull(await landed(page, "second-factor"))

    // Step-up: the earlier password session, asked for two factors, gives a recovery code in the
    // code field (the next computed code could be two steps ahead of the server's clock)
    await old.goto(authorizeUrl("step-up", { acr_values: "urn:latchkey:acr:mfa" }))
    await old.getByLabel("Code", { exact: true }).fill(recoveryCodes[0] ?? "")
    await old.getByRole("button", { name: "Continue" }).click()
    assert.isNotNull(await landed(old, "step-up"))
    await earlier.close()
    await context.close()
  }, 120_000)

  it("leads a user without an app to enrol in the flow for an application with --require-mfa; the ID token says two factors", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(authorizeUrl("enrol", {}, vault.app_key))
    await passwordStep(page, newcomer)
    await page.getByText("Acme Vault requires a second step at sign-in").waitFor({ timeout: 10_000 })
    const secret = (await page.locator("#totp-secret").textContent()) ?? ""
    assert.match(secret, /^[A-Z2-7]{32}$/)
    assert.strictEqual(await page.locator("svg.qr").count(), 1, "the QR code, inline")
    // Reloaded, the page shows the same secret
    await page.reload()
    assert.strictEqual(await page.locator("#totp-secret").textContent(), secret)
    const step = Totp.stepAt(Math.floor(Date.now() / 1000))
    const code = await Effect.runPromise(Totp.codeAt(Totp.fromBase32(secret) ?? new Uint8Array(), step))
    await page.getByLabel("Code from the app").fill(code)
    await page.getByRole("button", { name: "Turn on" }).click()
    const recoveryCodes = await page.locator(".recovery-codes code").allTextContents()
    assert.strictEqual(recoveryCodes.length, 10)
    await page.getByRole("link", { name: "Continue" }).click()
    await page.getByRole("button", { name: "Allow" }).click()
    const issued = await landed(page, "enrol")
    assert.isNotNull(issued)
    const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: basic(vault.app_key, vault.app_secret),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: issued ?? "",
        redirect_uri: `${callback.base}/cb`
      }).toString()
    })
    assert.strictEqual(res.status, 200)
    const { id_token } = (await res.json()) as { id_token: string }
    const claims = JSON.parse(Buffer.from(id_token.split(".")[1] ?? "", "base64url").toString("utf8"))
    assert.strictEqual(claims.acr, "urn:latchkey:acr:mfa")
    await context.close()
  }, 120_000)
})

/**
 * The Chromium flows of Browser.test.ts as a function of where the server is: the code flow
 * (PC and Mobile layouts) and the implicit flow, from the authorize URL to the callback. They
 * also run through a round-robin proxy in front of two instances (test/scale).
 */

import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, it } from "@effect/vitest"
import type { Browser, Page } from "playwright-core"
import { basic, createApp, createUser } from "./helpers.js"

/** The application's callback on 127.0.0.1: a page that records every URL it was sent to. */
export interface Callback {
  readonly base: string
  readonly hits: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/** Start the callback on a free port. */
export const startCallback = async (): Promise<Callback> => {
  const hits: Array<string> = []
  const server = createServer((req, res) => {
    hits.push(req.url ?? "")
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end("<!doctype html><title>Callback</title><p>Back at the application.</p>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** LATCHKEY_SCOPE_DESCRIPTIONS of the flows' server. */
export const scopeDescriptions = JSON.stringify({
  profile: "See your name and profile picture",
  email: "See your email address",
  "notes.read": "Read your notes"
})

/** The password of the flows' users. */
const browserPassword = "browser password"
const password = browserPassword

/** The flows' application, redirecting to `callbackBase`, and their users, created with the CLI. */
export const seedBrowserFlows = async (
  db: string,
  callbackBase: string,
  env: Record<string, string> = {},
  inProcess = false
): Promise<{ app_key: string; app_secret: string }> => {
  const app = await createApp(
    db,
    [
      "--name",
      "Acme Notes",
      "--redirect-uri",
      `${callbackBase}/cb`,
      "--scope",
      "profile,email,notes.read",
      "--grant-types",
      "authorization_code,implicit,refresh_token"
    ],
    env
  )
  for (const name of ["browser-pc", "browser-mobile", "browser-implicit", "browser-consents"])
    await createUser(db, name, password, env, inProcess)
  return app
}

/** Where the flows run. */
export interface BrowserFlowTarget {
  /** The server's base URL, also its issuer. */
  readonly base: string
  readonly browser: Browser
  readonly callback: Callback
  readonly app: { readonly app_key: string; readonly app_secret: string }
}

/** An authorize URL of the flows' application. */
export const authorizeUrl = (t: BrowserFlowTarget, params: Record<string, string>): string =>
  `${t.base}/oauth2/oauth2/authorize?${new URLSearchParams({
    client_id: t.app.app_key,
    redirect_uri: `${t.callback.base}/cb`,
    ...params
  })}`

/** Sign in on the sign-in page `page` shows, and wait for the consent page. */
export const signIn = async (page: Page, username: string): Promise<void> => {
  await page.getByLabel("Username").fill(username)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("button", { name: "Allow" }).waitFor({ timeout: 10_000 })
}

/**
 * In `page`, sign in as `user` at `url` and Allow when the consent page asks (an application
 * allowed before answers at once); the URL the browser lands on at `landing` (`<callback>/cb`).
 */
export const signInAndAllowIn = async (
  page: Page,
  url: string,
  user: { readonly username: string; readonly password: string },
  landing: string
): Promise<URL> => {
  await page.goto(url)
  await page.getByLabel("Username").fill(user.username)
  await page.getByLabel("Password").fill(user.password)
  await page.getByRole("button", { name: "Sign in" }).click()
  const allow = page.getByRole("button", { name: "Allow" })
  const back = page.waitForURL(`${landing}?**`)
  await Promise.race([back, allow.waitFor({ timeout: 10_000 })])
  if (!page.url().startsWith(landing)) await Promise.all([back, allow.click()])
  return new URL(page.url())
}

/**
 * Register the flows' tests on `target` (read when they run): the code flow in both layouts, with
 * S256 PKCE when `pkce` (its name says so), screenshots of the pages to /tmp when `screenshots`,
 * and the implicit flow.
 */
export const browserFlowTests = (
  target: () => BrowserFlowTarget,
  options: { readonly pkce?: boolean; readonly screenshots?: boolean } = {}
): void => {
  for (const layout of [
    { clientType: "PC", user: "browser-pc", viewport: { width: 1280, height: 860 }, isMobile: false },
    { clientType: "Mobile", user: "browser-mobile", viewport: { width: 390, height: 844 }, isMobile: true }
  ] as const) {
    it(`signs in, consents and lands on the callback with code and state (${layout.clientType}${options.pkce === true ? ", PKCE" : ""})`, async () => {
      const t = target()
      const context = await t.browser.newContext({
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
        const verifier = randomBytes(32).toString("base64url")
        const pkce =
          options.pkce === true
            ? {
                code_challenge: createHash("sha256").update(verifier).digest("base64url"),
                code_challenge_method: "S256"
              }
            : {}
        await page.goto(
          authorizeUrl(t, {
            response_type: "code",
            state: `st-${layout.clientType}`,
            client_type: layout.clientType,
            ...pkce
          })
        )
        assert.strictEqual(await page.title(), "Sign in · Latchkey")
        const name = layout.clientType.toLowerCase()
        if (options.screenshots === true)
          await page.screenshot({ path: `/tmp/latchkey-login-${name}.png`, fullPage: true })
        await signIn(page, layout.user)
        assert.include(await page.content(), "Read your notes")
        if (options.screenshots === true)
          await page.screenshot({ path: `/tmp/latchkey-consent-${name}.png`, fullPage: true })
        await Promise.all([
          page.waitForURL(`${t.callback.base}/cb?**`),
          page.getByRole("button", { name: "Allow" }).click()
        ])
        const landed = new URL(page.url())
        assert.strictEqual(landed.searchParams.get("state"), `st-${layout.clientType}`)
        assert.strictEqual(landed.searchParams.get("iss"), t.base)
        const code = landed.searchParams.get("code") as string
        assert.isString(code)
        assert.isTrue(t.callback.hits.some((h) => h.includes(`code=${encodeURIComponent(code)}`)))
        assert.deepStrictEqual(errors, [])
        const res = await fetch(`${t.base}/oauth2/oauth2/token`, {
          method: "POST",
          headers: {
            authorization: basic(t.app.app_key, t.app.app_secret),
            "content-type": "application/x-www-form-urlencoded"
          },
          body: new URLSearchParams({
            grant_type: "authorization_code",
            code,
            redirect_uri: `${t.callback.base}/cb`,
            ...(options.pkce === true ? { code_verifier: verifier } : {})
          }).toString()
        })
        assert.strictEqual(res.status, 200)
      } finally {
        await context.close()
      }
    })
  }

  it("delivers the implicit token in the fragment", async () => {
    const t = target()
    const context = await t.browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(authorizeUrl(t, { response_type: "token", state: "imp", scope: "profile" }))
      await signIn(page, "browser-implicit")
      await Promise.all([
        page.waitForURL(`${t.callback.base}/cb#**`),
        page.getByRole("button", { name: "Allow" }).click()
      ])
      const fragment = new URLSearchParams(new URL(page.url()).hash.slice(1))
      assert.isString(fragment.get("access_token"))
      assert.strictEqual(fragment.get("token_type"), "Bearer")
      assert.strictEqual(fragment.get("state"), "imp")
      assert.strictEqual(fragment.get("scope"), "profile")
      assert.isNull(fragment.get("refresh_token"))
      assert.notInclude(t.callback.hits.join("\n"), "access_token")
      const me = await fetch(`${t.base}/api/me`, {
        headers: { authorization: `Bearer ${fragment.get("access_token")}` }
      })
      assert.strictEqual(me.status, 200)
      // remembered consent: the next authorization goes straight back
      await page.goto(authorizeUrl(t, { response_type: "token", state: "again", scope: "profile" }))
      await page.waitForURL(`${t.callback.base}/cb#**`)
      assert.strictEqual(new URLSearchParams(new URL(page.url()).hash.slice(1)).get("state"), "again")
    } finally {
      await context.close()
    }
  })
}

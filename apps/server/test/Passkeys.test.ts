/**
 * Passkeys in Chromium with its virtual authenticator (DevTools protocol `WebAuthn`): a user signed
 * in on the account page adds a passkey in its Passkeys section (the page's own script, under the
 * page's CSP), names it and renames it there, and signs out; in a new browser context (signed out)
 * "Sign in with a passkey" signs them in with no password and the application gets its code; while
 * an address-rotating password-guessing loop hammers the same username, the passkey sign-in is
 * answered at once with the signed-in redirect; then the passkey is removed on the account page.
 * Counts, not timings: the loop is bounded and is still running when the passkey sign-in lands.
 * A relying party (openid-client) reads the `acr` and `amr` of a passkey sign-in: `hwk` for a
 * passkey bound to the authenticator, `swk` for one that may be synced (backup eligible).
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Pages } from "@latchkey/express"
import * as client from "openid-client"
import type { Browser, Page } from "playwright-core"
import { type Callback, seedBrowserFlows, startCallback } from "./browserFlows.js"
import { haveChromium, launchChromium, withAuthenticator } from "./chromium.js"
import { createApp, createUser, freePort, type ServerProcess, spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "passkeys.sqlite")
const username = "passkey-owner"
const password = "passkey owner password"
let server: ServerProcess
let browser: Browser
let callback: Callback
let app: { readonly app_key: string }
let oidcApp: { readonly app_key: string; readonly app_secret: string }
let port: number

beforeAll(async () => {
  callback = await startCallback()
  app = await seedBrowserFlows(db, callback.base, {}, true)
  await createUser(db, username, password, {}, true)
  oidcApp = await createApp(db, [
    "--name",
    "OIDC passkey app",
    "--redirect-uri",
    `${callback.base}/cb`,
    "--scope",
    "openid,profile",
    "--grant-types",
    "authorization_code,refresh_token"
  ])
  for (const name of ["passkey-device-owner", "passkey-synced-owner"])
    await createUser(db, name, password, {}, true)
  port = await freePort()
  // WebAuthn needs a domain for its RP ID: the issuer is localhost, mapped to the 127.0.0.1 listener
  server = await spawnServer(
    {
      LATCHKEY_DB: db,
      PORT: String(port),
      LATCHKEY_ISSUER: `http://localhost:${port}`,
      LATCHKEY_PASSKEYS: "on",
      // The guessing loop's addresses, from X-Forwarded-For over loopback
      LATCHKEY_TRUST_PROXY: "loopback"
    },
    undefined,
    { timeoutMs: 60_000 }
  )
  browser = await launchChromium({ localhost: true })
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

const authorizeUrl = (state: string) =>
  `${server.base}/oauth2/oauth2/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: app.app_key,
    redirect_uri: `${callback.base}/cb`,
    scope: "profile",
    state
  })}`

/** The callback hit of `state`, once the browser lands there. */
const landed = async (page: Page, state: string) => {
  await page.waitForURL((u) => u.toString().startsWith(`${callback.base}/cb`), { timeout: 15_000 })
  const url = new URL(page.url())
  assert.strictEqual(url.searchParams.get("state"), state)
  return url.searchParams.get("code")
}

/**
 * Password guesses at the username from rotating addresses, each a sign-in page and its form,
 * until `stop()` or `max` guesses: what each answered.
 */
const guessing = (max: number) => {
  let stopped = false
  const statuses: Array<number> = []
  const base = `http://127.0.0.1:${port}`
  const guess = async (i: number) => {
    const headers = { "x-forwarded-for": `198.51.100.${(i % 250) + 1}` }
    const page = await fetch(authorizeUrl(`guess-${i}`).replace(server.base, base), { headers })
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
    const html = await page.text()
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ""
    const answer = await fetch(`${base}/oauth2/oauth2/login`, {
      method: "POST",
      redirect: "manual",
      headers: { ...headers, cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        txn: field("txn"),
        csrf_token: field("csrf_token"),
        username,
        password: `wrong-${i}`
      })
    })
    await answer.arrayBuffer()
    statuses.push(answer.status)
  }
  const loop = (async () => {
    let i = 0
    // Four guesses in flight at a time, until stopped or `max`
    const worker = async () => {
      while (!stopped && i < max) await guess(i++)
    }
    await Promise.all([worker(), worker(), worker(), worker()])
    return i
  })()
  return {
    statuses,
    stop: () => {
      stopped = true
      return loop
    }
  }
}

const accountUrl = () => `${server.base}/oauth2/oauth2/account`

/** Sign in with the password on the account page of `page`. */
const signInOnAccountPage = async (page: Page) => {
  await page.goto(accountUrl())
  await page.getByLabel("Username").fill(username)
  await page.getByLabel("Password", { exact: true }).fill(password)
  await page.getByRole("button", { name: "Sign in", exact: true }).click()
  await page.getByRole("heading", { name: "Your account" }).waitFor({ timeout: 10_000 })
}

/** The account page's Passkeys section. */
const passkeysSection = (page: Page) => page.getByRole("region", { name: "Passkeys" })

describe.skipIf(!haveChromium)("passkeys in Chromium", () => {
  it("adds, names and renames a passkey on the account page; signed out, signs in with it, also during a password-guessing attack; removes it on the page", async () => {
    // Signed in with the password on the account page: its Passkeys section adds one, under the page's CSP
    const registering = await browser.newContext()
    const owner = await withAuthenticator(registering)
    const errors: Array<string> = []
    owner.page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text())
    })
    await signInOnAccountPage(owner.page)
    // Signed in, the user allows the application once: later sign-ins land on its callback
    await owner.page.goto(authorizeUrl("consent"))
    await owner.page.getByRole("button", { name: "Allow" }).click()
    assert.isNotNull(await landed(owner.page, "consent"))
    await owner.page.goto(accountUrl())
    const section = passkeysSection(owner.page)
    assert.strictEqual(await section.getByText("You have no passkeys yet.").count(), 1)
    const add = owner.page.locator("#passkey-add")
    await add.getByLabel("Name").fill("Chromium")
    await Promise.all([
      owner.page.waitForEvent("load"),
      add.getByRole("button", { name: "Add a passkey" }).click()
    ])
    const listed = section.getByRole("listitem")
    assert.strictEqual(await listed.count(), 1)
    assert.strictEqual(await listed.locator("strong").textContent(), "Chromium")
    assert.strictEqual(await listed.getByText("Not used yet", { exact: false }).count(), 1)
    // Renamed on the page: one form, the page's ticket
    await listed.getByLabel("Name").fill("Work laptop")
    await listed.getByRole("button", { name: "Rename" }).click()
    await owner.page.getByText("The passkey has been renamed.").waitFor()
    assert.strictEqual(
      await passkeysSection(owner.page).getByRole("listitem").locator("strong").textContent(),
      "Work laptop"
    )
    assert.deepStrictEqual(errors, [])
    let { credentials } = await owner.cdp.send("WebAuthn.getCredentials", {
      authenticatorId: owner.authenticatorId
    })
    assert.strictEqual(credentials.length, 1)
    await owner.page.getByRole("button", { name: "Sign out" }).first().click()
    await owner.page.getByRole("heading", { name: "Sign in to manage your account" }).waitFor()
    await registering.close()

    // Signed out: a new context, the same passkey on its authenticator. With the browser's
    // autofill (conditional mediation) the virtual authenticator answers at once, nothing clicked;
    // without it (as in a browser that lacks it) the button is the way. What the passkey sign-in
    // endpoint answered is kept, and the context stays open for what comes next.
    const signIn = async (state: string, autofill: boolean) => {
      const context = await browser.newContext()
      if (!autofill)
        await context.addInitScript(() => {
          PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false)
        })
      const { page, cdp, authenticatorId } = await withAuthenticator(context)
      for (const credential of credentials)
        await cdp.send("WebAuthn.addCredential", { authenticatorId, credential })
      const answers: Array<{ status: number; body: string }> = []
      // Read on its way to the page (a body the page navigated away from is gone)
      await page.route("**/oauth2/oauth2/passkey/login", async (route) => {
        const response = await route.fetch()
        const body = await response.text()
        answers.push({ status: response.status(), body })
        await route.fulfill({ response, body })
      })
      await page.goto(authorizeUrl(state))
      if (!autofill) await page.getByRole("button", { name: "Sign in with a passkey" }).click()
      const code = await landed(page, state)
      // The authenticator's counter moved: the next context carries it on (a stale copy is a clone)
      credentials = (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials
      return { code, answers, context, page }
    }
    for (const [state, autofill] of [
      ["autofill", true],
      ["passkey", false]
    ] as const) {
      const done = await signIn(state, autofill)
      assert.isNotNull(done.code)
      await done.context.close()
    }

    // The same, while guesses at the username's password pour in from rotating addresses
    const attack = guessing(2000)
    while (!attack.statuses.includes(429)) await new Promise((r) => setImmediate(r))
    const before = attack.statuses.length
    const underAttack = await signIn("under-attack", false)
    const guessed = await attack.stop()
    assert.isNotNull(underAttack.code)
    // One passkey answer, not throttled nor refused: the signed-in redirect back to the authorize request
    assert.strictEqual(underAttack.answers.length, 1)
    const answer = underAttack.answers[0] as { status: number; body: string }
    assert.strictEqual(answer.status, 200, answer.body)
    assert.include(JSON.parse(answer.body).location as string, "/oauth2/oauth2/authorize?")
    // Still running when the passkey signed in: stopped by us, not by its bound; guesses went on meanwhile
    assert.isBelow(guessed, 2000)
    assert.isAbove(attack.statuses.length, before)
    assert.isTrue(
      attack.statuses.every((s) => s === 400 || s === 429),
      attack.statuses.join(",")
    )
    assert.isAtLeast(attack.statuses.filter((s) => s === 429).length, 1)

    // Signed in with the passkey: its account page lists it as used, and removes it
    const { page } = underAttack
    await page.goto(accountUrl())
    const item = passkeysSection(page).getByRole("listitem")
    assert.strictEqual(await item.locator("strong").textContent(), "Work laptop")
    assert.strictEqual(await item.getByText("Last used", { exact: false }).count(), 1)
    await item.getByRole("button", { name: "Remove" }).click()
    await page.getByText("The passkey has been removed.", { exact: false }).waitFor()
    assert.strictEqual(await passkeysSection(page).getByRole("listitem").count(), 0)
    assert.strictEqual(await passkeysSection(page).getByText("You have no passkeys yet.").count(), 1)
    await underAttack.context.close()
  }, 180_000)
})

describe.skipIf(!haveChromium)("a relying party reads a passkey sign-in", () => {
  /** Register a passkey of `owner` (signed in with the password, OpenID consent given through `url`). */
  const registerPasskey = async (owner: string, url: string, synced: boolean) => {
    const context = await browser.newContext({ bypassCSP: true })
    const { page, cdp, authenticatorId } = await withAuthenticator(context, synced)
    await page.goto(url)
    await page.getByLabel("Username").fill(owner)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.getByRole("button", { name: "Allow" }).click()
    await page.waitForURL((u) => u.toString().startsWith(`${callback.base}/cb`), { timeout: 15_000 })
    await page.goto(`${server.base}/oauth2/oauth2/consents`)
    await page.addScriptTag({ content: Pages.passkeyRegistrationScript })
    await page.evaluate(
      (endpoint) =>
        (
          window as unknown as { latchkeyRegisterPasskey: (u: string, n: string) => Promise<unknown> }
        ).latchkeyRegisterPasskey(endpoint, "Chromium"),
      `${server.base}/oauth2/oauth2/account/passkeys`
    )
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId })
    await context.close()
    return credentials
  }

  for (const [owner, synced, amr] of [
    ["passkey-device-owner", false, ["hwk", "user", "mfa"]],
    ["passkey-synced-owner", true, ["swk", "user", "mfa"]]
  ] as const) {
    it(`a passkey ${synced ? "that may be synced" : "bound to its authenticator"}: openid-client reads acr phr and amr ${amr.join(" ")}`, async () => {
      const config = await client.discovery(
        new URL(server.base),
        oidcApp.app_key,
        undefined,
        client.ClientSecretBasic(oidcApp.app_secret),
        { execute: [client.allowInsecureRequests] }
      )
      const authorizeUrl = (state: string, nonce: string) =>
        client.buildAuthorizationUrl(config, {
          redirect_uri: `${callback.base}/cb`,
          scope: "openid profile",
          state,
          nonce
        }).href
      const credentials = await registerPasskey(owner, authorizeUrl("consent", client.randomNonce()), synced)
      // Signed out: a new context with the passkey, the button, then the code (consent given before)
      const context = await browser.newContext()
      await context.addInitScript(() => {
        PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false)
      })
      const { page, cdp, authenticatorId } = await withAuthenticator(context, synced)
      for (const credential of credentials)
        await cdp.send("WebAuthn.addCredential", { authenticatorId, credential })
      const nonce = client.randomNonce()
      await page.goto(authorizeUrl("passkey", nonce))
      await page.getByRole("button", { name: "Sign in with a passkey" }).click()
      await page.waitForURL((u) => u.toString().startsWith(`${callback.base}/cb`), { timeout: 15_000 })
      const back = new URL(page.url())
      await context.close()
      const tokens = await client.authorizationCodeGrant(config, back, {
        expectedNonce: nonce,
        expectedState: "passkey",
        idTokenExpected: true
      })
      const claims = tokens.claims()
      assert.deepStrictEqual([claims?.acr, claims?.amr], ["phr", [...amr]])
      const introspected = await client.tokenIntrospection(config, tokens.access_token)
      assert.deepStrictEqual([introspected.acr, introspected.auth_time], ["phr", claims?.auth_time])
    }, 60_000)
  }
})

/**
 * Passkeys in Chromium with its virtual authenticator (DevTools protocol `WebAuthn`): a signed-in
 * user registers a passkey; in a new browser context (signed out) "Sign in with a passkey" signs
 * them in with no password and the application gets its code; and while an address-rotating
 * password-guessing loop hammers the same username, the passkey sign-in still succeeds. Counts,
 * not timings: the loop is bounded and is still running when the passkey sign-in lands. A relying
 * party (openid-client) reads the `acr` and `amr` of a passkey sign-in: `hwk` for a passkey bound to
 * the authenticator, `swk` for one that may be synced (backup eligible).
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Pages } from "@latchkey/express"
import * as client from "openid-client"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { type Callback, executablePath, seedBrowserFlows, startCallback } from "./browserFlows.js"
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
  browser = await chromium.launch({
    executablePath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--host-resolver-rules=MAP localhost 127.0.0.1"
    ]
  })
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

/**
 * A page with a virtual platform authenticator (resident keys, user verification; its passkeys
 * backup eligible when `synced`), and its DevTools session.
 */
const withAuthenticator = async (context: BrowserContext, synced = false) => {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send("WebAuthn.enable")
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      defaultBackupEligibility: synced
    }
  })
  return { page, cdp, authenticatorId }
}

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

describe.skipIf(!existsSync(executablePath))("passkeys in Chromium", () => {
  it("registers a passkey while signed in; signed out, signs in with it and gets a code; and does so during a password-guessing attack", async () => {
    // Signed in with the password, consent given: the session registers a passkey
    const registering = await browser.newContext({ bypassCSP: true })
    const owner = await withAuthenticator(registering)
    await owner.page.goto(authorizeUrl("register"))
    await owner.page.getByLabel("Username").fill(username)
    await owner.page.getByLabel("Password").fill(password)
    await owner.page.getByRole("button", { name: "Sign in", exact: true }).click()
    await owner.page.getByRole("button", { name: "Allow" }).click()
    assert.isNotNull(await landed(owner.page, "register"))
    // The account page's part: the registration script on a page of the issuer (the consents page)
    await owner.page.goto(`${server.base}/oauth2/oauth2/consents`)
    await owner.page.addScriptTag({ content: Pages.passkeyRegistrationScript })
    const registered = await owner.page.evaluate(
      (url) =>
        (
          window as unknown as { latchkeyRegisterPasskey: (u: string, n: string) => Promise<unknown> }
        ).latchkeyRegisterPasskey(url, "Chromium"),
      `${server.base}/oauth2/oauth2/account/passkeys`
    )
    const { passkey } = registered as { passkey: { credential_id: string; name: string } }
    assert.strictEqual(passkey.name, "Chromium")
    let { credentials } = await owner.cdp.send("WebAuthn.getCredentials", {
      authenticatorId: owner.authenticatorId
    })
    assert.strictEqual(credentials.length, 1)
    assert.strictEqual(
      credentials[0]?.credentialId.replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_"),
      passkey.credential_id
    )
    await registering.close()

    // Signed out: a new context, the same passkey on its authenticator. With the browser's
    // autofill (conditional mediation) the virtual authenticator answers at once, nothing clicked;
    // without it (as in a browser that lacks it) the button is the way.
    const signIn = async (state: string, autofill: boolean) => {
      const context = await browser.newContext()
      if (!autofill)
        await context.addInitScript(() => {
          PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false)
        })
      const { page, cdp, authenticatorId } = await withAuthenticator(context)
      for (const credential of credentials)
        await cdp.send("WebAuthn.addCredential", { authenticatorId, credential })
      await page.goto(authorizeUrl(state))
      if (!autofill) await page.getByRole("button", { name: "Sign in with a passkey" }).click()
      const code = await landed(page, state)
      // The authenticator's counter moved: the next context carries it on (a stale copy is a clone)
      credentials = (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials
      await context.close()
      return code
    }
    assert.isNotNull(await signIn("autofill", true))
    assert.isNotNull(await signIn("passkey", false))

    // The same, while guesses at the username's password pour in from rotating addresses
    const attack = guessing(2000)
    while (!attack.statuses.includes(429)) await new Promise((r) => setImmediate(r))
    assert.isNotNull(await signIn("under-attack", false))
    const guessed = await attack.stop()
    // Still running when the passkey signed in: stopped by us, not by its bound
    assert.isBelow(guessed, 2000)
    assert.isTrue(
      attack.statuses.every((s) => s === 400 || s === 429),
      attack.statuses.join(",")
    )
    assert.isAtLeast(attack.statuses.filter((s) => s === 429).length, 1)
  }, 120_000)
})

describe.skipIf(!existsSync(executablePath))("a relying party reads a passkey sign-in", () => {
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

/**
 * RP-initiated logout against a running server, as a relying party does it: openid-client's
 * discovery names the end session endpoint, the code flow in Chromium gives an ID token with
 * `sid`, and `buildEndSessionUrl` ends the browser's session. With the ID token as hint the
 * browser returns to the registered post-logout URI with `state` at once; with only `client_id`
 * the user is asked first. An unregistered URI stops on an error page. The CLI registers and
 * clears the post-logout URIs.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as client from "openid-client"
import type { Browser, BrowserContext } from "playwright-core"
import { type Callback, signInAndAllowIn, startCallback } from "./browserFlows.js"
import { haveChromium, launchChromium } from "./chromium.js"
import {
  cliInProcess,
  createApp,
  createUser,
  freePort,
  type ServerProcess,
  spawnServer,
  tempDir
} from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "logout.sqlite")
const user = { username: "logout-user", password: "logout password 123" }
const insecure = { execute: [client.allowInsecureRequests] }

let server: ServerProcess
let callback: Callback
let browser: Browser
let app: { app_key: string; app_secret: string }

beforeAll(async () => {
  callback = await startCallback()
  app = await createApp(db, [
    "--name",
    "Logout RP",
    "--redirect-uri",
    `${callback.base}/cb`,
    "--scope",
    "openid,profile",
    "--grant-types",
    "authorization_code,refresh_token",
    "--post-logout-redirect-uri",
    `${callback.base}/bye`
  ])
  await createUser(db, user.username, user.password)
  const port = await freePort()
  server = await spawnServer({
    LATCHKEY_DB: db,
    PORT: String(port),
    LATCHKEY_ISSUER: `http://127.0.0.1:${port}`
  })
  if (haveChromium) browser = await launchChromium()
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await callback?.close()
  tmp.cleanup()
})

/** Sign in and allow in `context` through openid-client's code flow; the ID token and its claims. */
const signedIn = async (context: BrowserContext, config: client.Configuration) => {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${callback.base}/cb`,
    scope: "openid profile",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state
  })
  const page = await context.newPage()
  // The consent page the first time; the application's callback at once once allowed
  const landed = await signInAndAllowIn(page, url.href, user, `${callback.base}/cb`)
  const tokens = await client.authorizationCodeGrant(config, landed, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    idTokenExpected: true
  })
  return { page, idToken: tokens.id_token as string, claims: tokens.claims() as client.IDToken, url }
}

const discover = () =>
  client.discovery(
    new URL(server.base),
    app.app_key,
    undefined,
    client.ClientSecretBasic(app.app_secret),
    insecure
  )

describe.skipIf(!haveChromium)("RP-initiated logout with openid-client against a running server", () => {
  it("the ID token as hint: back to the registered URI with state at once, and the session is over", async () => {
    const config = await discover()
    assert.strictEqual(config.serverMetadata().end_session_endpoint, `${server.base}/oauth2/oauth2/logout`)
    const context = await browser.newContext()
    try {
      const { page, idToken, claims, url } = await signedIn(context, config)
      assert.isString(claims.sid)
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: idToken,
        post_logout_redirect_uri: `${callback.base}/bye`,
        state: "after-logout"
      })
      await page.goto(end.href)
      assert.strictEqual(page.url(), `${callback.base}/bye?state=after-logout`)
      // Signed out: the authorize request asks to sign in again
      await page.goto(url.href)
      await page.getByLabel("Password").waitFor({ timeout: 10_000 })
    } finally {
      await context.close()
    }
  })

  it("only client_id: the user is asked, and Sign out returns to the registered URI", async () => {
    const config = await discover()
    const context = await browser.newContext()
    try {
      const { page } = await signedIn(context, config)
      const end = client.buildEndSessionUrl(config, {
        post_logout_redirect_uri: `${callback.base}/bye`,
        state: "asked"
      })
      assert.strictEqual(end.searchParams.get("client_id"), app.app_key)
      await page.goto(end.href)
      await page.getByRole("heading", { name: "Sign out?" }).waitFor({ timeout: 10_000 })
      await Promise.all([
        page.waitForURL(`${callback.base}/bye?**`),
        page.getByRole("button", { name: "Sign out" }).click()
      ])
      assert.strictEqual(page.url(), `${callback.base}/bye?state=asked`)
    } finally {
      await context.close()
    }
  })

  it("an unregistered post_logout_redirect_uri stops on an error page, and the session stays", async () => {
    const config = await discover()
    const context = await browser.newContext()
    try {
      const { page, idToken, url } = await signedIn(context, config)
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: idToken,
        post_logout_redirect_uri: `${callback.base}/elsewhere`
      })
      const res = await page.goto(end.href)
      assert.strictEqual(res?.status(), 400)
      await page.getByRole("heading", { name: "This sign-out link can't be used" }).waitFor()
      await Promise.all([page.waitForURL(`${callback.base}/cb?**`), page.goto(url.href)])
    } finally {
      await context.close()
    }
  })
})

describe("app create|update --post-logout-redirect-uri", () => {
  it("registers (repeatable), shows, replaces and clears the post-logout redirect URIs", async () => {
    const created = await createApp(db, [
      "--name",
      "CLI RP",
      "--redirect-uri",
      "https://rp.example/cb",
      "--post-logout-redirect-uri",
      "https://rp.example/bye",
      "--post-logout-redirect-uri",
      "https://rp.example/bye2"
    ])
    const shown = await cliInProcess(db, ["app", "show", created.app_key, "--json"])
    assert.deepInclude(JSON.parse(shown.stdout), {
      post_logout_redirect_uris: ["https://rp.example/bye", "https://rp.example/bye2"]
    })
    const text = await cliInProcess(db, ["app", "show", created.app_key])
    assert.include(text.stdout, "  After logout:  https://rp.example/bye, https://rp.example/bye2")
    const bad = await cliInProcess(db, [
      "app",
      "update",
      created.app_key,
      "--post-logout-redirect-uri",
      "http://rp.example/x"
    ])
    assert.notStrictEqual(bad.code, 0)
    const both = await cliInProcess(db, [
      "app",
      "update",
      created.app_key,
      "--post-logout-redirect-uri",
      "https://rp.example/x",
      "--no-post-logout-redirect-uris"
    ])
    assert.include(both.stderr, "give either --post-logout-redirect-uri or --no-post-logout-redirect-uris")
    await cliInProcess(db, ["app", "update", created.app_key, "--no-post-logout-redirect-uris"])
    const cleared = await cliInProcess(db, ["app", "show", created.app_key, "--json"])
    assert.deepInclude(JSON.parse(cleared.stdout), { post_logout_redirect_uris: [] })
    const plain = await createApp(db, ["--name", "Plain", "--redirect-uri", "https://rp.example/cb"])
    assert.notProperty(plain, "post_logout_redirect_uris")
  })
})

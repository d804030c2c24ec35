/**
 * Two server processes on one SQLite file behind a round-robin proxy whose address is their
 * issuer: the end-to-end flows of Browser.test.ts (code flow with PKCE, implicit flow) and
 * ThirdPartyClients.test.ts run through it, so consecutive steps of each flow land on different
 * instances. The instances start at once on an empty directory: they must agree on one server key.
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser } from "playwright-core"
import {
  type BrowserFlowTarget,
  browserFlowTests,
  type Callback,
  scopeDescriptions,
  seedBrowserFlows,
  startCallback
} from "../browserFlows.js"
import { haveChromium, launchChromium } from "../chromium.js"
import { basic, type ServerProcess, spawnServer, tempDir } from "../helpers.js"
import {
  seedThirdPartyClients,
  type ThirdPartyTarget,
  thirdPartyClientTests,
  thirdPartyUser
} from "../thirdPartyFlows.js"
import { compiled, freePorts } from "./deployments.js"
import { type RoundRobinProxy, startRoundRobinProxy } from "./proxy.js"

const tmp = tempDir()
const db = join(tmp.dir, "proxied.sqlite")
let proxy: RoundRobinProxy
let servers: Array<ServerProcess> = []
let callback: Callback
let browser: Browser | undefined
let browserTarget: BrowserFlowTarget
let thirdPartyTarget: ThirdPartyTarget

beforeAll(async () => {
  callback = await startCallback()
  const ports = await freePorts(2)
  proxy = await startRoundRobinProxy(ports.map((p) => `http://127.0.0.1:${p}`))
  const env = {
    ...compiled.env,
    LATCHKEY_DB: db,
    LATCHKEY_ISSUER: proxy.base,
    LATCHKEY_TRUST_PROXY: "loopback",
    LATCHKEY_SCOPE_DESCRIPTIONS: scopeDescriptions
  }
  servers = await Promise.all(
    ports.map((p) => spawnServer({ ...env, PORT: String(p) }, compiled.args, { timeoutMs: 30_000 }))
  )
  const browserApp = await seedBrowserFlows(db, callback.base, {}, true)
  const thirdPartyApp = await seedThirdPartyClients(db, {}, true)
  if (haveChromium) browser = await launchChromium()
  browserTarget = { base: proxy.base, browser: browser as Browser, callback, app: browserApp }
  thirdPartyTarget = { base: proxy.base, app: thirdPartyApp, user: thirdPartyUser }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all(servers.map((s) => s.stop()))
  await proxy?.close()
  await callback?.close()
  tmp.cleanup()
})

it("both instances, started at once on an empty directory, use the one server key generated in the database", async () => {
  // An App Secret is checked against a digest keyed by the server key (the session cookie's
  // signature too, which the flows below check across instances)
  for (const s of servers) {
    const res = await fetch(`http://127.0.0.1:${s.port}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: basic(thirdPartyTarget.app.app_key, thirdPartyTarget.app.app_secret),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "grant_type=client_credentials"
    })
    assert.strictEqual(res.status, 200)
  }
})

describe.skipIf(!haveChromium)("in Chromium, through the proxy", () => {
  browserFlowTests(() => browserTarget, { pkce: true })
})

describe("third-party clients, through the proxy", () => {
  thirdPartyClientTests(() => thirdPartyTarget)
})

it("every sign-in and consent form went to the other instance than the page that showed it", () => {
  const steps = proxy.forwarded.filter((f) => f.path !== "/favicon.ico")
  const posts = steps.flatMap((f, k) =>
    f.method === "POST" && (f.path === "/oauth2/oauth2/login" || f.path === "/oauth2/oauth2/authorize")
      ? [{ post: f, page: steps[k - 1] }]
      : []
  )
  // the third-party flows sign in twice, Chromium three times (when installed), each with consent
  assert.isAtLeast(posts.length, 4)
  for (const { post, page } of posts) {
    assert.strictEqual(page?.method, "GET", JSON.stringify({ post, page }))
    assert.notStrictEqual(page?.backend, post.backend, JSON.stringify({ post, page }))
  }
  assert.sameMembers([...new Set(posts.map((p) => p.post.backend))], [0, 1])
})

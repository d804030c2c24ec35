import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ApplicationStore } from "@latchkey/core"
import { Effect } from "effect"
import { basic, createApp, postForm, startServer, type TestServer } from "./helpers.js"

const spa = "https://spa.example"

let s: TestServer
let app: { appKey: string; appSecret: string; redirectUri: string }

beforeAll(async () => {
  s = await startServer({ prefix: "/auth" })
  app = await createApp(s)
  await s.runtime.runPromise(
    Effect.flatMap(ApplicationStore.ApplicationStore, (apps) =>
      apps.update(app.appKey, { webOrigins: [spa] }, 0)
    )
  )
})
afterAll(() => s.close())

describe("the router carries the core's CORS answers", () => {
  it("routes an OPTIONS preflight to the core: 204 granted to a registered origin, today's 405 to another", async () => {
    const preflight = (origin: string) =>
      fetch(`${s.base}/oauth2/oauth2/userinfo`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "GET",
          "access-control-request-headers": "authorization"
        }
      })
    const granted = await preflight(spa)
    assert.strictEqual(granted.status, 204)
    assert.strictEqual(granted.headers.get("access-control-allow-origin"), spa)
    assert.strictEqual(granted.headers.get("access-control-allow-methods"), "GET, POST")
    assert.strictEqual(granted.headers.get("access-control-allow-headers"), "Authorization, Content-Type")
    assert.strictEqual(granted.headers.get("vary"), "Origin")
    const refused = await preflight("https://other.example")
    assert.deepStrictEqual([refused.status, refused.headers.get("allow")], [405, "GET, POST"])
    assert.isNull(refused.headers.get("access-control-allow-origin"))
  })

  it("sends the grant with the token answer for the application's origin only, and `*` with discovery", async () => {
    const token = (headers: Record<string, string>) =>
      postForm(
        `${s.base}/oauth2/oauth2/token`,
        { grant_type: "client_credentials" },
        { authorization: basic(app.appKey, app.appSecret), ...headers }
      )
    const mine = await token({ origin: spa })
    assert.strictEqual(mine.status, 200)
    assert.strictEqual(mine.headers.get("access-control-allow-origin"), spa)
    assert.strictEqual(mine.headers.get("vary"), "Origin")
    assert.isNull(mine.headers.get("access-control-allow-credentials"))
    assert.strictEqual(mine.headers.get("x-content-type-options"), "nosniff")
    const theirs = await token({ origin: "https://other.example" })
    assert.deepStrictEqual(
      [theirs.headers.get("access-control-allow-origin"), theirs.headers.get("vary")],
      [null, null]
    )
    const discovery = await fetch(`${s.base}/.well-known/openid-configuration`, {
      headers: { origin: "https://anyone.example" }
    })
    assert.strictEqual(discovery.status, 200)
    assert.strictEqual(discovery.headers.get("access-control-allow-origin"), "*")
  })
})

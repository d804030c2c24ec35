/**
 * The absolute lifetime of a sign-in session over HTTP (ASVS V3.3.2, LATCHKEY_SESSION_MAX_AGE):
 * a browser that keeps using its session is still signed out once the lifetime from its sign-in
 * has passed. Time is the stack's manual clock, never a wait.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { assertRedirect, authorizeUrl, consentedBrowser } from "./browse.js"
import { manualClock, type Stack, startStack } from "./harness.js"

const clock = manualClock()
let s: Stack
beforeAll(async () => {
  s = await startStack({ clock: clock.clock, env: { LATCHKEY_SESSION_MAX_AGE: "600" } })
}, 60_000)
afterAll(() => s.close())

describe("LATCHKEY_SESSION_MAX_AGE", () => {
  it("a browser used every 290 seconds gets codes until 600 seconds after its sign-in, then the sign-in page", async () => {
    const browser = await consentedBrowser(s)
    const url = authorizeUrl(s, { response_type: "code", scope: "read,write" })
    for (let i = 0; i < 2; i++) {
      clock.advance(290_000)
      assert.isNotNull(assertRedirect(await browser.fetch(url)).get("code"), `at ${(i + 1) * 290} s`)
    }
    clock.advance(30_000)
    const page = await browser.fetch(url)
    assert.strictEqual(page.status, 200, "signed out: the sign-in page")
    assert.isNull(page.headers.get("location"))
    assert.include(await page.text(), 'name="password"')
  })
})

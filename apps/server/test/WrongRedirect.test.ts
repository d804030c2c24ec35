/**
 * An authorize request with a `redirect_uri` the application has not registered: the error page
 * names the value received, escaped and as text, in the reader's language; nobody is redirected;
 * the request's log line carries the page's reason and never the value.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Metadata } from "@latchkey/core"
import { type Listeners, start } from "./listeners.js"

let s: Listeners
let appKey: string
beforeAll(async () => {
  s = await start()
  appKey = Buffer.from(s.basic.slice("Basic ".length), "base64").toString("utf8").split(":")[0] ?? ""
})
afterAll(async () => {
  await s.close()
})

const sent = 'https://evil.example/cb?token=SENTINEL-RU-5512&x="><script>alert(1)</script>'

const authorize = (redirectUri: string | undefined, headers: Record<string, string> = {}) => {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: appKey,
    ...(redirectUri === undefined ? {} : { redirect_uri: redirectUri })
  })
  return fetch(`http://127.0.0.1:${s.publicPort}${Metadata.paths.authorize}?${query}`, {
    redirect: "manual",
    headers: { accept: "text/html", ...headers }
  })
}

describe("the error page of an unregistered redirect_uri", () => {
  it("shows the value received, HTML-escaped and never as a link; no Location; the log line names the reason only", async () => {
    const r = await authorize(sent)
    assert.strictEqual(r.status, 400)
    assert.isNull(r.headers.get("location"))
    const html = await r.text()
    assert.include(
      html,
      'Address the application asked for (redirect_uri): <code class="code">https://evil.example/cb?token=SENTINEL-RU-5512&amp;x=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code>'
    )
    assert.notInclude(html, "<script>")
    assert.notInclude(html, 'href="https://evil.example')
    const id = r.headers.get("x-request-id")
    const line = await s.waitForLine((l) => l.msg === "request" && l.reqId === id)
    assert.strictEqual(line.reason, "bad_redirect_uri")
    assert.strictEqual(line.status, 400)
    assert.notInclude(JSON.stringify(s.lines), "SENTINEL-RU")
  })

  it("is written in the reader's language", async () => {
    const r = await authorize("https://evil.example/zh", { "accept-language": "zh-CN" })
    const html = await r.text()
    assert.include(
      html,
      '该应用要求返回的地址（redirect_uri）： <code class="code">https://evil.example/zh</code>'
    )
  })

  it("names no value when none was sent; other error pages log their own reason; a good request logs none", async () => {
    const missing = await authorize(undefined)
    assert.strictEqual(missing.status, 400)
    assert.notInclude(await missing.text(), "redirect_uri):")
    const unknown = await fetch(
      `http://127.0.0.1:${s.publicPort}${Metadata.paths.authorize}?client_id=nope&redirect_uri=https://app.example/cb`,
      { redirect: "manual", headers: { accept: "text/html" } }
    )
    await unknown.text()
    const unknownLine = await s.waitForLine(
      (l) => l.msg === "request" && l.reqId === unknown.headers.get("x-request-id")
    )
    assert.strictEqual(unknownLine.reason, "unknown_client")
    const json = await authorize(sent, { accept: "application/json" })
    assert.deepStrictEqual(await json.json(), {
      error: "invalid_request",
      error_description: "redirect_uri is missing or not registered for this application"
    })
    const jsonLine = await s.waitForLine(
      (l) => l.msg === "request" && l.reqId === json.headers.get("x-request-id")
    )
    assert.strictEqual(jsonLine.reason, "bad_redirect_uri")
    const metadata = await fetch(`http://127.0.0.1:${s.publicPort}${Metadata.paths.metadata}`)
    await metadata.text()
    const okLine = await s.waitForLine(
      (l) => l.msg === "request" && l.reqId === metadata.headers.get("x-request-id")
    )
    assert.notProperty(okLine, "reason")
  })
})

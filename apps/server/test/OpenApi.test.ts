/**
 * The served OpenAPI document against the real server: it names the server's
 * issuer, and every operation it documents is answered (never 404).
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type Stack, startStack } from "./security/harness.js"

interface Document {
  readonly openapi: string
  readonly servers: ReadonlyArray<{ readonly url: string }>
  readonly paths: Record<
    string,
    Record<string, unknown> & { readonly servers?: ReadonlyArray<{ url: string }> }
  >
}

let s: Stack
beforeAll(async () => {
  s = await startStack()
}, 60_000)
afterAll(() => s.close())

describe("GET /openapi.json", () => {
  it("answers the document for the server's issuer, and every documented operation exists", async () => {
    const res = await fetch(`${s.base}/openapi.json`)
    assert.strictEqual(res.status, 200)
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/)
    const doc = (await res.json()) as Document
    assert.strictEqual(doc.openapi, "3.1.0")
    assert.deepStrictEqual(doc.servers, [{ url: s.base }])
    let operations = 0
    for (const [path, item] of Object.entries(doc.paths)) {
      const base = item.servers?.[0]?.url ?? s.base
      for (const method of Object.keys(item).filter((m) => m === "get" || m === "post")) {
        const answer = await fetch(base + path, {
          method: method.toUpperCase(),
          redirect: "manual",
          ...(method === "post"
            ? { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" }
            : {})
        })
        await answer.arrayBuffer()
        assert.notStrictEqual(answer.status, 404, `${method} ${path}`)
        operations++
      }
    }
    assert.isAtLeast(operations, 11)
  })
})

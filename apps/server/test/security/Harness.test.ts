import { assert, it } from "@effect/vitest"
import { read, startStack, token } from "./harness.js"

it("the security harness serves the real stack: client A gets a client_credentials token", async () => {
  const s = await startStack()
  try {
    const r = await read(await token(s, { grant_type: "client_credentials" }))
    assert.strictEqual(r.status, 200)
    assert.strictEqual(r.body.scope, "read,write")
  } finally {
    await s.close()
  }
})

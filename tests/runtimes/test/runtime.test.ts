import { assert, describe, it } from "vitest"

// Fails if a run that should be in Bun or Deno silently ran its workers in Node.
describe("runtime", () => {
  it("runs the test files in the runtime run.mjs asked for", () => {
    const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } }
    const expected = process.env.LATCHKEY_RUNTIME
    assert.oneOf(expected, ["bun", "deno"])
    if (expected === "bun") {
      assert.isString(g.Bun?.version)
      assert.isUndefined(g.Deno)
    } else {
      assert.isString(g.Deno?.version.deno)
      assert.isUndefined(g.Bun)
    }
  })
})

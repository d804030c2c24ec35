import { assert, describe, it } from "vitest"

// Only run by vitest.edge.config.ts (its name does not end in .test.ts), so the other
// files it runs are known to run inside the edge VM too.
describe("edge runtime", () => {
  it("runs inside the edge VM's own realm, not in Node's", () => {
    const g = globalThis as { EdgeRuntime?: unknown; require?: unknown; setImmediate?: unknown }
    assert.strictEqual(g.EdgeRuntime, "edge-runtime")
    assert.strictEqual(typeof g.require, "undefined")
    // vitest lends the VM Node's setImmediate for its own use: a function of another realm
    assert.isFalse(g.setImmediate instanceof Function)
    assert.strictEqual(typeof crypto.subtle.digest, "function")
  })
})

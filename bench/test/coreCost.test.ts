/**
 * servers/core-cost.mjs through `CoreCost.measure`: a few rounds only (a harness check, not a
 * measurement), against the built workspace packages.
 */
import { describe, expect, it } from "vitest"
import * as CoreCost from "../src/coreCost.js"
import * as Knobs from "../src/knobs.js"

describe("the core's own cost", () => {
  it("answers every request of each round and reports the CPU a request took", async () => {
    const measured = await CoreCost.measure(Knobs.read({ CONNS: "5" }), false, 4)
    if ("error" in measured) throw new Error(measured.error)
    expect(measured.conns).toBe(5)
    for (const cost of [measured.clientCredentials, measured.introspection]) {
      expect(cost.requests).toBe(20)
      expect(cost.cpuUsPerRequest).toBeGreaterThan(0)
      expect(cost.wallUsPerRequest).toBeGreaterThan(0)
    }
  }, 60_000)
})

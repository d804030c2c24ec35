/**
 * servers/core-cost.mjs through `CoreCost.measure`: a few rounds only (a harness check, not a
 * measurement), against the built workspace packages; and the bytes a request allocated, worked
 * out from the heap's used sizes the script prints.
 */
import { describe, expect, it } from "vitest"
import * as CoreCost from "../src/coreCost.js"
import * as Knobs from "../src/knobs.js"

describe("the bytes allocated per request", () => {
  it("are the heap's growth plus what each collection freed, over the requests", () => {
    const allocation = {
      requests: 100,
      heapUsedStart: 10_000_000,
      heapUsedEnd: 12_000_000,
      gcs: [
        [20_000_000, 11_000_000],
        [21_000_000, 9_000_000]
      ] as const
    }
    // 2 MB grown + 9 MB + 12 MB freed, over 100 requests
    expect(CoreCost.allocatedPerRequest(allocation)).toBe(230_000)
  })

  it("count a heap smaller at the end than at the start against what the collections freed", () => {
    const allocation = {
      requests: 10,
      heapUsedStart: 5_000,
      heapUsedEnd: 3_000,
      gcs: [[8_000, 2_000]] as const
    }
    expect(CoreCost.allocatedPerRequest(allocation)).toBe(400)
  })

  it("are the heap's growth alone when nothing was collected", () => {
    expect(
      CoreCost.allocatedPerRequest({ requests: 4, heapUsedStart: 1_000, heapUsedEnd: 9_000, gcs: [] })
    ).toBe(2_000)
  })

  it("are worked out from the script's line for each endpoint measured in full", () => {
    const printed = (heapUsedEnd: number) => ({
      requests: 50,
      cpuUsPerRequest: 40,
      wallUsPerRequest: 45,
      opsPerRequest: 150,
      allocation: { requests: 10, heapUsedStart: 0, heapUsedEnd, gcs: [[5_000, 1_000]] }
    })
    const ops = { authorizationCode: 160, refreshToken: 180, revocation: 130, userinfo: 50 }
    const line = JSON.stringify({
      conns: 5,
      clientCredentials: printed(1_000),
      introspection: printed(6_000),
      opsPerRequest: ops
    })
    expect(CoreCost.fromPrinted(line)).toEqual({
      conns: 5,
      clientCredentials: {
        requests: 50,
        cpuUsPerRequest: 40,
        wallUsPerRequest: 45,
        opsPerRequest: 150,
        bytesPerRequest: 500
      },
      introspection: {
        requests: 50,
        cpuUsPerRequest: 40,
        wallUsPerRequest: 45,
        opsPerRequest: 150,
        bytesPerRequest: 1_000
      },
      opsPerRequest: ops
    })
  })
})

describe("the core's own cost", () => {
  it("answers every request of each round and reports the CPU, operations and bytes a request took", async () => {
    const measured = await CoreCost.measure(Knobs.read({ CONNS: "5" }), false, 4)
    if ("error" in measured) throw new Error(measured.error)
    expect(measured.conns).toBe(5)
    for (const cost of [measured.clientCredentials, measured.introspection]) {
      expect(cost.requests).toBe(20)
      expect(cost.cpuUsPerRequest).toBeGreaterThan(0)
      expect(cost.wallUsPerRequest).toBeGreaterThan(0)
      expect(cost.opsPerRequest).toBeGreaterThan(0)
      expect(cost.bytesPerRequest).toBeGreaterThan(0)
    }
    for (const ops of Object.values(measured.opsPerRequest)) expect(ops).toBeGreaterThan(0)
  }, 60_000)
})

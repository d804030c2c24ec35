/** The report's table of the core alone (servers/core-cost.mjs), on synthetic results. */
import { describe, expect, it } from "vitest"
import type * as CoreCost from "../src/coreCost.js"
import * as Report from "../src/report.js"

const cost = (cpuUsPerRequest: number, opsPerRequest: number, bytesPerRequest: number): CoreCost.Cost => ({
  requests: 20_000,
  cpuUsPerRequest,
  wallUsPerRequest: cpuUsPerRequest * 1.1,
  opsPerRequest,
  bytesPerRequest
})

describe("the core alone in the report", () => {
  it("prints CPU µs, operations and KB per request beside each other, and the operations alone of the other grants", () => {
    const core = {
      conns: 50,
      clientCredentials: cost(49.4, 145.02, 76_697.6),
      introspection: cost(27.6, 93, 51_712),
      opsPerRequest: { authorizationCode: 160, refreshToken: 181.5, revocation: 133, userinfo: 49 }
    }
    expect(Report.coreTable(core)).toEqual([
      "",
      "The core alone (servers/core-cost.mjs: its endpoints on its in-memory stores, no HTTP, no database, 50 at a time):",
      "",
      "| scenario | CPU µs/req | ops/req | KB/req |",
      "| --- | ---: | ---: | ---: |",
      "| client_credentials | 49 | 145 | 74.9 |",
      "| introspection | 28 | 93 | 50.5 |",
      "| authorization_code | – | 160 | – |",
      "| refresh_token | – | 182 | – |",
      "| revocation | – | 133 | – |",
      "| userinfo | – | 49 | – |"
    ])
  })

  it("says why it was not measured, and prints nothing when the run did not measure it", () => {
    expect(Report.coreTable({ error: "core-cost exited 1: boom" })).toEqual([
      "",
      "The core alone (servers/core-cost.mjs): not measured, core-cost exited 1: boom"
    ])
    expect(Report.coreTable(undefined)).toEqual([])
    expect(Report.coreTable(null)).toEqual([])
  })
})

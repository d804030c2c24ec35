/**
 * The harness end to end on the bare-http configuration: a second or two with a few
 * connections, once with the default generator (wrk when installed, else autocannon)
 * and once with autocannon. Only counts are checked, never timings.
 */
import { describe, expect, it } from "vitest"
import { runBench } from "../src/harness.js"
import * as Knobs from "../src/knobs.js"
import { detectTool } from "../src/load.js"
import * as Report from "../src/report.js"

const knobs = (loadgen: string) =>
  Knobs.read({
    SCENARIOS: "client_credentials,introspection",
    CONFIGS: "bare-http",
    ROUNDS: "1",
    DURATION: "2",
    WARMUP: "0",
    CONNS: "4",
    LOADGEN: loadgen
  })

describe("harness on bare-http", () => {
  for (const loadgen of ["auto", "autocannon"] as const) {
    it(`counts valid answers with ${loadgen === "auto" ? detectTool("auto") : loadgen}`, async () => {
      const result = await runBench(knobs(loadgen), { log: () => {} })
      expect(result.runs.map((r) => [r.scenario, r.config])).toEqual([
        ["client_credentials", "bare-http"],
        ["introspection", "bare-http"]
      ])
      for (const run of result.runs) {
        expect(run.problems).toEqual([])
        expect(run.valid).toBeGreaterThan(0)
        expect(run.invalid).toBe(0)
        expect(run.errors).toBe(0)
        expect(run.rssMaxMiB).toBeGreaterThan(0)
      }
      const md = Report.markdown(result)
      expect(md).toContain("| bare-http | client_credentials |")
    })
  }

  it("reads the knobs", () => {
    const k = Knobs.read({})
    expect(k.rounds).toBe(3)
    expect(k.duration).toBe(10)
    expect(k.warmup).toBe(3)
    expect(k.conns).toBe(50)
    expect(k.scenarios).not.toContain("big-store")
    expect(Knobs.read({ BIG: "1" }).scenarios).toContain("big-store")
    expect(() => Knobs.read({ SCENARIOS: "nope" })).toThrow(/unknown scenario/)
  })
})

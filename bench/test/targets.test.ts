/**
 * The targets and informational ratios on synthetic results (no benchmark runs): each new kind
 * (a row's p99 over its own p50, wrk's p99 over the server's logged p99, server CPU per request
 * against durable-floor's) met and missed, invalid and missing rows, the rows' CPU per request
 * and server p99, and the README's tables against the declarations.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { BenchResult, Configuration, RunRecord } from "../src/harness.js"
import * as Knobs from "../src/knobs.js"
import { benchRoot } from "../src/paths.js"
import * as Report from "../src/report.js"
import * as Targets from "../src/targets.js"

/** What a synthetic run measured; the rest is filled in. */
interface Measured {
  readonly rps: number
  readonly p50Ms?: number
  readonly p99Ms?: number
  readonly serverP99Ms?: number | null
  /** Server CPU µs per request (CPU seconds over `rps` × 10 s of requests). */
  readonly cpuUs?: number | null
  readonly rssMaxMiB?: number
  readonly ok?: boolean
  readonly round?: number
}

const record = (scenario: string, config: Configuration, m: Measured): RunRecord => {
  const requests = m.rps * 10
  return {
    round: m.round ?? 1,
    scenario,
    config,
    kind: "client_credentials",
    conns: 50,
    durationS: 10,
    rps: m.rps,
    p50Ms: m.p50Ms ?? 5,
    p99Ms: m.p99Ms ?? 12,
    maxMs: 50,
    requests,
    valid: requests,
    invalid: 0,
    errors: 0,
    rssMaxMiB: m.rssMaxMiB ?? 100,
    cpuSeconds: m.cpuUs === undefined || m.cpuUs === null ? null : (m.cpuUs * requests) / 1e6,
    cpuShare: 0.9,
    serverRequests: m.serverP99Ms === null ? null : requests,
    serverP99Ms: m.serverP99Ms === undefined ? 10 : m.serverP99Ms,
    serverPid: 1,
    ok: m.ok ?? true,
    problems: m.ok === false ? ["invalid answers"] : [],
    notes: [],
    load: null,
    warmup: null
  }
}

type Runs = Record<string, Measured>

/** Rows keyed `scenario × config`: a run meeting every target. */
const meeting: Runs = {
  "client_credentials × latchkey": {
    rps: 8_000,
    p50Ms: 5,
    p99Ms: 12,
    serverP99Ms: 10,
    cpuUs: 100,
    rssMaxMiB: 120
  },
  "client_credentials × durable-floor": { rps: 10_000, cpuUs: 70 },
  "client_credentials × oidc-provider": { rps: 9_000 },
  "client_credentials × latchkey-postgres": { rps: 4_500 },
  "client_credentials × latchkey-express": { rps: 6_000 },
  "client_credentials × express-bare": { rps: 11_000 },
  "introspection × latchkey": { rps: 9_000 },
  "introspection × bare-http": { rps: 20_000 },
  "authorization_code × latchkey": { rps: 6_000 },
  "refresh_token × latchkey": { rps: 5_000 },
  "password-hammer × latchkey": { rps: 3_000, p50Ms: 2, p99Ms: 15 },
  "big-store:client_credentials × latchkey": { rps: 8_000 },
  "big-store:client_credentials × latchkey-big": { rps: 7_000 },
  "big-store:introspection × latchkey": { rps: 9_000 },
  "big-store:introspection × latchkey-big": { rps: 8_000 },
  "big-store:soak × latchkey-big": { rps: 7_000 }
}

const result = (runs: Runs, scenarios = "client_credentials,big-store"): BenchResult => {
  const records = Object.entries(runs).map(([key, m]) => {
    const [scenario, config] = key.split(" × ") as [string, Configuration]
    const r = record(scenario, config, m)
    return scenario === "big-store:soak"
      ? { ...r, soak: { rssStartMiB: 200, rssEndMiB: 210, growthPct: 5, series: [] } }
      : r
  })
  return {
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:10:00.000Z",
    knobs: Knobs.read({ SCENARIOS: scenarios }),
    tool: "wrk",
    toolVersion: "wrk 4.2.0",
    pinned: true,
    notes: [],
    machine: { node: "v20", cpus: 2, platform: "linux", loadBefore: [0, 0, 0], loadAfter: [0, 0, 0] },
    steps: [],
    runs: records
  }
}

const evaluated = (runs: Runs, scenarios?: string) => {
  const r = result(runs, scenarios)
  return Targets.ratios(r, Report.rows(r))
}
const target = (runs: Runs, prefix: string) => {
  const found = evaluated(runs).find((t) => t.name.startsWith(prefix))
  if (found === undefined) throw new Error(`no target ${prefix}`)
  return found
}
/** The names of the targets not met. */
const missed = (runs: Runs) =>
  evaluated(runs)
    .filter((t) => t.pass !== true)
    .map((t) => t.name)
const change = (key: string, m: Partial<Measured>): Runs => ({
  ...meeting,
  [key]: { ...meeting[key], ...m } as Measured
})

const ownTail = "latchkey `client_credentials` p99 vs its own p50"
const wrkVsServer = "latchkey `client_credentials`: wrk's p99 vs the server's own"
const cpu = "server CPU per `client_credentials` request"
const hammer = "password-hammer:"

describe("targets", () => {
  it("are all met by a run that meets them", () => {
    const all = evaluated(meeting)
    expect(all.map((t) => t.name)).toEqual(Targets.targets.map((t) => t.name))
    expect(missed(meeting)).toEqual([])
  })

  it("miss only the p99 over its own p50 when latchkey's p99 passes 4× its p50", () => {
    const runs = change("client_credentials × latchkey", { p99Ms: 21, serverP99Ms: 20 })
    expect(missed(runs)).toEqual([expect.stringMatching(/^latchkey `client_credentials` p99 vs its own p50/)])
    expect(target(runs, ownTail)).toMatchObject({ measured: "4.20×", target: "≤ 4×", pass: false })
    expect(
      target(change("client_credentials × latchkey", { p99Ms: 20, serverP99Ms: 20 }), ownTail)
    ).toMatchObject({
      measured: "4.00×",
      pass: true
    })
  })

  it("compare wrk's p99 with the p99 the server logged itself", () => {
    expect(target(meeting, wrkVsServer)).toMatchObject({
      measured: "1.20×",
      target: "≤ 1.5×",
      pass: true,
      note: "wrk 12.00 ms vs server 10.00 ms"
    })
    const runs = change("client_credentials × latchkey", { serverP99Ms: 7.5 })
    expect(target(runs, wrkVsServer)).toMatchObject({ measured: "1.60×", pass: false })
    expect(missed(runs)).toEqual([target(runs, wrkVsServer).name])
  })

  it("are not measured, neither ✓ nor ✗, when the server logged no request line", () => {
    const runs = change("client_credentials × latchkey", { serverP99Ms: null })
    expect(target(runs, wrkVsServer)).toMatchObject({
      measured: null,
      pass: null,
      note: "wrk 12.00 ms vs server –"
    })
  })

  it("compare latchkey's server CPU per request with durable-floor's", () => {
    expect(target(meeting, cpu)).toMatchObject({
      measured: "1.43×",
      pass: true,
      note: "100 vs 70 CPU µs/req"
    })
    const runs = change("client_credentials × latchkey", { cpuUs: 110 })
    expect(target(runs, cpu)).toMatchObject({ measured: "1.57×", target: "≤ 1.5×", pass: false })
    expect(missed(runs)).toEqual([target(runs, cpu).name])
  })

  it("compare password-hammer's p99 with latchkey's p50 without the hammer", () => {
    expect(target(meeting, hammer)).toMatchObject({ measured: "3.00×", pass: true })
    const runs = change("password-hammer × latchkey", { p99Ms: 20.5 })
    expect(target(runs, hammer)).toMatchObject({ measured: "4.10×", pass: false })
    expect(missed(runs)).toEqual([target(runs, hammer).name])
  })

  it("miss each rate and bound below its goal", () => {
    const cases: ReadonlyArray<[string, Partial<Measured>, string]> = [
      [
        "client_credentials × durable-floor",
        { rps: 12_000 },
        "latchkey `client_credentials` vs durable-floor"
      ],
      [
        "client_credentials × oidc-provider",
        { rps: 10_500 },
        "latchkey `client_credentials` vs oidc-provider"
      ],
      ["client_credentials × latchkey-postgres", { rps: 3_900 }, "latchkey-postgres vs latchkey"],
      ["introspection × latchkey", { rps: 5_900 }, "latchkey introspection vs bare-http"],
      ["authorization_code × latchkey", { rps: 4_700 }, "`authorization_code` vs"],
      ["refresh_token × latchkey", { rps: 4_700 }, "`refresh_token` vs"],
      ["big-store:client_credentials × latchkey-big", { rps: 6_300 }, "big-store issuance"],
      ["client_credentials × latchkey-express", { rps: 5_400 }, "latchkey-express vs express-bare"],
      ["client_credentials × latchkey", { rssMaxMiB: 161 }, "latchkey server RSS"]
    ]
    for (const [key, m, name] of cases) expect(missed(change(key, m))).toEqual([target(meeting, name).name])
  })

  it("are ✗ whatever the numbers when a row they read is invalid", () => {
    const runs = change("client_credentials × durable-floor", { ok: false })
    expect(missed(runs)).toEqual([
      target(meeting, "latchkey `client_credentials` vs durable-floor").name,
      target(meeting, cpu).name
    ])
    expect(target(runs, cpu).note).toBe("100 vs 70 CPU µs/req, invalid runs")
  })

  it("are not run when a row is missing, and leave big-store out unless it ran", () => {
    const { "client_credentials × latchkey-postgres": _, ...withoutPostgres } = meeting
    expect(target(withoutPostgres, "latchkey-postgres vs latchkey")).toMatchObject({
      measured: null,
      pass: null,
      note: "not run"
    })
    const names = evaluated(meeting, "client_credentials").map((t) => t.name)
    expect(names.some((n) => n.startsWith("big-store"))).toBe(false)
    expect(names).toHaveLength(Targets.targets.length - 3)
  })
})

describe("rows", () => {
  it("take the median over the rounds of each round's CPU µs per request and server p99", () => {
    const rounds = [
      { rps: 8_000, cpuUs: 90, serverP99Ms: 9, round: 1 },
      { rps: 6_000, cpuUs: 130, serverP99Ms: 30, round: 2 },
      { rps: 9_000, cpuUs: 100, serverP99Ms: null, round: 3 }
    ]
    const r = result({})
    const runs = rounds.map((m) => record("client_credentials", "latchkey", m))
    const [row] = Report.rows({ ...r, runs })
    expect(row?.cpuUsPerRequest).toBeCloseTo(100, 6)
    expect(row?.serverP99Ms).toBe(19.5)
  })
})

describe("informational ratios", () => {
  const info = (runs: Runs) => {
    const r = result(runs)
    return Targets.informational(r, Report.rows(r))
  }
  it("show latchkey-workers against latchkey, never ✓/✗", () => {
    const all = info({ ...meeting, "client_credentials × latchkey-workers": { rps: 7_200 } })
    expect(all.find((i) => i.name === "latchkey-workers vs latchkey")).toEqual({
      name: "latchkey-workers vs latchkey",
      measured: "0.90×",
      value: 0.9,
      note: "7200 vs 8000 req/s"
    })
  })

  it("say not run for durable-floor-pipelined until a run has that row", () => {
    const pipelined = ["latchkey vs durable-floor-pipelined", "durable-floor-pipelined vs durable-floor"]
    const without = info(meeting).filter((i) => pipelined.includes(i.name))
    expect(without.map((i) => [i.measured, i.note])).toEqual([
      [null, "not run"],
      [null, "not run"]
    ])
    const withRow = info({ ...meeting, "client_credentials × durable-floor-pipelined": { rps: 16_000 } })
    expect(withRow.filter((i) => pipelined.includes(i.name)).map((i) => i.measured)).toEqual([
      "0.50×",
      "1.60×"
    ])
  })
})

describe("the core's own cost", () => {
  const core = "the core alone vs durable-floor: CPU per `client_credentials` request"
  const ceiling = "latchkey vs durable-floor at most, from the core's own cost"
  const cost = (cpuUsPerRequest: number) => ({
    requests: 1000,
    cpuUsPerRequest,
    wallUsPerRequest: 2 * cpuUsPerRequest
  })
  const with_ = (coreCost: BenchResult["coreCost"]) => {
    const r = { ...result(meeting), coreCost }
    return Targets.informational(r, Report.rows(r)).filter((i) => i.name === core || i.name === ceiling)
  }
  it("sets the core's CPU per request against durable-floor's, and bounds latchkey's rate by both", () => {
    // durable-floor: 70 µs a request; the core alone: 105 µs
    expect(
      with_({ conns: 50, clientCredentials: cost(105), introspection: cost(40) }).map((i) => i.measured)
    ).toEqual(["1.50×", "0.40×"])
  })
  it("is not measured when the run did not measure the core, or it failed", () => {
    for (const coreCost of [undefined, null, { error: "core-cost exited 1" }])
      expect(with_(coreCost).map((i) => i.measured)).toEqual([null, null])
  })
})

describe("README", () => {
  it("lists the targets and informational ratios as targets.ts declares them", () => {
    const readme = readFileSync(join(benchRoot, "README.md"), "utf8")
    expect(Targets.withTables(readme)).toBe(readme)
  })
})

/**
 * The targets and informational ratios on synthetic results (no benchmark runs): each kind (a
 * rate, a row's p99 over its own p50, server CPU per request against durable-floor's, the core's
 * own CPU per request against durable-floor's) met and missed, invalid and missing rows, the
 * rows' CPU per request and server p99, and the README's tables against the declarations.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type * as CoreCost from "../src/coreCost.js"
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
  "client_credentials × oidc-provider": { rps: 7_500 },
  "client_credentials × latchkey-postgres": { rps: 5_000 },
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

/** The core alone's cost per request, with `cpuUsPerRequest` CPU µs. */
const cost = (cpuUsPerRequest: number): CoreCost.Cost => ({
  requests: 1000,
  cpuUsPerRequest,
  wallUsPerRequest: 2 * cpuUsPerRequest,
  opsPerRequest: 100,
  bytesPerRequest: 50_000
})

/** The core alone as measured with a run meeting every target: 20 and 12 µs against durable-floor's 70. */
const meetingCore = (cc = 20, introspection = 12): BenchResult["coreCost"] => ({
  conns: 50,
  clientCredentials: cost(cc),
  introspection: cost(introspection),
  opsPerRequest: { authorizationCode: 120, refreshToken: 130, revocation: 90, userinfo: 40 }
})

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
    runs: records,
    coreCost: meetingCore()
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
const cpu = "server CPU per `client_credentials` request"
const coreCc = "the core alone's CPU per `client_credentials` request vs durable-floor's"
const coreIntrospection =
  "the core alone's CPU per introspection vs durable-floor's per `client_credentials` request"
const wrkVsServer = "latchkey `client_credentials`: wrk's p99 vs the server's own"
const hammer = "password-hammer:"

describe("targets", () => {
  it("are all met by a run that meets them", () => {
    const all = evaluated(meeting)
    expect(all.map((t) => t.name)).toEqual(Targets.targets.map((t) => t.name))
    expect(missed(meeting)).toEqual([])
  })

  it("miss only the p99 over its own p50 when latchkey's p99 passes 3× its p50", () => {
    const runs = change("client_credentials × latchkey", { p99Ms: 16 })
    expect(missed(runs)).toEqual([expect.stringMatching(/^latchkey `client_credentials` p99 vs its own p50/)])
    expect(target(runs, ownTail)).toMatchObject({ measured: "3.20×", target: "≤ 3×", pass: false })
    expect(target(change("client_credentials × latchkey", { p99Ms: 15 }), ownTail)).toMatchObject({
      measured: "3.00×",
      pass: true
    })
  })

  it("compare latchkey's server CPU per request with durable-floor's", () => {
    expect(target(meeting, cpu)).toMatchObject({
      measured: "1.43×",
      pass: true,
      note: "100 vs 70 CPU µs/req"
    })
    const runs = change("client_credentials × latchkey", { cpuUs: 115 })
    expect(target(runs, cpu)).toMatchObject({ measured: "1.64×", target: "≤ 1.6×", pass: false })
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
        { rps: 8_100 },
        "latchkey `client_credentials` vs oidc-provider"
      ],
      ["client_credentials × latchkey-postgres", { rps: 4_700 }, "latchkey-postgres vs latchkey"],
      ["introspection × latchkey", { rps: 3_900 }, "latchkey introspection vs bare-http"],
      ["authorization_code × latchkey", { rps: 4_700 }, "`authorization_code` vs"],
      ["refresh_token × latchkey", { rps: 4_700 }, "`refresh_token` vs"],
      ["client_credentials × latchkey", { rssMaxMiB: 201 }, "latchkey server RSS"]
    ]
    for (const [key, m, name] of cases) expect(missed(change(key, m))).toEqual([target(meeting, name).name])
  })

  it("are ✗ whatever the numbers when a row they read is invalid", () => {
    const runs = change("client_credentials × durable-floor", { ok: false })
    expect(missed(runs)).toEqual([
      target(meeting, "latchkey `client_credentials` vs durable-floor").name,
      target(meeting, cpu).name,
      target(meeting, coreCc).name,
      target(meeting, coreIntrospection).name
    ])
    expect(target(runs, cpu).note).toBe("100 vs 70 CPU µs/req, invalid runs")
  })

  it("are not run when a row is missing", () => {
    const { "client_credentials × latchkey-postgres": _, ...withoutPostgres } = meeting
    expect(target(withoutPostgres, "latchkey-postgres vs latchkey")).toMatchObject({
      measured: null,
      pass: null,
      note: "not run"
    })
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
  it("compare wrk's p99 with the p99 latchkey logged itself", () => {
    expect(info(meeting).find((i) => i.name.startsWith(wrkVsServer))).toMatchObject({
      measured: "1.20×",
      note: "wrk 12.00 ms vs server 10.00 ms"
    })
    const runs = change("client_credentials × latchkey", { serverP99Ms: 7.5 })
    expect(info(runs).find((i) => i.name.startsWith(wrkVsServer))?.measured).toBe("1.60×")
    expect(missed(runs)).toEqual([])
  })

  it("are not measured when the server logged no request line", () => {
    const runs = change("client_credentials × latchkey", { serverP99Ms: null })
    expect(info(runs).find((i) => i.name.startsWith(wrkVsServer))).toMatchObject({
      measured: null,
      note: "wrk 12.00 ms vs server –"
    })
  })

  it("leave big-store out unless it ran", () => {
    const bigStore = (scenarios: string) => {
      const r = result(meeting, scenarios)
      return Targets.informational(r, Report.rows(r))
        .filter((i) => i.name.startsWith("big-store"))
        .map((i) => i.measured)
    }
    expect(bigStore("client_credentials")).toEqual([])
    expect(bigStore("client_credentials,big-store")).toEqual(["0.88×", "0.89×", "5.0 %"])
  })

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
  const ceiling = "latchkey vs durable-floor at most, from the core's own cost"
  const withCore = (coreCost: BenchResult["coreCost"]) => {
    const r = { ...result(meeting), coreCost }
    const table = Report.rows(r)
    return {
      targets: Targets.ratios(r, table).filter((t) => t.name === coreCc || t.name === coreIntrospection),
      ceiling: Targets.informational(r, table).find((i) => i.name === ceiling)
    }
  }
  it("sets the core's CPU per request of each endpoint against durable-floor's per client_credentials request", () => {
    expect(withCore(meetingCore()).targets).toMatchObject([
      {
        measured: "0.29×",
        target: "≤ 0.3×",
        pass: true,
        note: "core client_credentials 20 µs (memory store, no HTTP) vs durable-floor client_credentials 70 µs (whole request)"
      },
      { measured: "0.17×", target: "≤ 0.2×", pass: true }
    ])
    expect(withCore(meetingCore(22, 12)).targets.map((t) => [t.measured, t.pass])).toEqual([
      ["0.31×", false],
      ["0.17×", true]
    ])
    expect(withCore(meetingCore(20, 15)).targets.map((t) => [t.measured, t.pass])).toEqual([
      ["0.29×", true],
      ["0.21×", false]
    ])
  })
  it("is printed between the table of the runs and the targets", () => {
    const report = Report.markdown(result(meeting))
    const at = (line: string) => report.indexOf(line)
    expect(at("| client_credentials | 20 | 100 | 48.8 |")).toBeGreaterThan(at("| configuration | scenario |"))
    expect(at("| introspection | 12 | 100 | 48.8 |")).toBeLessThan(at("| target | measured |"))
    expect(at("| userinfo | – | 40 | – |")).toBeGreaterThan(-1)
  })
  it("bounds latchkey's rate by the floor's CPU and the core's", () => {
    // durable-floor: 70 µs a request; the core alone: 105 µs
    expect(withCore(meetingCore(105)).ceiling?.measured).toBe("0.40×")
  })
  it("is not measured, neither ✓ nor ✗, when the run did not measure the core, or it failed", () => {
    for (const coreCost of [undefined, null, { error: "core-cost exited 1" }]) {
      const { targets, ceiling: bound } = withCore(coreCost)
      expect(targets.map((t) => [t.measured, t.pass])).toEqual([
        [null, null],
        [null, null]
      ])
      expect(bound?.measured).toBe(null)
    }
  })
})

describe("README", () => {
  it("lists the targets and informational ratios as targets.ts declares them", () => {
    const readme = readFileSync(join(benchRoot, "README.md"), "utf8")
    expect(Targets.withTables(readme)).toBe(readme)
  })
})

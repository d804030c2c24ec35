/**
 * The targets (with ✓/✗) and the informational ratios (none), each declared once: the rows it
 * reads, how its value comes from them, and its goal. The report evaluates them and the README's
 * tables are written from them (`pnpm --filter @latchkey/bench readme`). Every value is a ratio
 * between rows of the same run, or a bound on one row.
 */
import type { BenchResult, Configuration } from "./harness.js"
import type { Row } from "./report.js"

/** A row of the report: a scenario measured on a configuration. */
type Key = readonly [scenario: string, config: Configuration]

type Unit = "×" | "MiB" | "%"

/** A value computed from rows of the report. */
interface Measure {
  /** As the report and the README print it. */
  readonly name: string
  /** The rows it reads, in the order `value` and `note` get them. */
  readonly rows: ReadonlyArray<Key>
  readonly unit: Unit
  /** Null (or NaN) when the rows ran but did not give the numbers (e.g. a server logging no request lines). */
  readonly value: (rows: ReadonlyArray<Row>, result: BenchResult) => number | null
  /** The numbers behind the value. */
  readonly note: (rows: ReadonlyArray<Row>, result: BenchResult) => string
}

/** A measure with a goal: ✓ when met and every row it reads is valid. */
interface Target extends Measure {
  readonly op: "≥" | "≤" | "<"
  readonly bound: number
}

/** A measure without a goal, and what it shows. */
interface Informational extends Measure {
  readonly what: string
}

const cc = (config: Configuration): Key => ["client_credentials", config]
const latchkey = cc("latchkey")
const two = (rows: ReadonlyArray<Row>) => rows as readonly [Row, Row]
const one = (rows: ReadonlyArray<Row>) => rows[0] as Row
const ms = (v: number | null) => (v === null || Number.isNaN(v) ? "–" : `${v.toFixed(2)} ms`)

/** An endpoint servers/core-cost.mjs measures in full. */
type Endpoint = "clientCredentials" | "introspection"

/** The core's own CPU per request of `endpoint`, when the run measured it. */
const coreCpu = (result: BenchResult, endpoint: Endpoint): number | null =>
  result.coreCost === undefined || result.coreCost === null || "error" in result.coreCost
    ? null
    : result.coreCost[endpoint].cpuUsPerRequest
const us = (v: number | null) => (v === null ? "–" : `${v.toFixed(0)} µs`)

/**
 * A value of durable-floor's CPU per `client_credentials` request and the core's own per request
 * of `endpoint` (`coreCpu`), when both were measured.
 */
const againstCore = (
  name: string,
  endpoint: Endpoint,
  value: (floorUs: number, coreUs: number) => number,
  note: (floorUs: number | null, coreUs: number | null) => string
) => ({
  name,
  rows: [cc("durable-floor")],
  unit: "×" as const,
  value: (rows: ReadonlyArray<Row>, result: BenchResult) => {
    const core = coreCpu(result, endpoint)
    const floor = one(rows).cpuUsPerRequest
    return core === null || floor === null ? null : value(floor, core)
  },
  note: (rows: ReadonlyArray<Row>, result: BenchResult) =>
    note(one(rows).cpuUsPerRequest, coreCpu(result, endpoint))
})

/** The core's CPU per request of `endpoint` over durable-floor's per `client_credentials` request. */
const coreVsFloor = (name: string, endpoint: Endpoint, scenario: string) =>
  againstCore(
    name,
    endpoint,
    (floor, core) => core / floor,
    (floor, core) =>
      `core ${scenario} ${us(core)} (memory store, no HTTP) vs durable-floor client_credentials ${us(floor)} (whole request)`
  )

/** `a`'s valid answers a second over `b`'s. */
const rate = (name: string, a: Key, b: Key) => ({
  name,
  rows: [a, b],
  unit: "×" as const,
  value: (rows: ReadonlyArray<Row>) => two(rows)[0].rpsMedian / two(rows)[1].rpsMedian,
  note: (rows: ReadonlyArray<Row>) =>
    `${Math.round(two(rows)[0].rpsMedian)} vs ${Math.round(two(rows)[1].rpsMedian)} req/s`
})

/** `a`'s p99 over `b`'s p50 (the same row: its tail against its own median). */
const tail = (name: string, a: Key, b: Key) => ({
  name,
  rows: [a, b],
  unit: "×" as const,
  value: (rows: ReadonlyArray<Row>) => two(rows)[0].p99Ms / two(rows)[1].p50Ms,
  note: (rows: ReadonlyArray<Row>) => `p99 ${ms(two(rows)[0].p99Ms)} vs p50 ${ms(two(rows)[1].p50Ms)}`
})

/** The load generator's p99 over the p99 of the durations the server logged for the same requests. */
const seenVsServed = (name: string, a: Key) => ({
  name,
  rows: [a],
  unit: "×" as const,
  value: (rows: ReadonlyArray<Row>) => {
    const r = one(rows)
    return r.serverP99Ms === null ? null : r.p99Ms / r.serverP99Ms
  },
  note: (rows: ReadonlyArray<Row>) => `wrk ${ms(one(rows).p99Ms)} vs server ${ms(one(rows).serverP99Ms)}`
})

/** `a`'s server CPU per request over `b`'s. */
const cpuPerRequest = (name: string, a: Key, b: Key) => ({
  name,
  rows: [a, b],
  unit: "×" as const,
  value: (rows: ReadonlyArray<Row>) => {
    const [x, y] = two(rows)
    return x.cpuUsPerRequest === null || y.cpuUsPerRequest === null
      ? null
      : x.cpuUsPerRequest / y.cpuUsPerRequest
  },
  note: (rows: ReadonlyArray<Row>) =>
    `${two(rows)
      .map((r) => (r.cpuUsPerRequest === null ? "–" : r.cpuUsPerRequest.toFixed(0)))
      .join(" vs ")} CPU µs/req`
})

const soakRun = (result: BenchResult) => result.runs.find((r) => r.scenario === "big-store:soak")?.soak

/** The targets, in the order the report and the README list them. */
export const targets: ReadonlyArray<Target> = [
  {
    ...rate("latchkey `client_credentials` vs oidc-provider", latchkey, cc("oidc-provider")),
    op: "≥",
    bound: 1
  },
  {
    ...rate("latchkey `client_credentials` vs durable-floor", latchkey, cc("durable-floor")),
    op: "≥",
    bound: 0.7
  },
  {
    ...cpuPerRequest(
      "server CPU per `client_credentials` request: latchkey vs durable-floor",
      latchkey,
      cc("durable-floor")
    ),
    op: "≤",
    bound: 1.6
  },
  {
    ...coreVsFloor(
      "the core alone's CPU per `client_credentials` request vs durable-floor's",
      "clientCredentials",
      "client_credentials"
    ),
    op: "≤",
    bound: 0.3
  },
  {
    ...coreVsFloor(
      "the core alone's CPU per introspection vs durable-floor's per `client_credentials` request",
      "introspection",
      "introspection"
    ),
    op: "≤",
    bound: 0.2
  },
  {
    ...rate(
      "`authorization_code` vs latchkey `client_credentials`",
      ["authorization_code", "latchkey"],
      latchkey
    ),
    op: "≥",
    bound: 0.6
  },
  {
    ...rate("`refresh_token` vs latchkey `client_credentials`", ["refresh_token", "latchkey"], latchkey),
    op: "≥",
    bound: 0.6
  },
  {
    ...rate(
      "latchkey introspection vs bare-http introspection",
      ["introspection", "latchkey"],
      ["introspection", "bare-http"]
    ),
    op: "≥",
    bound: 0.2
  },
  {
    ...rate("latchkey-postgres vs latchkey (SQLite) `client_credentials`", cc("latchkey-postgres"), latchkey),
    op: "≥",
    bound: 0.6
  },
  {
    name: "latchkey server RSS during `client_credentials`",
    rows: [latchkey],
    unit: "MiB",
    value: (rows) => one(rows).rssMaxMiB,
    note: () => "",
    op: "≤",
    bound: 200
  },
  {
    ...tail("latchkey `client_credentials` p99 vs its own p50 (at `CONNS` connections)", latchkey, latchkey),
    op: "≤",
    bound: 3
  },
  {
    ...tail(
      "password-hammer: the concurrent `client_credentials` p99 vs latchkey `client_credentials` p50 without the hammer",
      ["password-hammer", "latchkey"],
      latchkey
    ),
    op: "≤",
    bound: 4
  }
]

/** The ratios without a goal, in the order the report and the README list them. */
const informationalRatios: ReadonlyArray<Informational> = [
  {
    ...rate("durable-floor vs oidc-provider", cc("durable-floor"), cc("oidc-provider")),
    what: "how far above oidc-provider a server doing only Latchkey's durable work is"
  },
  {
    ...againstCore(
      "latchkey vs durable-floor at most, from the core's own cost",
      "clientCredentials",
      (floor, core) => floor / (floor + core),
      (floor, core) => `durable-floor ${us(floor)} / (durable-floor + core ${us(core)})`
    ),
    what: "the highest rate against durable-floor any server on this core can reach, when CPU bounds both: it does at least the floor's work and the core's steps"
  },
  {
    ...seenVsServed("latchkey `client_credentials`: wrk's p99 vs the server's own (logged) p99", latchkey),
    what: "how much of latchkey's tail its own clock sees (the rest waited in the socket while the event loop was busy)"
  },
  {
    ...seenVsServed("durable-floor: wrk's p99 vs the server's own (logged) p99", cc("durable-floor")),
    what: "the same comparison on the baseline"
  },
  {
    ...rate("latchkey-express vs express-bare", cc("latchkey-express"), cc("express-bare")),
    what: "what the Express binding with the durable work costs against a bare Express app answering fixed JSON"
  },
  {
    ...rate("latchkey-workers vs latchkey", cc("latchkey-workers"), latchkey),
    what: "`WORKERS` worker processes against one process, both pinned to the server CPU unless `WORKERS_CPU` says otherwise"
  },
  {
    ...rate("latchkey vs durable-floor-pipelined", latchkey, cc("durable-floor-pipelined")),
    what: "how much of the rate of the `durable-floor-pipelined` baseline Latchkey reaches"
  },
  {
    ...rate("durable-floor-pipelined vs durable-floor", cc("durable-floor-pipelined"), cc("durable-floor")),
    what: "what `durable-floor-pipelined` changes against `durable-floor`"
  },
  {
    ...rate(
      "big-store issuance vs the empty store",
      ["big-store:client_credentials", "latchkey-big"],
      ["big-store:client_credentials", "latchkey"]
    ),
    what: "`client_credentials` on `BIG_TOKENS` live access tokens against an empty store (big-store only)"
  },
  {
    ...rate(
      "big-store introspection vs the empty store",
      ["big-store:introspection", "latchkey-big"],
      ["big-store:introspection", "latchkey"]
    ),
    what: "introspection on `BIG_TOKENS` live access tokens against an empty store (big-store only)"
  },
  {
    name: "big-store soak RSS growth (over `SOAK` s)",
    rows: [["big-store:soak", "latchkey-big"]],
    unit: "%",
    value: (_, result) => soakRun(result)?.growthPct ?? null,
    note: (_, result) => {
      const soak = soakRun(result)
      return soak === undefined ? "" : `${soak.rssStartMiB} → ${soak.rssEndMiB} MiB in ${result.knobs.soak} s`
    },
    what: "whether the RSS grows over a soak on the big store (big-store only)"
  }
]

/** An evaluated measure: its value as printed ("0.82×", "121.4 MiB"), or null when not run. */
interface Evaluated {
  readonly name: string
  readonly measured: string | null
  readonly value: number | null
  /** Every row it reads is valid. */
  readonly valid: boolean
  readonly note: string
}

const format = (v: number, unit: Unit): string =>
  unit === "×" ? `${v.toFixed(2)}×` : `${v.toFixed(1)} ${unit}`

const evaluate = (m: Measure, result: BenchResult, table: ReadonlyArray<Row>): Evaluated => {
  const rows = m.rows.map(([scenario, config]) =>
    table.find((r) => r.scenario === scenario && r.config === config)
  )
  if (rows.some((r) => r === undefined))
    return { name: m.name, measured: null, value: null, valid: false, note: "not run" }
  const found = rows as ReadonlyArray<Row>
  const valid = found.every((r) => r.ok)
  const v = m.value(found, result)
  const note = [m.note(found, result), valid ? "" : "invalid runs"].filter((n) => n !== "").join(", ")
  if (v === null || Number.isNaN(v))
    return { name: m.name, measured: null, value: null, valid, note: note === "" ? "not measured" : note }
  return { name: m.name, measured: format(v, m.unit), value: v, valid, note }
}

/** One target, evaluated. */
export interface Ratio {
  readonly name: string
  /** The measured value, e.g. "0.82×" or "121.4 MiB", or null when not run. */
  readonly measured: string | null
  readonly value: number | null
  /** The goal, e.g. "≥ 0.7×". */
  readonly target: string
  /** Met, and every run involved was valid; null when not run. */
  readonly pass: boolean | null
  readonly note: string
}

const goal = (t: Target): string => `${t.op} ${t.unit === "×" ? `${t.bound}×` : `${t.bound} ${t.unit}`}`

const met = (t: Target, v: number): boolean =>
  t.op === "≥" ? v >= t.bound : t.op === "≤" ? v <= t.bound : v < t.bound

/** Whether `m` reads a row of a scenario the run selected (big-store's only when it was). */
const selected = (result: BenchResult) => (m: Measure) =>
  result.knobs.scenarios.includes("big-store") || !m.rows.some(([s]) => s.startsWith("big-store"))

/** The targets, evaluated. */
export const ratios = (result: BenchResult, table: ReadonlyArray<Row>): Array<Ratio> =>
  targets.filter(selected(result)).map((t) => {
    const e = evaluate(t, result, table)
    return {
      name: e.name,
      measured: e.measured,
      value: e.value,
      target: goal(t),
      pass: e.value === null ? null : e.valid && met(t, e.value),
      note: e.note
    }
  })

/** A ratio shown for information only: no goal, never ✓/✗. */
export interface Info {
  readonly name: string
  /** e.g. "0.62×", or null when a row was not run. */
  readonly measured: string | null
  readonly value: number | null
  readonly note: string
}

/** The informational ratios, evaluated; big-store's only when that scenario was selected. */
export const informational = (result: BenchResult, table: ReadonlyArray<Row>): Array<Info> =>
  informationalRatios.filter(selected(result)).map((m) => {
    const { valid: _, ...info } = evaluate(m, result, table)
    return info
  })

const tables = {
  targets: ["| target | goal |", "| --- | --- |", ...targets.map((t) => `| ${t.name} | ${goal(t)} |`)],
  informational: [
    "| ratio | what it shows |",
    "| --- | --- |",
    ...informationalRatios.map((m) => `| ${m.name} | ${m.what} |`)
  ]
}

/**
 * `readme` with its tables of targets and informational ratios (each between the lines
 * `<!-- <name>:begin -->` and `<!-- <name>:end -->`) written from the declarations above.
 */
export const withTables = (readme: string): string => {
  let out = readme
  for (const [name, lines] of Object.entries(tables)) {
    const begin = `<!-- ${name}:begin -->\n`
    const end = `<!-- ${name}:end -->`
    const from = out.indexOf(begin)
    const to = out.indexOf(end, from)
    if (from === -1 || to === -1) throw new Error(`the README has no ${begin.trim()} … ${end} section`)
    out = `${out.slice(0, from + begin.length)}${lines.join("\n")}\n${out.slice(to)}`
  }
  return out
}

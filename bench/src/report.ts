/**
 * The report: one row per (scenario, configuration) with the median of the rounds, then the
 * targets with ✓/✗ and the informational ratios of targets.ts, as markdown.
 */
import type { CoreCost } from "./coreCost.js"
import type { BenchResult, Configuration, RunRecord } from "./harness.js"
import * as Targets from "./targets.js"

/** One row of the table. */
export interface Row {
  readonly scenario: string
  readonly config: Configuration
  readonly rounds: ReadonlyArray<number>
  readonly rpsMedian: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly rssMaxMiB: number | null
  readonly cpuShare: number | null
  /** Median over the rounds of the server's CPU µs per request (its CPU seconds over the requests completed). */
  readonly cpuUsPerRequest: number | null
  /** Median over the rounds of the p99 of the durations the server logged itself (see requestLog.ts). */
  readonly serverP99Ms: number | null
  /** latchkey-postgres: median share of one CPU the PostgreSQL backends used (unpinned, not in cpuShare). */
  readonly postgresCpuShare?: number | null
  readonly invalid: number
  readonly ok: boolean
  readonly notes: string
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  if (s.length === 0) return Number.NaN
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

const hammerNote = (runs: ReadonlyArray<RunRecord>): string => {
  const h = runs.flatMap((r) => (r.hammer ? [r.hammer] : []))
  if (h.length === 0) return ""
  const sum = (f: (s: NonNullable<RunRecord["hammer"]>) => number) => h.reduce((n, s) => n + f(s), 0)
  const seconds = sum((s) => s.durationUs / 1e6)
  const st = (code: string) => sum((s) => s.statuses[code] ?? 0)
  const p99 = Math.max(...h.map((s) => s.p99Ms))
  return (
    `hammer ${Math.round(sum((s) => s.requests) / seconds)} req/s (p99 ${p99.toFixed(0)} ms): ` +
    `200×${st("200")} 400×${st("400")} 429×${st("429")}, unexpected ${sum((s) => s.invalid)}, ` +
    `unanswered within 5 s (not invalid) ${sum((s) => s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout)}`
  )
}

/** latchkey-workers: what its RSS and CPU sum, and where its processes ran. */
const groupNote = (runs: ReadonlyArray<RunRecord>): string => {
  const groups = runs.flatMap((r) => (r.processes === undefined ? [] : [r.processes]))
  if (groups.length === 0) return ""
  const counts = [...new Set(groups.map((g) => g.length))].join("/")
  const cpus = [...new Set(groups.flatMap((g) => g.map((p) => p.cpus ?? "?")))].join(", ")
  return `RSS and CPU summed over ${counts} processes (primary + workers), allowed CPUs ${cpus}`
}

/** latchkey-postgres: the PostgreSQL backends' CPU (median over the rounds). */
const postgresShare = (runs: ReadonlyArray<RunRecord>): number | null => {
  const shares = runs.flatMap((r) =>
    r.postgres?.cpuShare === null || r.postgres?.cpuShare === undefined ? [] : [r.postgres.cpuShare]
  )
  return shares.length === 0 ? null : median(shares)
}

const postgresNote = (runs: ReadonlyArray<RunRecord>): string => {
  const share = postgresShare(runs)
  const backends = [...new Set(runs.flatMap((r) => (r.postgres === undefined ? [] : [r.postgres.backends])))]
  if (share === null) return ""
  return `PostgreSQL backends (${backends.join("/")}, unpinned, not in server CPU or RSS): ${Math.round(share * 100)} % of a CPU`
}

/** The median of the values that are known, or null when none is. */
const medianOf = (values: ReadonlyArray<number | null>): number | null => {
  const known = values.filter((v): v is number => v !== null)
  return known.length === 0 ? null : median(known)
}

/** Rows in plan order. */
export const rows = (result: BenchResult): Array<Row> => {
  const groups = new Map<string, Array<RunRecord>>()
  for (const r of result.runs) {
    const key = `${r.scenario}\u0000${r.config}`
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  return [...groups.values()].map((runs) => {
    const first = runs[0] as RunRecord
    const rss = runs.flatMap((r) => (r.rssMaxMiB === null ? [] : [r.rssMaxMiB]))
    const notes = [
      first.scenario === "password-hammer"
        ? [`client_credentials at ${first.conns} conns`, hammerNote(runs)].filter((n) => n !== "").join("; ")
        : "",
      first.soak
        ? `RSS ${first.soak.rssStartMiB} → ${first.soak.rssEndMiB} MiB (${first.soak.growthPct.toFixed(1)} %)`
        : "",
      groupNote(runs),
      postgresNote(runs),
      ...new Set(runs.flatMap((r) => [...r.problems, ...r.notes]))
    ].filter((n) => n !== "")
    return {
      scenario: first.scenario,
      config: first.config,
      rounds: runs.map((r) => r.rps),
      rpsMedian: median(runs.map((r) => r.rps)),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      rssMaxMiB: rss.length === 0 ? null : Math.max(...rss),
      cpuShare: medianOf(runs.map((r) => r.cpuShare)),
      cpuUsPerRequest: medianOf(
        runs.map((r) =>
          r.cpuSeconds === null || r.requests === 0 ? null : (r.cpuSeconds / r.requests) * 1e6
        )
      ),
      serverP99Ms: medianOf(runs.map((r) => r.serverP99Ms)),
      ...(first.config === "latchkey-postgres" ? { postgresCpuShare: postgresShare(runs) } : {}),
      invalid: runs.reduce((n, r) => n + r.invalid + r.errors + (r.hammer?.invalid ?? 0), 0),
      ok: runs.every((r) => r.ok),
      notes: notes.join("; ")
    }
  })
}

const fmt = (n: number | null, digits = 0): string =>
  n === null || Number.isNaN(n) ? "–" : n.toFixed(digits)

/**
 * The core alone (servers/core-cost.mjs), after a blank line: per request, the CPU, the Effect
 * operations and the KB allocated of the endpoints measured in full, and the operations of the
 * others; or why it was not measured. Nothing when the run did not measure it.
 */
export const coreTable = (core: CoreCost | null | undefined): Array<string> => {
  if (core === undefined || core === null) return []
  if ("error" in core) return ["", `The core alone (servers/core-cost.mjs): not measured, ${core.error}`]
  const row = (scenario: string, cpuUs: number | null, ops: number, bytes: number | null) =>
    `| ${scenario} | ${fmt(cpuUs)} | ${fmt(ops)} | ${bytes === null ? "–" : fmt(bytes / 1024, 1)} |`
  const { clientCredentials: cc, introspection: intro, opsPerRequest: only } = core
  return [
    "",
    `The core alone (servers/core-cost.mjs: its endpoints on its in-memory stores, no HTTP, no database, ` +
      `${core.conns} at a time):`,
    "",
    "| scenario | CPU µs/req | ops/req | KB/req |",
    "| --- | ---: | ---: | ---: |",
    row("client_credentials", cc.cpuUsPerRequest, cc.opsPerRequest, cc.bytesPerRequest),
    row("introspection", intro.cpuUsPerRequest, intro.opsPerRequest, intro.bytesPerRequest),
    row("authorization_code", null, only.authorizationCode, null),
    row("refresh_token", null, only.refreshToken, null),
    row("revocation", null, only.revocation, null),
    row("userinfo", null, only.userinfo, null)
  ]
}

/** The whole report as markdown. */
export const markdown = (result: BenchResult): string => {
  const table = rows(result)
  const lines: Array<string> = []
  lines.push(`## Latchkey token endpoint benchmark (${result.startedAt})`)
  lines.push("")
  lines.push(
    `Load generator: ${result.toolVersion} (numbers from wrk and autocannon are not comparable); ` +
      `${result.pinned ? `servers on CPU ${result.knobs.serverCpu}, load on CPU ${result.knobs.loadCpu}` : "not pinned"}; ` +
      `${result.knobs.rounds} round(s) × ${result.knobs.duration} s after ${result.knobs.warmup} s warm-up, ` +
      `${result.knobs.conns} connections; Node ${result.machine.node}, ${result.machine.cpus} CPUs.`
  )
  for (const n of result.notes) lines.push(`- ${n}`)
  lines.push("")
  lines.push(
    "| configuration | scenario | req/s (median) | rounds | p50 ms | p99 ms | server p99 ms | RSS MiB | server CPU | CPU µs/req | invalid | notes |"
  )
  lines.push("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
  for (const r of table) {
    lines.push(
      `| ${r.config} | ${r.scenario} | ${fmt(r.rpsMedian)} | ${r.rounds.map((x) => fmt(x)).join(" / ")} | ` +
        `${fmt(r.p50Ms, 2)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.serverP99Ms, 2)} | ${fmt(r.rssMaxMiB, 1)} | ` +
        `${r.cpuShare === null ? "–" : `${Math.round(r.cpuShare * 100)} %`} | ${fmt(r.cpuUsPerRequest)} | ` +
        `${r.invalid}${r.ok ? "" : " ✗"} | ${r.notes} |`
    )
  }
  lines.push(...coreTable(result.coreCost))
  lines.push("")
  lines.push("| target | measured | goal | | |")
  lines.push("| --- | ---: | --- | --- | --- |")
  for (const q of Targets.ratios(result, table)) {
    lines.push(
      `| ${q.name} | ${q.measured ?? "–"} | ${q.target} | ${q.pass === null ? "–" : q.pass ? "✓" : "✗"} | ${q.note} |`
    )
  }
  const info = Targets.informational(result, table)
  if (info.some((i) => i.measured !== null)) {
    lines.push("")
    lines.push(
      "Informational, no target (durable-floor: a hand-written baseline doing only Latchkey's durable work; " +
        "latchkey-workers: see its pinning above):"
    )
    lines.push("")
    for (const i of info) lines.push(`- ${i.name}: ${i.measured ?? "–"} (${i.note})`)
  }
  return `${lines.join("\n")}\n`
}

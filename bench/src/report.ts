/**
 * The report: one row per (scenario, configuration) with the median of the rounds, the
 * target ratios with ✓/✗, and informational ratios (no target: against the durable-floor
 * baseline, and latchkey-postgres and latchkey-workers against latchkey), as markdown.
 */
import type { BenchResult, Configuration, RunRecord } from "./harness.js"

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
  /** latchkey-postgres: median share of one CPU the PostgreSQL backends used (unpinned, not in cpuShare). */
  readonly postgresCpuShare?: number | null
  readonly invalid: number
  readonly ok: boolean
  readonly notes: string
}

/** One target. */
export interface Ratio {
  readonly name: string
  /** The measured value, e.g. "4.1×" or "8.2 ms", or null when not run. */
  readonly measured: string | null
  readonly value: number | null
  readonly target: string
  /** Met (and every run involved was valid); null when not run. */
  readonly pass: boolean | null
  readonly note: string
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
    const cpu = runs.flatMap((r) => (r.cpuShare === null ? [] : [r.cpuShare]))
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
      cpuShare: cpu.length === 0 ? null : median(cpu),
      ...(first.config === "latchkey-postgres" ? { postgresCpuShare: postgresShare(runs) } : {}),
      invalid: runs.reduce((n, r) => n + r.invalid + r.errors + (r.hammer?.invalid ?? 0), 0),
      ok: runs.every((r) => r.ok),
      notes: notes.join("; ")
    }
  })
}

/** The targets. */
export const ratios = (result: BenchResult, table: ReadonlyArray<Row>): Array<Ratio> => {
  const find = (scenario: string, config: Configuration) =>
    table.find((r) => r.scenario === scenario && r.config === config)
  const out: Array<Ratio> = []
  const ratio = (name: string, a: Row | undefined, b: Row | undefined, min: number) => {
    if (a === undefined || b === undefined) {
      out.push({ name, measured: null, value: null, target: `≥ ${min}×`, pass: null, note: "not run" })
      return
    }
    const v = a.rpsMedian / b.rpsMedian
    const valid = a.ok && b.ok
    out.push({
      name,
      measured: `${v.toFixed(2)}×`,
      value: v,
      target: `≥ ${min}×`,
      pass: valid && v >= min,
      note: valid ? `${Math.round(a.rpsMedian)} vs ${Math.round(b.rpsMedian)} req/s` : "invalid runs"
    })
  }
  const atMost = (
    name: string,
    row: Row | undefined,
    value: number | null | undefined,
    max: number,
    unit: string
  ) => {
    if (row === undefined || value === null || value === undefined || Number.isNaN(value)) {
      out.push({ name, measured: null, value: null, target: `≤ ${max} ${unit}`, pass: null, note: "not run" })
      return
    }
    out.push({
      name,
      measured: `${value.toFixed(1)} ${unit}`,
      value,
      target: `≤ ${max} ${unit}`,
      pass: row.ok && value <= max,
      note: row.ok ? "" : "invalid runs"
    })
  }
  const cc = find("client_credentials", "latchkey")
  ratio("latchkey client_credentials vs oidc-provider", cc, find("client_credentials", "oidc-provider"), 3)
  ratio("latchkey client_credentials vs bare-http", cc, find("client_credentials", "bare-http"), 0.3)
  const conns = result.knobs.conns
  atMost(`latchkey client_credentials p99 at ${conns} connections`, cc, cc?.p99Ms, 10, "ms")
  atMost("latchkey server RSS (client_credentials)", cc, cc?.rssMaxMiB, 150, "MiB")
  ratio("authorization_code vs latchkey client_credentials", find("authorization_code", "latchkey"), cc, 0.6)
  ratio("refresh_token vs latchkey client_credentials", find("refresh_token", "latchkey"), cc, 0.6)
  ratio(
    "latchkey introspection vs bare-http",
    find("introspection", "latchkey"),
    find("introspection", "bare-http"),
    0.5
  )
  const ph = find("password-hammer", "latchkey")
  atMost("password-hammer: concurrent client_credentials p99", ph, ph?.p99Ms, 20, "ms")
  if (result.knobs.scenarios.includes("big-store")) {
    ratio(
      "big-store issuance vs empty store",
      find("big-store:client_credentials", "latchkey-big"),
      find("big-store:client_credentials", "latchkey"),
      0.8
    )
    ratio(
      "big-store introspection vs empty store",
      find("big-store:introspection", "latchkey-big"),
      find("big-store:introspection", "latchkey"),
      0.8
    )
    const soak = result.runs.find((r) => r.scenario === "big-store:soak")
    const soakRow = find("big-store:soak", "latchkey-big")
    if (soak?.soak === undefined || soakRow === undefined)
      out.push({
        name: "big-store soak RSS growth",
        measured: null,
        value: null,
        target: "< 10 %",
        pass: null,
        note: "not run"
      })
    else
      out.push({
        name: `big-store soak RSS growth (${result.knobs.soak} s)`,
        measured: `${soak.soak.growthPct.toFixed(1)} %`,
        value: soak.soak.growthPct,
        target: "< 10 %",
        pass: soakRow.ok && soak.soak.growthPct < 10,
        note: `${soak.soak.rssStartMiB} → ${soak.soak.rssEndMiB} MiB${soakRow.ok ? "" : ", invalid runs"}`
      })
  }
  ratio(
    "latchkey-express vs express-bare",
    find("client_credentials", "latchkey-express"),
    find("client_credentials", "express-bare"),
    0.85
  )
  return out
}

/** A ratio shown for information only: no goal, never ✓/✗. */
export interface Info {
  readonly name: string
  /** e.g. "0.62×", or null when a row was not run. */
  readonly measured: string | null
  readonly value: number | null
  readonly note: string
}

/**
 * Ratios against durable-floor (the hand-written server doing only Latchkey's durable work):
 * how much of the floor's rate latchkey reaches, and how far above oidc-provider the floor is;
 * and the reference server on PostgreSQL, and with LATCHKEY_WORKERS, against latchkey (one
 * process on SQLite).
 */
export const informational = (table: ReadonlyArray<Row>): Array<Info> => {
  const find = (config: Configuration) =>
    table.find((r) => r.scenario === "client_credentials" && r.config === config)
  const info = (name: string, a: Row | undefined, b: Row | undefined): Info => {
    if (a === undefined || b === undefined) return { name, measured: null, value: null, note: "not run" }
    const v = a.rpsMedian / b.rpsMedian
    const counts = `${Math.round(a.rpsMedian)} vs ${Math.round(b.rpsMedian)} req/s`
    return {
      name,
      measured: `${v.toFixed(2)}×`,
      value: v,
      note: a.ok && b.ok ? counts : `${counts}, invalid runs`
    }
  }
  const floor = find("durable-floor")
  const latchkey = find("latchkey")
  return [
    info("latchkey client_credentials vs durable-floor", latchkey, floor),
    info("durable-floor vs oidc-provider", floor, find("oidc-provider")),
    info("latchkey-postgres vs latchkey (SQLite) client_credentials", find("latchkey-postgres"), latchkey),
    info("latchkey-workers vs latchkey client_credentials", find("latchkey-workers"), latchkey)
  ]
}

const fmt = (n: number | null, digits = 0): string =>
  n === null || Number.isNaN(n) ? "–" : n.toFixed(digits)

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
    "| configuration | scenario | req/s (median) | rounds | p50 ms | p99 ms | RSS MiB | server CPU | invalid | notes |"
  )
  lines.push("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
  for (const r of table) {
    lines.push(
      `| ${r.config} | ${r.scenario} | ${fmt(r.rpsMedian)} | ${r.rounds.map((x) => fmt(x)).join(" / ")} | ` +
        `${fmt(r.p50Ms, 2)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.rssMaxMiB, 1)} | ` +
        `${r.cpuShare === null ? "–" : `${Math.round(r.cpuShare * 100)} %`} | ${r.invalid}${r.ok ? "" : " ✗"} | ${r.notes} |`
    )
  }
  lines.push("")
  lines.push("| target | measured | goal | | |")
  lines.push("| --- | ---: | --- | --- | --- |")
  for (const q of ratios(result, table)) {
    lines.push(
      `| ${q.name} | ${q.measured ?? "–"} | ${q.target} | ${q.pass === null ? "–" : q.pass ? "✓" : "✗"} | ${q.note} |`
    )
  }
  const info = informational(table)
  if (info.some((i) => i.measured !== null)) {
    lines.push("")
    lines.push(
      "Informational, no target (durable-floor: a hand-written baseline doing only Latchkey's durable work; " +
        "latchkey-postgres: PostgreSQL unpinned; latchkey-workers: see its pinning above):"
    )
    lines.push("")
    for (const i of info) lines.push(`- ${i.name}: ${i.measured ?? "–"} (${i.note})`)
  }
  return `${lines.join("\n")}\n`
}

/**
 * The harness: which configurations each scenario runs on, one run (fresh server pinned
 * to the server CPU, warm-up, measured run with RSS and CPU sampled, stop), and the
 * rounds that interleave the configurations.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Paths } from "@latchkey/core"
import { workersStatus } from "./cluster.js"
import type * as CoreCost from "./coreCost.js"
import type { Knobs } from "./knobs.js"
import * as Latchkey from "./latchkey.js"
import * as Load from "./load.js"
import { benchRoot } from "./paths.js"
import * as Postgres from "./postgres.js"
import {
  allowedCpus,
  canPin,
  cpuBetween,
  cpuByPid,
  freePort,
  groupRssMiB,
  listeningPid,
  pidsInGroup,
  sampleMiB,
  sampleRss,
  spawnGroup,
  stopGroup
} from "./proc.js"
import * as RequestLog from "./requestLog.js"

/** The servers under test. */
const configurations = [
  "bare-http",
  "express-bare",
  "oidc-provider",
  "durable-floor",
  "durable-floor-pipelined",
  "latchkey",
  "latchkey-express",
  "latchkey-big",
  "latchkey-workers",
  "latchkey-postgres"
] as const
export type Configuration = (typeof configurations)[number]

/**
 * What a configuration's store holds (Latchkey and the durable floors, which read Latchkey's store);
 * `postgres`: a copy of the seeded PostgreSQL database instead of a SQLite file.
 */
type Store = "none" | "base" | "code" | "refresh" | "big" | "postgres"

/** One (scenario, configuration) measured in every round. */
export interface Step {
  readonly scenario: string
  readonly config: Configuration
  readonly kind: Load.Kind
  readonly store: Store
  /** password-hammer: a password hammer runs alongside the measured client_credentials. */
  readonly hammer: boolean
}

const step = (
  scenario: string,
  config: Configuration,
  kind: Load.Kind,
  options: { store?: Store; hammer?: boolean } = {}
): Step => ({
  scenario,
  config,
  kind,
  store:
    options.store ??
    (config === "latchkey-big"
      ? "big"
      : config === "latchkey-postgres"
        ? "postgres"
        : config.startsWith("latchkey") || config.startsWith("durable-floor")
          ? "base"
          : "none"),
  hammer: options.hammer ?? false
})

/** The steps of each scenario, in the order a round runs them. */
const scenarioSteps = (scenario: string): Array<Step> => {
  switch (scenario) {
    case "client_credentials":
      return (
        [
          "bare-http",
          "express-bare",
          "oidc-provider",
          "durable-floor",
          "durable-floor-pipelined",
          "latchkey",
          "latchkey-express",
          "latchkey-workers",
          "latchkey-postgres"
        ] as const
      ).map((c) => step(scenario, c, "client_credentials"))
    case "authorization_code":
      return [step(scenario, "latchkey", "authorization_code", { store: "code" })]
    case "refresh_token":
      return [step(scenario, "latchkey", "refresh_token", { store: "refresh" })]
    case "introspection":
      return [step(scenario, "bare-http", "introspection"), step(scenario, "latchkey", "introspection")]
    case "password-hammer":
      return [step(scenario, "latchkey", "client_credentials", { hammer: true })]
    case "big-store":
      return [
        step("big-store:client_credentials", "latchkey", "client_credentials"),
        step("big-store:client_credentials", "latchkey-big", "client_credentials"),
        step("big-store:introspection", "latchkey", "introspection"),
        step("big-store:introspection", "latchkey-big", "introspection")
      ]
    default:
      throw new Error(`unknown scenario ${scenario}`)
  }
}

/** The steps of one round, filtered by CONFIGS (latchkey-postgres only with DATABASE_URL). */
export const plan = (knobs: Knobs): Array<Step> =>
  planned(knobs).filter((s) => s.config !== "latchkey-postgres" || knobs.databaseUrl !== null)

/** The steps CONFIGS and SCENARIOS select, before the ones this machine cannot run are left out. */
const planned = (knobs: Knobs): Array<Step> =>
  knobs.scenarios
    .flatMap(scenarioSteps)
    .filter((s) => knobs.configs === null || knobs.configs.includes(s.config))

/** Why selected steps do not run (latchkey-postgres without DATABASE_URL), for the report. */
export const skipped = (knobs: Knobs): Array<string> =>
  knobs.databaseUrl === null && planned(knobs).some((s) => s.config === "latchkey-postgres")
    ? ["latchkey-postgres skipped: DATABASE_URL is not set (set it to a PostgreSQL server to run that row)"]
    : []

/** One measured run. */
export interface RunRecord {
  readonly round: number
  readonly scenario: string
  readonly config: Configuration
  readonly kind: Load.Kind
  readonly conns: number
  readonly durationS: number
  /** Valid answers a second. */
  readonly rps: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** Requests the load generator completed. */
  readonly requests: number
  readonly valid: number
  readonly invalid: number
  /** Socket errors and timeouts. */
  readonly errors: number
  /**
   * Max VmRSS of the server process during the measured run, MiB (latchkey-workers: of the
   * sum over its process group, the primary and every worker, sampled together).
   */
  readonly rssMaxMiB: number | null
  /** Server CPU seconds during the measured run (latchkey-workers: its whole group), and as a share of one CPU. */
  readonly cpuSeconds: number | null
  readonly cpuShare: number | null
  /**
   * The server's own view: the `request` lines it logged for the requests that arrived and finished
   * within the measured load (password-hammer: the hammer's requests too), and the p99 of their
   * `durationMs`; null when it logs none.
   */
  readonly serverRequests: number | null
  readonly serverP99Ms: number | null
  readonly serverPid: number | null
  /** Processes whose RSS and CPU were summed (latchkey-workers: primary + workers), when more than the server's own. */
  readonly processes?: ReadonlyArray<{ readonly pid: number; readonly cpus: string | null }>
  /** latchkey-postgres: the PostgreSQL backends serving the run's database (unpinned, not in the server CPU). */
  readonly postgres?: {
    readonly database: string
    readonly backends: number
    readonly cpuSeconds: number | null
    readonly cpuShare: number | null
  }
  /** Whether every answer was valid and nothing ran out. */
  readonly ok: boolean
  readonly problems: ReadonlyArray<string>
  /** Worth knowing, without making the run invalid. */
  readonly notes: ReadonlyArray<string>
  readonly load: Load.LoadSummary | null
  readonly warmup: Load.LoadSummary | null
  /** password-hammer: the hammer's own summary. */
  readonly hammer?: Load.LoadSummary | null
  /** Soak: RSS at start and end (MiB), growth, and the series. */
  readonly soak?: {
    readonly rssStartMiB: number
    readonly rssEndMiB: number
    readonly growthPct: number
    readonly series: ReadonlyArray<readonly [number, number]>
  }
}

/** Everything a run needs that is prepared once. */
interface Context {
  readonly knobs: Knobs
  readonly tool: Load.Tool
  /** Whether processes are pinned with taskset. */
  readonly pinned: boolean
  readonly dir: string
  readonly commands: Latchkey.Commands | null
  readonly base: Latchkey.BaseSeed | null
  readonly code: Latchkey.SingleUseSeed | null
  readonly refresh: Latchkey.SingleUseSeed | null
  readonly big: string | null
  /** latchkey-postgres' seeded database, when DATABASE_URL is set and the row runs. */
  readonly postgres: Latchkey.PostgresSeed | null
  /** Why `postgres` could not be prepared (its runs are then invalid), or null. */
  readonly postgresError?: string | null
  readonly log: (line: string) => void
}

const oidcClient = { id: "bench-client", secret: "bench-secret-0123456789abcdefghijklmnopqrstuv" }

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

interface Target {
  readonly command: ReadonlyArray<string>
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly tokenPath: string
  readonly introspectPath: string
  readonly auth: string
}

/** How a configuration is started; `db` is its SQLite file, or the PostgreSQL URI of latchkey-postgres. */
const target = (ctx: Context, config: Configuration, port: number, db: string | null): Target => {
  // No server inherits DATABASE_URL or LATCHKEY_WORKERS from the bench (see latchkeyEnv)
  const env = Latchkey.latchkeyEnv({ HOST: "127.0.0.1", PORT: String(port) })
  const paths = { tokenPath: Paths.oauth.token, introspectPath: Paths.oauth.introspect }
  const node = (file: string, args: ReadonlyArray<string> = []) => ({
    command: [process.execPath, ...args, join(benchRoot, "servers", file)],
    cwd: benchRoot
  })
  switch (config) {
    case "bare-http":
    case "express-bare":
      return { ...node(`${config}.mjs`), env, ...paths, auth: basic("bench-client", "bench-secret") }
    case "oidc-provider":
      return {
        ...node("oidc-provider.mjs"),
        env: { ...env, BENCH_CLIENT_ID: oidcClient.id, BENCH_CLIENT_SECRET: oidcClient.secret },
        tokenPath: "/token",
        introspectPath: "/token/introspection",
        auth: basic(oidcClient.id, oidcClient.secret)
      }
    case "latchkey-postgres": {
      if (ctx.commands === null || ctx.postgres === null || db === null)
        throw new Error("latchkey-postgres is not seeded")
      const penv: NodeJS.ProcessEnv = { ...env }
      delete penv.LATCHKEY_DB
      return {
        command: ctx.commands.server.argv,
        cwd: ctx.commands.server.cwd,
        env: { ...penv, DATABASE_URL: db, LOG_LEVEL: "info" },
        ...paths,
        auth: basic(ctx.postgres.appKey, ctx.postgres.appSecret)
      }
    }
    case "durable-floor":
    case "durable-floor-pipelined":
    case "latchkey":
    case "latchkey-big":
    case "latchkey-workers":
    case "latchkey-express": {
      if (ctx.commands === null || ctx.base === null || db === null) throw new Error("latchkey is not seeded")
      const auth = basic(ctx.base.appKey, ctx.base.appSecret)
      // durable defaults, audit and request logs on (to a file, as a service manager would)
      const lenv = { ...env, LATCHKEY_DB: db, LOG_LEVEL: "info" }
      // The baselines of Latchkey's durable work: the same seeded store, their own plain servers
      if (config === "durable-floor" || config === "durable-floor-pipelined")
        return { ...node(`${config}.mjs`), env: lenv, ...paths, auth }
      if (config === "latchkey-express")
        return { ...node("latchkey-express.mjs", ctx.commands.embeddedNodeArgs), env: lenv, ...paths, auth }
      if (config === "latchkey-workers") {
        const wenv = { ...lenv, LATCHKEY_WORKERS: String(ctx.knobs.workers) }
        return { command: ctx.commands.server.argv, cwd: ctx.commands.server.cwd, env: wenv, ...paths, auth }
      }
      return { command: ctx.commands.server.argv, cwd: ctx.commands.server.cwd, env: lenv, ...paths, auth }
    }
  }
}

/** Wait until a client_credentials request answers 200 (servers answer 503 while starting). */
export const waitReady = async (
  url: string,
  auth: string,
  timeoutS: number,
  exited: () => boolean
): Promise<string | null> => {
  const deadline = Date.now() + timeoutS * 1000
  let last = "no answer"
  while (Date.now() < deadline) {
    if (exited()) return "the server exited while starting"
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&scope=api%3Aread",
        signal: AbortSignal.timeout(5_000)
      })
      const text = await r.text()
      if (r.status === 200) return null
      last = `${r.status} ${text.slice(0, 200)}`
    } catch (e) {
      last = e instanceof Error ? e.message : String(e)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  return `not ready after ${timeoutS} s: ${last}`
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length === 0
    ? Number.NaN
    : s.length % 2 === 1
      ? (s[m] as number)
      : ((s[m - 1] as number) + (s[m] as number)) / 2
}

const logTail = (file: string): string => {
  try {
    const text = readFileSync(file, "utf8").trim()
    return text === "" ? "(nothing)" : text.slice(-600)
  } catch {
    return "(no log)"
  }
}

/**
 * Wait (bounded) for a cluster's primary to log `all <workers> workers ready` in `logFile`;
 * null when it did, else why not.
 */
const waitWorkersReady = async (
  logFile: string,
  workers: number,
  timeoutS: number,
  exited: () => boolean
): Promise<string | null> => {
  const deadline = Date.now() + timeoutS * 1000
  for (;;) {
    let text = ""
    try {
      text = readFileSync(logFile, "utf8")
    } catch {}
    const status = workersStatus(text, workers)
    if (status.ready) return null
    if (status.fatal !== null) return `the server could not start (${status.fatal})`
    if (exited()) return "the server exited while starting"
    if (Date.now() >= deadline)
      return `no "all ${workers} workers ready" line after ${timeoutS} s (${status.listening} of ${workers} workers listening)`
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The record of a run that could not start (its store could not be prepared): invalid. */
const notRun = (s: Step, round: number, conns: number, durationS: number, problem: string): RunRecord => ({
  round,
  scenario: s.scenario,
  config: s.config,
  kind: s.kind,
  conns,
  durationS,
  rps: 0,
  p50Ms: Number.NaN,
  p99Ms: Number.NaN,
  maxMs: Number.NaN,
  requests: 0,
  valid: 0,
  invalid: 0,
  errors: 0,
  rssMaxMiB: null,
  cpuSeconds: null,
  cpuShare: null,
  serverRequests: null,
  serverP99Ms: null,
  serverPid: null,
  ok: false,
  problems: [problem],
  notes: [],
  load: null,
  warmup: null
})

/** The CPU list a step's server runs on, or null (unpinned). */
const serverCpu = (ctx: Context, s: Step): string | null =>
  !ctx.pinned ? null : s.config === "latchkey-workers" ? ctx.knobs.workersCpu : ctx.knobs.serverCpu

/** Run one step: a fresh server, warm-up, measured run (or a soak), stop. */
const runStep = async (
  ctx: Context,
  s: Step,
  round: number,
  options: { durationS?: number; warmupS?: number; soak?: boolean } = {}
): Promise<RunRecord> => {
  const { knobs } = ctx
  const durationS = options.durationS ?? knobs.duration
  const warmupS = options.warmupS ?? knobs.warmup
  const conns = s.hammer ? knobs.probeConns : knobs.conns
  const problems: Array<string> = []
  const notes: Array<string> = []
  const port = await freePort()
  const runId = `${round}-${s.scenario.replace(/[^a-z0-9_-]/gi, "_")}-${s.config}`
  // Each run starts from a fresh copy of its store (the big store is used in place)
  let db: string | null = null
  let single: Latchkey.SingleUseSeed | null = null
  // latchkey-postgres: a copy of the seeded database, dropped after the run
  let pgDatabase: string | null = null
  if (s.store === "big") db = ctx.big
  else if (s.store === "postgres") {
    // PostgreSQL trouble makes this row invalid, not the whole benchmark
    const unusable = (why: string) => notRun(s, round, conns, durationS, `PostgreSQL: ${why}`)
    if (ctx.postgres === null) return unusable(ctx.postgresError ?? "not prepared")
    pgDatabase = `${ctx.postgres.database}_r${round}`
    try {
      await Postgres.createDatabase(ctx.postgres.adminUrl, pgDatabase, ctx.postgres.database)
    } catch (e) {
      return unusable(`could not copy the seeded database: ${e instanceof Error ? e.message : String(e)}`)
    }
    db = Postgres.databaseUrl(ctx.postgres.adminUrl, pgDatabase)
  } else if (s.store !== "none") {
    const from = s.store === "base" ? ctx.base : s.store === "code" ? ctx.code : ctx.refresh
    if (from === null) throw new Error(`store ${s.store} is not seeded`)
    single = s.store === "code" ? ctx.code : s.store === "refresh" ? ctx.refresh : null
    db = join(ctx.dir, `run-${runId}.sqlite`)
    Latchkey.copyStore(from.db, db)
  }
  const t = target(ctx, s.config, port, db)
  const logFile = join(ctx.dir, `server-${runId}.log`)
  const logFd = openSync(logFile, "w")
  const server = spawnGroup({
    command: t.command,
    cwd: t.cwd,
    env: t.env,
    cpu: serverCpu(ctx, s),
    stdout: logFd,
    stderr: logFd
  })
  closeSync(logFd)
  const group = s.config === "latchkey-workers"
  const base = `http://127.0.0.1:${port}`
  const url = `${base}${s.kind === "introspection" ? t.introspectPath : t.tokenPath}`
  let warmup: Load.LoadSummary | null = null
  let load: Load.LoadSummary | null = null
  let hammer: Load.LoadSummary | null = null
  let rss: { maxMiB: number | null; series: Array<[number, number]> } = { maxMiB: null, series: [] }
  let cpu: number | null = null
  let pid: number | null = null
  let wall: number | null = null
  let sampler: ReturnType<typeof sampleRss> | null = null
  let processes: RunRecord["processes"]
  let postgres: RunRecord["postgres"]
  // Where the log stood when the measured run started, and when the measured load started and ended
  let logStart: number | null = null
  let measured: RequestLog.Window | null = null
  try {
    const exited = () => server.exitCode !== null || server.signalCode !== null
    const started = Date.now()
    if (group) {
      // The primary forwards connections to whichever workers are up: wait for all of them
      const notAll = await waitWorkersReady(logFile, knobs.workers, knobs.startTimeout, exited)
      if (notAll !== null) throw new Error(`${s.config}: ${notAll}; its output ends: ${logTail(logFile)}`)
    }
    const left = Math.max(1, knobs.startTimeout - (Date.now() - started) / 1000)
    const notReady = await waitReady(`${base}${t.tokenPath}`, t.auth, left, exited)
    if (notReady !== null) throw new Error(`${s.config}: ${notReady}; its output ends: ${logTail(logFile)}`)
    pid = listeningPid(server, port)
    const vars: Record<string, string> = { BENCH_AUTH: t.auth, BENCH_SCOPE: "api:read" }
    if (ctx.base !== null) {
      Object.assign(vars, {
        BENCH_TOKEN: ctx.base.introspectToken,
        BENCH_USERNAME: ctx.base.username,
        BENCH_PASSWORD: ctx.base.password,
        BENCH_REDIRECT_URI: ctx.base.redirectUri
      })
    } else vars.BENCH_TOKEN = "bench-token"
    let offset = 0
    if (single !== null)
      Object.assign(vars, { BENCH_FILE: single.file, BENCH_RECLEN: String(single.recordLength) })
    const spec = (kind: Load.Kind, seconds: number, c: number): Load.LoadSpec => ({
      tool: ctx.tool,
      kind,
      url: kind === "password" ? `${base}${t.tokenPath}` : url,
      conns: c,
      durationS: seconds,
      cpu: ctx.pinned ? knobs.loadCpu : null,
      wrkThreads: knobs.wrkThreads,
      vars: { ...vars, BENCH_OFFSET: String(offset) }
    })
    if (warmupS > 0) {
      warmup = await Load.run(spec(s.kind, warmupS, conns))
      offset += warmup.threads * warmup.handedMax
      if (warmup.exhausted > 0)
        problems.push("the seeded single-use values ran out during the warm-up (raise CODES)")
    }
    const serverPid = pid
    const pgid = server.pid as number
    // latchkey-workers: every process of its group (primary and workers), read together
    const pidsNow = () => (group ? pidsInGroup(pgid) : [serverPid])
    const cpuBefore = cpuByPid(pidsNow())
    const pgBefore =
      pgDatabase !== null && ctx.postgres !== null
        ? cpuByPid(await Postgres.backendPids(ctx.postgres.adminUrl, pgDatabase))
        : null
    logStart = statSync(logFile).size
    const measuring = Date.now()
    sampler = group ? sampleMiB(() => groupRssMiB(pgid)) : sampleRss(serverPid)
    const measure = async () => {
      const fromMs = Date.now()
      const summary = await Load.run(spec(s.kind, durationS, conns))
      // Up to the load generator's own end: it does not count the requests it stopped waiting for
      return { summary, window: { fromMs, toMs: fromMs + summary.durationUs / 1000 } }
    }
    let measuredLoad: Awaited<ReturnType<typeof measure>>
    if (s.hammer) {
      // The hammer starts first and ends last, so it covers the whole measured run
      const hammering = Load.run(spec("password", durationS + 1, knobs.hammerConns))
      await new Promise((r) => setTimeout(r, 500))
      measuredLoad = await measure()
      hammer = await hammering
    } else measuredLoad = await measure()
    load = measuredLoad.summary
    measured = measuredLoad.window
    rss = sampler.stop()
    sampler = null
    const groupAfter = pidsNow()
    const cpuAfter = cpuByPid(groupAfter)
    wall = (Date.now() - measuring) / 1000
    cpu = cpuAfter.has(serverPid) && wall > 0 ? Math.round(cpuBetween(cpuBefore, cpuAfter) * 100) / 100 : null
    if (group) {
      processes = groupAfter.map((p) => ({ pid: p, cpus: allowedCpus(p) }))
      const restarted = [...cpuAfter.keys()].filter((p) => !cpuBefore.has(p)).length
      if (restarted > 0)
        notes.push(
          `${restarted} process(es) of the group appeared during the measured run (a worker restarted?)`
        )
      if (groupAfter.length !== knobs.workers + 1)
        notes.push(`${groupAfter.length} processes in the group, not the primary + ${knobs.workers} workers`)
    }
    if (pgBefore !== null && pgDatabase !== null && ctx.postgres !== null) {
      const backends = await Postgres.backendPids(ctx.postgres.adminUrl, pgDatabase)
      const used = cpuBetween(pgBefore, cpuByPid(backends))
      postgres = {
        database: pgDatabase,
        backends: backends.length,
        cpuSeconds: Math.round(used * 100) / 100,
        cpuShare: wall > 0 ? used / wall : null
      }
    }
  } catch (e) {
    problems.push(e instanceof Error ? e.message : String(e))
  } finally {
    sampler?.stop()
    await stopGroup(server)
    if (pgDatabase !== null && ctx.postgres !== null) {
      try {
        await Postgres.dropDatabase(ctx.postgres.adminUrl, pgDatabase)
      } catch (e) {
        // Postgres.dropAll tries again at the end of the benchmark
        notes.push(`could not drop ${pgDatabase} yet: ${e instanceof Error ? e.message : String(e)}`)
      }
    } else if (db !== null && s.store !== "big") Latchkey.removeStore(db)
  }
  // Read once the server stopped, so it flushed every line of its buffered log
  const served =
    logStart === null || measured === null ? null : RequestLog.fromLog(logFile, logStart, measured)
  if (load !== null) {
    if (load.invalid > 0) problems.push(`${load.invalid} invalid answers (e.g. ${load.samples[0] ?? "?"})`)
    if (Load.socketErrors(load) > 0) problems.push(`${Load.socketErrors(load)} socket errors or timeouts`)
    if (load.exhausted > 0)
      problems.push("the seeded single-use values ran out: the run is invalid (raise CODES)")
    if (load.valid === 0) problems.push("no valid answers")
  }
  if (hammer !== null) {
    if (hammer.invalid > 0)
      problems.push(`hammer: ${hammer.invalid} unexpected answers (e.g. ${hammer.samples[0] ?? "?"})`)
    // Hammer requests left unanswered within the timeout are the server's choice under
    // attack, not wrong answers: the report counts them apart (see report.ts)
  }
  const seconds = load === null ? durationS : load.durationUs / 1e6
  let soak: RunRecord["soak"]
  if (options.soak === true && rss.series.length > 1) {
    // RSS at start and end: medians of the first and last tenth of the samples
    const n = Math.max(1, Math.floor(rss.series.length / 10))
    const start = median(rss.series.slice(0, n).map(([, v]) => v))
    const end = median(rss.series.slice(-n).map(([, v]) => v))
    soak = { rssStartMiB: start, rssEndMiB: end, growthPct: (end / start - 1) * 100, series: rss.series }
  }
  return {
    round,
    scenario: options.soak === true ? "big-store:soak" : s.scenario,
    config: s.config,
    kind: s.kind,
    conns,
    durationS,
    rps: load === null ? 0 : load.valid / seconds,
    p50Ms: load?.p50Ms ?? Number.NaN,
    p99Ms: load?.p99Ms ?? Number.NaN,
    maxMs: load?.maxMs ?? Number.NaN,
    requests: load?.requests ?? 0,
    valid: load?.valid ?? 0,
    invalid: load?.invalid ?? 0,
    errors: load === null ? 0 : Load.socketErrors(load),
    rssMaxMiB: rss.maxMiB === null ? null : Math.round(rss.maxMiB * 10) / 10,
    cpuSeconds: cpu,
    cpuShare: cpu === null || wall === null ? null : cpu / wall,
    serverRequests: served?.requests ?? null,
    serverP99Ms: served?.p99Ms ?? null,
    serverPid: pid,
    ...(processes !== undefined ? { processes } : {}),
    ...(postgres !== undefined ? { postgres } : {}),
    ok: problems.length === 0,
    problems,
    notes,
    load,
    warmup,
    ...(s.hammer ? { hammer } : {}),
    ...(soak !== undefined ? { soak } : {})
  }
}

const ms = (v: number) => (Number.isNaN(v) ? "–" : `${v.toFixed(2)} ms`)

/** Options of a whole benchmark. */
export interface BenchOptions {
  readonly log?: (line: string) => void
  /** Keep the temporary directory (stores, server logs). */
  readonly keep?: boolean
}

/** The raw results of a benchmark. */
export interface BenchResult {
  readonly startedAt: string
  readonly finishedAt: string
  readonly knobs: Knobs
  readonly tool: Load.Tool
  readonly toolVersion: string
  readonly pinned: boolean
  readonly notes: ReadonlyArray<string>
  readonly machine: {
    readonly node: string
    readonly cpus: number
    readonly platform: string
    /** 1, 5 and 15 minute load averages before and after the run. */
    readonly loadBefore: ReadonlyArray<number>
    readonly loadAfter: ReadonlyArray<number>
  }
  readonly steps: ReadonlyArray<Step>
  readonly runs: ReadonlyArray<RunRecord>
  /** The core's own cost of a request (`CoreCost.measure`), when measured. */
  readonly coreCost?: CoreCost.CoreCost | null | undefined
}

/** Prepare, run every round, clean up. */
export const runBench = async (knobs: Knobs, options: BenchOptions = {}): Promise<BenchResult> => {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const startedAt = new Date().toISOString()
  const steps = plan(knobs)
  if (steps.length === 0) throw new Error("nothing to run: SCENARIOS and CONFIGS select no configuration")
  const tool = Load.detectTool(knobs.loadgen)
  const pinned = canPin([knobs.serverCpu, knobs.loadCpu])
  const notes: Array<string> = []
  const loadBefore = loadavg()
  const busy = loadBefore[0] ?? 0
  if (busy > 0.5) {
    notes.push(
      `the machine was busy before the run (load average ${busy.toFixed(2)}): other processes share the CPUs, numbers are noisier`
    )
  }
  if (!pinned) notes.push("taskset or a second CPU is missing: servers and load generators are not pinned")
  for (const n of skipped(knobs)) {
    notes.push(n)
    log(`note: ${n}`)
  }
  if (steps.some((s) => s.config === "latchkey-workers")) {
    notes.push(
      `latchkey-workers: LATCHKEY_WORKERS=${knobs.workers}; ` +
        (pinned && knobs.workersCpu !== null
          ? `its whole process group (primary and workers) is pinned to CPU ${knobs.workersCpu} like the other servers, so the workers share ${knobs.workersCpu === knobs.serverCpu ? "that one core: the row shows what workers cost or gain on one core, not on more" : "those CPUs"}`
          : "unpinned (WORKERS_CPU=none or no pinning): primary and workers share every CPU with the load generator") +
        "; its RSS and CPU are the sums over the primary and the workers"
    )
  }
  if (steps.some((s) => s.config === "latchkey-postgres")) {
    notes.push(
      "latchkey-postgres: the server is pinned like the others, but PostgreSQL itself runs outside the pinning " +
        "(its backends share the machine's CPUs, the load generator's too); the server CPU column is the Node process " +
        "alone, the PostgreSQL backends' CPU is in the row's notes, and the RSS is the Node process alone"
    )
  }
  mkdirSync(tmpdir(), { recursive: true })
  const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-"))
  const runs: Array<RunRecord> = []
  try {
    const needs = (store: Store) => steps.some((s) => s.store === store)
    let commands: Latchkey.Commands | null = null
    let base: Latchkey.BaseSeed | null = null
    let code: Latchkey.SingleUseSeed | null = null
    let refresh: Latchkey.SingleUseSeed | null = null
    let big: string | null = null
    let postgres: Latchkey.PostgresSeed | null = null
    let postgresError: string | null = null
    if (steps.some((s) => s.store !== "none")) {
      commands = await Latchkey.resolveCommands(dir)
      notes.push(...commands.notes)
      for (const n of commands.notes) log(`note: ${n}`)
      log("seeding: application and user with the CLI")
      base = await Latchkey.seedBase(commands, dir, (line) => {
        notes.push(line)
        log(`note: ${line}`)
      })
      if (needs("code")) {
        log(`seeding: ${knobs.codes} authorization codes`)
        code = Latchkey.seedSingleUse(base, "code", knobs.codes, dir)
      }
      if (needs("refresh")) {
        log(`seeding: ${knobs.codes} refresh tokens`)
        refresh = Latchkey.seedSingleUse(base, "refresh", knobs.codes, dir)
      }
      if (needs("big")) {
        log(`seeding: ${knobs.bigTokens} access tokens for big-store`)
        const t0 = Date.now()
        big = Latchkey.seedBig(base, knobs.bigTokens, dir, (done) => {
          if (done % 1_000_000 === 0 || done === knobs.bigTokens)
            log(`  ${done} (${Math.round((Date.now() - t0) / 1000)} s)`)
        })
      }
      if (needs("postgres") && knobs.databaseUrl !== null) {
        log("seeding: a fresh PostgreSQL database, application and user with the CLI")
        try {
          postgres = await Latchkey.seedPostgres(commands, knobs.databaseUrl, (line) => {
            notes.push(line)
            log(`note: ${line}`)
          })
          const line =
            `latchkey-postgres: ${postgres.server}; seeded database ${postgres.database}, each run on a copy of it ` +
            `(CREATE DATABASE … TEMPLATE), all dropped at the end; LATCHKEY_PG_POOL_MAX ${process.env.LATCHKEY_PG_POOL_MAX?.trim() || "10 (default)"}`
          notes.push(line)
          log(`note: ${line}`)
        } catch (e) {
          postgresError = `could not prepare a database: ${e instanceof Error ? e.message : String(e)}`
          notes.push(`latchkey-postgres: ${postgresError}`)
          log(`note: latchkey-postgres: ${postgresError}`)
        }
      }
    }
    const ctx: Context = {
      knobs,
      tool,
      pinned,
      dir,
      commands,
      base,
      code,
      refresh,
      big,
      postgres,
      postgresError,
      log
    }
    for (let round = 1; round <= knobs.rounds; round++) {
      for (const s of steps) {
        const r = await runStep(ctx, s, round)
        runs.push(r)
        log(
          `[round ${round}/${knobs.rounds}] ${s.scenario} × ${s.config}: ${Math.round(r.rps)} req/s, ` +
            `p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, RSS ${r.rssMaxMiB ?? "–"} MiB` +
            (r.ok ? "" : ` — INVALID: ${r.problems.join("; ")}`)
        )
      }
    }
    if (
      knobs.scenarios.includes("big-store") &&
      (knobs.configs === null || knobs.configs.includes("latchkey-big"))
    ) {
      log(`soak: ${knobs.soak} s of client_credentials on the big store`)
      const r = await runStep(ctx, step("big-store:soak", "latchkey-big", "client_credentials"), 1, {
        durationS: knobs.soak,
        warmupS: knobs.soakWarmup,
        soak: true
      })
      runs.push(r)
      log(
        `soak: ${Math.round(r.rps)} req/s, RSS ${r.soak?.rssStartMiB ?? "?"} → ${r.soak?.rssEndMiB ?? "?"} MiB` +
          (r.ok ? "" : ` — INVALID: ${r.problems.join("; ")}`)
      )
    }
  } finally {
    // The PostgreSQL databases of this run (seed and any run copy left), also on failure
    const left = await Postgres.dropAll()
    if (left.length > 0) {
      const n = `could not drop the PostgreSQL database(s) ${left.join(", ")}: drop them by hand`
      notes.push(n)
      log(`note: ${n}`)
    }
    if (options.keep !== true) rmSync(dir, { recursive: true, force: true })
    else log(`kept ${dir}`)
  }
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    // The JSON of the run is written to disk: never DATABASE_URL's password
    knobs: {
      ...knobs,
      databaseUrl: knobs.databaseUrl === null ? null : Postgres.redactUrl(knobs.databaseUrl)
    },
    tool,
    toolVersion: Load.toolVersion(tool),
    pinned,
    notes,
    machine: {
      node: process.version,
      cpus: cpus().length,
      platform: process.platform,
      loadBefore,
      loadAfter: loadavg()
    },
    steps,
    runs
  }
}

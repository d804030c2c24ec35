/**
 * The benchmark's knobs, all read from the environment (see README.md).
 */

/** Scenarios run when SCENARIOS is unset (big-store only with BIG=1 or when named). */
const defaultScenarios = [
  "client_credentials",
  "authorization_code",
  "refresh_token",
  "introspection",
  "password-hammer"
] as const

/** Every scenario name. */
const allScenarios = [...defaultScenarios, "big-store"] as const

type LoadGen = "auto" | "wrk" | "autocannon"

export interface Knobs {
  /** Rounds of every (scenario, configuration); the table shows the median. */
  readonly rounds: number
  /** Seconds of each measured run. */
  readonly duration: number
  /** Seconds of the discarded warm-up run before each measured run (0: none). */
  readonly warmup: number
  /** Connections of the load generator. */
  readonly conns: number
  /** Scenarios to run, in this order. */
  readonly scenarios: ReadonlyArray<string>
  /** Only these configurations (CONFIGS), or every one. */
  readonly configs: ReadonlyArray<string> | null
  /** Access tokens seeded for big-store. */
  readonly bigTokens: number
  /** Seconds of the big-store soak. */
  readonly soak: number
  /** Seconds of load before the soak's first RSS sample (the heap settles first). */
  readonly soakWarmup: number
  /** Codes (and refresh tokens) seeded for each run of authorization_code (refresh_token). */
  readonly codes: number
  readonly loadgen: LoadGen
  /** wrk threads (all on the load CPU). */
  readonly wrkThreads: number
  /** Connections hammering the password grant in password-hammer. */
  readonly hammerConns: number
  /** Connections of the client_credentials generator measured during password-hammer. */
  readonly probeConns: number
  /** CPU of the servers and of the load generators (taskset -c). */
  readonly serverCpu: string
  readonly loadCpu: string
  /** Seconds a server may take to answer its first request. */
  readonly startTimeout: number
  /** Worker processes of latchkey-workers (LATCHKEY_WORKERS of that row). */
  readonly workers: number
  /** taskset CPU list of latchkey-workers' process group, or null to leave it unpinned. */
  readonly workersCpu: string | null
  /** PostgreSQL URI (DATABASE_URL) under which latchkey-postgres creates its database; null: the row is skipped. */
  readonly databaseUrl: string | null
  /** Exit 1 when a target is missed (not only on invalid runs). */
  readonly strict: boolean
  /** Measure the core's own cost of a request too (servers/core-cost.mjs; CORE_COST=0 skips it). */
  readonly coreCost: boolean
  /** Where the JSON of raw results goes. */
  readonly resultsDir: string | null
}

const number = (env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw.replace(/s$/, ""))
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number ≥ ${min} (got ${raw})`)
  return n
}

const list = (raw: string | undefined): Array<string> | null => {
  if (raw === undefined || raw.trim() === "") return null
  return raw
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}

/** WORKERS: 2 to 64 (1 would be the single-process server, which `latchkey` already is). */
const workerCount = (env: NodeJS.ProcessEnv): number => {
  const n = number(env, "WORKERS", 2, 2)
  if (!Number.isInteger(n) || n > 64)
    throw new Error(`WORKERS must be a whole number from 2 to 64 (got ${env.WORKERS})`)
  return n
}

/** DATABASE_URL, when set: a postgres:// or postgresql:// URI (never repeated in errors: it may hold a password). */
const databaseUrl = (env: NodeJS.ProcessEnv): string | null => {
  const raw = (env.DATABASE_URL ?? "").trim()
  if (raw === "") return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error("DATABASE_URL must be a PostgreSQL URI, e.g. postgres://postgres@127.0.0.1:5432/test")
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:")
    throw new Error(`DATABASE_URL must start with postgres:// or postgresql:// (got ${url.protocol}//…)`)
  return raw
}

/** Read the knobs. */
export const read = (env: NodeJS.ProcessEnv = process.env): Knobs => {
  const duration = number(env, "DURATION", 10, 1)
  const warmup = number(env, "WARMUP", 3)
  let scenarios = list(env.SCENARIOS) ?? [...defaultScenarios]
  if (env.BIG === "1" && !scenarios.includes("big-store")) scenarios = [...scenarios, "big-store"]
  for (const s of scenarios) {
    if (!(allScenarios as ReadonlyArray<string>).includes(s)) {
      throw new Error(
        `unknown scenario ${JSON.stringify(s)} in SCENARIOS (known: ${allScenarios.join(", ")})`
      )
    }
  }
  const serverCpu = (env.SERVER_CPU ?? "").trim() || "0"
  const workersCpu = (env.WORKERS_CPU ?? "").trim() || serverCpu
  const loadgen = (env.LOADGEN ?? "auto").trim() || "auto"
  if (loadgen !== "auto" && loadgen !== "wrk" && loadgen !== "autocannon") {
    throw new Error("LOADGEN must be auto, wrk or autocannon")
  }
  return {
    rounds: Math.floor(number(env, "ROUNDS", 3, 1)),
    duration,
    warmup,
    conns: Math.floor(number(env, "CONNS", 50, 1)),
    scenarios,
    configs: list(env.CONFIGS),
    bigTokens: Math.floor(number(env, "BIG_TOKENS", 5_000_000, 1)),
    soak: number(env, "SOAK", 120, 1),
    soakWarmup: number(env, "SOAK_WARMUP", 10),
    // enough for (warm-up + run) at 20,000 exchanges a second
    codes: Math.floor(number(env, "CODES", Math.max(300_000, Math.ceil((warmup + duration) * 20_000)), 1)),
    loadgen,
    wrkThreads: Math.floor(number(env, "WRK_THREADS", 1, 1)),
    hammerConns: Math.floor(number(env, "HAMMER_CONNS", 50, 1)),
    probeConns: Math.floor(number(env, "PROBE_CONNS", 10, 1)),
    serverCpu,
    loadCpu: (env.LOAD_CPU ?? "").trim() || "1",
    startTimeout: number(env, "START_TIMEOUT", 60, 1),
    workers: workerCount(env),
    workersCpu: workersCpu === "none" ? null : workersCpu,
    databaseUrl: databaseUrl(env),
    strict: env.STRICT === "1",
    coreCost: env.CORE_COST !== "0",
    resultsDir: env.RESULTS_DIR === "" ? null : (env.RESULTS_DIR ?? null)
  }
}

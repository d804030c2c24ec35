/**
 * The load generators: wrk with the per-scenario Lua scripts of lua/, or autocannon
 * (load/autocannon.mjs) when wrk is not installed. Each runs as its own process,
 * pinned to the load CPU, bounded in time, and prints one JSON summary line.
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { benchRoot } from "./paths.js"
import { collect, spawnGroup } from "./proc.js"

/** What a run sends; each has a Lua script and an autocannon twin with the same check. */
export type Kind =
  | "client_credentials"
  | "authorization_code"
  | "refresh_token"
  | "introspection"
  | "password"

export type Tool = "wrk" | "autocannon"

/** Which tool `auto` means on this machine. */
export const detectTool = (wanted: "auto" | Tool): Tool => {
  if (wanted !== "auto") return wanted
  try {
    execFileSync("wrk", ["-v"], { stdio: "ignore" })
    return "wrk"
  } catch (e) {
    // wrk -v exits 1 after printing its version; only a missing binary is ENOENT
    return (e as { code?: string }).code === "ENOENT" ? "autocannon" : "wrk"
  }
}

/** The tool's version line, for the record. */
export const toolVersion = (tool: Tool): string => {
  if (tool === "autocannon") {
    try {
      const pkg = execFileSync(process.execPath, ["-p", "require('autocannon/package.json').version"], {
        cwd: benchRoot,
        encoding: "utf8"
      })
      return `autocannon ${pkg.trim()}`
    } catch {
      return "autocannon"
    }
  }
  try {
    return execFileSync("wrk", ["-v"], { encoding: "utf8" }).split("\n")[0]?.trim() ?? "wrk"
  } catch (e) {
    const out = String((e as { stdout?: unknown }).stdout ?? "")
    return out.split("\n")[0]?.trim() || "wrk"
  }
}

export interface LoadSpec {
  readonly tool: Tool
  readonly kind: Kind
  /** Full URL of the endpoint. */
  readonly url: string
  readonly conns: number
  readonly durationS: number
  /** taskset CPU list, or null. */
  readonly cpu: string | null
  readonly wrkThreads: number
  /** BENCH_* variables of the scenario (BENCH_AUTH, BENCH_FILE, BENCH_OFFSET, ...). */
  readonly vars: Readonly<Record<string, string>>
}

/** The JSON summary both generators print. */
export interface LoadSummary {
  readonly tool: Tool
  readonly requests: number
  readonly durationUs: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly meanMs: number
  readonly valid: number
  readonly expected: number
  readonly invalid: number
  readonly non2xx: number
  /** Single-use values taken from BENCH_FILE, over all threads. */
  readonly handed: number
  /** Most taken by one thread (the next run starts at offset + threads × this). */
  readonly handedMax: number
  readonly threads: number
  /** Times a thread found BENCH_FILE used up. */
  readonly exhausted: number
  readonly errors: {
    readonly connect: number
    readonly read: number
    readonly write: number
    readonly timeout: number
    readonly status: number
  }
  readonly statuses: Readonly<Record<string, number>>
  readonly samples: ReadonlyArray<string>
}

/** Socket-level failures (connect, read, write, timeout). */
export const socketErrors = (s: LoadSummary): number =>
  s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout

/** Run one load generator to completion (bounded: killed after duration + 30 s). */
export const run = async (spec: LoadSpec): Promise<LoadSummary> => {
  const timeoutS = 5
  const env = { ...process.env, ...spec.vars, BENCH_THREADS: String(spec.wrkThreads) }
  const command =
    spec.tool === "wrk"
      ? [
          "wrk",
          `-t${Math.min(spec.wrkThreads, spec.conns)}`,
          `-c${spec.conns}`,
          `-d${Math.max(1, Math.round(spec.durationS))}s`, // wrk takes whole seconds
          `--timeout`,
          `${timeoutS}s`,
          "-s",
          join(benchRoot, "lua", `${spec.kind}.lua`),
          spec.url
        ]
      : [process.execPath, join(benchRoot, "load", "autocannon.mjs")]
  if (spec.tool === "wrk") env.BENCH_THREADS = String(Math.min(spec.wrkThreads, spec.conns))
  else
    Object.assign(env, {
      BENCH_URL: spec.url,
      BENCH_KIND: spec.kind,
      BENCH_CONNS: String(spec.conns),
      BENCH_DURATION: String(spec.durationS),
      BENCH_TIMEOUT: String(timeoutS)
    })
  const child = spawnGroup({
    command,
    cwd: benchRoot,
    env,
    cpu: spec.cpu,
    stdout: "pipe",
    stderr: "pipe"
  })
  const r = await collect(child, (spec.durationS + 30) * 1000)
  const line = r.stdout.split("\n").find((l) => l.startsWith("BENCH_JSON "))
  if (line === undefined) {
    throw new Error(
      `${spec.tool} ${r.timedOut ? "timed out" : `exited with ${r.code}`} without a summary: ${(r.stderr || r.stdout).slice(0, 500)}`
    )
  }
  return JSON.parse(line.slice("BENCH_JSON ".length)) as LoadSummary
}

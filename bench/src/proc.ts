/**
 * Processes: spawning pinned to a CPU in their own process group, stopping by that
 * group (never by name), finding the process that really listens, and reading its
 * RSS and CPU time from /proc.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { createServer } from "node:net"
import { cpus } from "node:os"

/** Whether `taskset` exists and the machine has the CPUs asked for. */
export const canPin = (cpuIds: ReadonlyArray<string>): boolean => {
  try {
    execFileSync("taskset", ["-V"], { stdio: "ignore" })
  } catch {
    return false
  }
  const n = cpus().length
  return cpuIds.every((c) => c.split(/[,-]/).every((id) => Number(id) < n))
}

/** A free TCP port on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      s.close(() => resolve(port))
    })
  })

const live = new Set<ChildProcess>()

/** Kill every process group this module started (on exit or interrupt). */
export const killAll = (): void => {
  for (const child of live) {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {}
    }
  }
  live.clear()
}
process.once("exit", killAll)

export interface SpawnOptions {
  readonly command: ReadonlyArray<string>
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** taskset CPU list, or null to run unpinned. */
  readonly cpu: string | null
  /** File descriptor (or "pipe"/"ignore") for stdout and stderr. */
  readonly stdout: number | "pipe" | "ignore"
  readonly stderr: number | "pipe" | "ignore"
}

/** Spawn in a new process group (taskset execs, so the pid is the command's own). */
export const spawnGroup = (o: SpawnOptions): ChildProcess => {
  const [file, ...args] = o.cpu === null ? o.command : ["taskset", "-c", o.cpu, ...o.command]
  if (file === undefined) throw new Error("empty command")
  const child = spawn(file, args, {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: ["ignore", o.stdout, o.stderr]
  })
  live.add(child)
  child.once("exit", () => live.delete(child))
  return child
}

/** Wait for a child to exit, at most `ms`; true when it did. */
export const waitExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true)
    const timer = setTimeout(() => resolve(false), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

/** SIGTERM the child's process group, then SIGKILL it if it is still there after `graceMs`. */
export const stopGroup = async (child: ChildProcess, graceMs = 10_000): Promise<void> => {
  if (child.pid === undefined) return
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), s)
    } catch {}
  }
  if (child.exitCode === null && child.signalCode === null) {
    signal("SIGTERM")
    if (!(await waitExit(child, graceMs))) {
      signal("SIGKILL")
      await waitExit(child, 5_000)
    }
  }
  // Anything the command left behind in its group
  signal("SIGKILL")
  live.delete(child)
}

/** Collect a child's stdout and stderr, killing its group after `timeoutMs`. */
export const collect = async (
  child: ChildProcess,
  timeoutMs: number
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> => {
  let stdout = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d
  })
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d
  })
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
  const done = await waitExit(child, timeoutMs)
  if (!done) await stopGroup(child, 2_000)
  const code = await exited
  return { code, stdout, stderr, timedOut: !done }
}

/** Every live process of a process group (read from /proc/<pid>/stat), ascending. */
export const pidsInGroup = (pgid: number): Array<number> => {
  const pids: Array<number> = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // fields[0] is state, [1] ppid, [2] pgrp
      if (Number(fields[2]) === pgid) pids.push(Number(name))
    } catch {}
  }
  return pids
}

const listeningInodes = (port: number): Set<string> => {
  const inodes = new Set<string>()
  const hex = port.toString(16).toUpperCase().padStart(4, "0")
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string
    try {
      text = readFileSync(table, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/)
      // local_address is f[1] (ADDR:PORT), st is f[3] (0A = LISTEN), inode is f[9]
      if (f.length > 9 && f[1]?.endsWith(`:${hex}`) && f[3] === "0A" && f[9] !== undefined) inodes.add(f[9])
    }
  }
  return inodes
}

/**
 * The pid holding the listening socket on `port` among the process group of `child`
 * (the server itself, not a wrapper such as pnpm); the child's pid if none is found.
 */
export const listeningPid = (child: ChildProcess, port: number): number => {
  const fallback = child.pid as number
  const inodes = listeningInodes(port)
  if (inodes.size === 0) return fallback
  for (const pid of pidsInGroup(fallback)) {
    let fds: Array<string>
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
        if (m !== null && inodes.has(m[1] as string)) return pid
      } catch {}
    }
  }
  return fallback
}

/** VmRSS of a process in MiB, or null when it is gone. */
const rssMiB = (pid: number): number | null => {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m === null ? null : Number(m[1]) / 1024
  } catch {
    return null
  }
}

let clockTicks: number | undefined
const ticksPerSecond = (): number => {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
    } catch {
      clockTicks = 100
    }
  }
  return clockTicks
}

/** User + system CPU seconds a process has used, or null when it is gone. */
const cpuSeconds = (pid: number): number | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // after the comm: state(0) ... utime is field 14 of stat, index 11 here; stime index 12
    return (Number(f[11]) + Number(f[12])) / ticksPerSecond()
  } catch {
    return null
  }
}

/** The sum of the values measured, or null when there is none (every process gone). */
export const sumMeasured = (values: ReadonlyArray<number | null>): number | null => {
  const known = values.filter((v): v is number => v !== null)
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0)
}

/** VmRSS summed over every process of a group (a cluster's primary and its workers), MiB. */
export const groupRssMiB = (pgid: number): number | null => sumMeasured(pidsInGroup(pgid).map(rssMiB))

/** CPU seconds of each process still there, by pid (the ones gone are left out). */
export const cpuByPid = (pids: ReadonlyArray<number>): Map<number, number> => {
  const out = new Map<number, number>()
  for (const pid of pids) {
    const s = cpuSeconds(pid)
    if (s !== null) out.set(pid, s)
  }
  return out
}

/**
 * CPU seconds used between two readings of `cpuByPid`: a process present at both counts its
 * difference, one that appeared in between counts all of its time (it started during the run),
 * one that disappeared counts nothing after the first reading (its time is lost).
 */
export const cpuBetween = (
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>
): number => {
  let total = 0
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0)
  return total
}

/** The CPUs a process may run on (`Cpus_allowed_list` of /proc/<pid>/status), or null. */
export const allowedCpus = (pid: number): string | null => {
  try {
    const m = /^Cpus_allowed_list:\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m === null ? null : (m[1] as string)
  } catch {
    return null
  }
}

/** Sample a process's RSS every `everyMs` until stopped; keeps the maximum and the series. */
export const sampleRss = (pid: number, everyMs = 200) => sampleMiB(() => rssMiB(pid), everyMs)

/** Sample a measure in MiB (an RSS, a group's summed RSS) every `everyMs` until stopped. */
export const sampleMiB = (measure: () => number | null, everyMs = 200) => {
  const started = Date.now()
  const series: Array<[number, number]> = []
  let max: number | null = null
  const take = () => {
    const v = measure()
    if (v === null) return
    series.push([(Date.now() - started) / 1000, Math.round(v * 10) / 10])
    if (max === null || v > max) max = v
  }
  take()
  const timer = setInterval(take, everyMs)
  return {
    stop: (): { maxMiB: number | null; series: Array<[number, number]> } => {
      take()
      clearInterval(timer)
      return { maxMiB: max, series }
    }
  }
}

import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Commands from "../src/Commands.js"

/** apps/server */
export const serverDir = join(dirname(fileURLToPath(import.meta.url)), "..")
/** The repository root. */
export const repoRoot = join(serverDir, "..", "..")

/** A fresh temporary directory, removed by `cleanup`. */
export const tempDir = (): { dir: string; cleanup: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "latchkey-test-"))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A port free right now on 127.0.0.1. */
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

const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const k of ["DATABASE_URL", "LATCHKEY_SECRET", "LATCHKEY_ISSUER", "PORT", "LATCHKEY_DB", "INIT_CWD"])
    delete env[k]
  return env
}

/** A JSON log line of the server. */
export interface LogLine {
  readonly msg?: string
  readonly port?: number
  /** The node:cluster id of the worker that wrote it (LATCHKEY_WORKERS above 1). */
  readonly worker?: number
  readonly pid?: number
  readonly reqId?: string
  readonly signal?: string
  readonly [field: string]: unknown
}

/** One line of output as a log line; undefined for anything else (a partial line included). */
const parseLine = (line: string): LogLine | undefined => {
  if (!line.startsWith("{")) return undefined
  try {
    return JSON.parse(line) as LogLine
  } catch {
    return undefined
  }
}

/** The JSON log lines of a process's output. */
export const logLines = (out: string): Array<LogLine> =>
  out.split("\n").flatMap((l) => {
    const line = parseLine(l)
    return line === undefined ? [] : [line]
  })

/** A server process and what it printed. */
export interface ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly base: string
  readonly stdout: () => string
  readonly stderr: () => string
  /** The JSON log lines printed so far. */
  readonly lines: () => ReadonlyArray<LogLine>
  /**
   * The first log line, printed so far or later, that `match` accepts; fails after `timeoutMs`
   * (10 s by default) or once the process has exited without printing it.
   */
  readonly waitForLine: (match: (line: LogLine) => boolean, timeoutMs?: number) => Promise<LogLine>
  /** Call `listener` whenever the process prints or exits; returns the unsubscribe. */
  readonly subscribe: (listener: () => void) => () => void
  /** The exit code, once the process has exited and all its output is read. */
  readonly exited: Promise<number | null>
  /** SIGTERM and wait for the exit code. */
  readonly stop: () => Promise<number | null>
}

const isListening = (line: LogLine): boolean =>
  line.msg?.startsWith("listening") === true && typeof line.port === "number"

/**
 * Spawn the server (by default `src/main.ts` with tsx, on the workspace packages' sources; or
 * the given node arguments, e.g. `["dist/main.js"]`) and wait for its "listening" log line, and
 * the line `ready` accepts (e.g. the cluster's "all 2 workers ready"), `timeoutMs` (10 s) at most.
 */
export const spawnServer = async (
  env: Record<string, string>,
  nodeArgs: ReadonlyArray<string> = ["--conditions=@latchkey/source", "--import", "tsx", "src/main.ts"],
  options: { readonly ready?: (line: LogLine) => boolean; readonly timeoutMs?: number } = {}
): Promise<ServerProcess> => {
  const child = spawn(process.execPath, [...nodeArgs], {
    cwd: serverDir,
    env: { ...baseEnv(), HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  let partial = ""
  let exited = false
  const parsed: Array<LogLine> = []
  const listeners = new Set<() => void>()
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d
    const parts = (partial + d).split("\n")
    partial = parts.pop() ?? ""
    for (const part of parts) {
      const line = parseLine(part)
      if (line !== undefined) parsed.push(line)
    }
    for (const l of listeners) l()
  })
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d
  })
  // "close": the process has exited and its output is all read (a cluster's workers share it)
  const exit = new Promise<number | null>((resolve) =>
    child.once("close", (code) => {
      exited = true
      resolve(code)
      for (const l of listeners) l()
    })
  )
  const waitForLine = (match: (line: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> =>
    new Promise((resolve, reject) => {
      let scanned = 0
      const done = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      const check = () => {
        for (; scanned < parsed.length; scanned++) {
          const line = parsed[scanned] as LogLine
          if (match(line)) {
            done()
            resolve(line)
            return
          }
        }
        if (exited) {
          done()
          reject(new Error(`server exited with ${child.exitCode ?? child.signalCode}:\n${out}\n${err}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`no such log line within ${timeoutMs} ms:\n${out}\n${err}`))
      }, timeoutMs)
      listeners.add(check)
      check()
    })
  if (options.ready !== undefined) await waitForLine(options.ready, options.timeoutMs)
  const port = (await waitForLine(isListening, options.timeoutMs)).port as number
  return {
    child,
    port,
    base: env.LATCHKEY_ISSUER ?? `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    lines: () => parsed,
    exited: exit,
    waitForLine,
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      const code = await exit
      clearTimeout(timer)
      return code
    }
  }
}

/**
 * Wait until `condition` holds, checked now and whenever one of `servers` prints or exits;
 * fails after `timeoutMs` (10 s by default).
 */
export const waitUntil = (
  servers: ReadonlyArray<ServerProcess>,
  condition: () => boolean,
  what: string,
  timeoutMs = 10_000
): Promise<void> =>
  new Promise((resolve, reject) => {
    const unsubscribe: Array<() => void> = []
    const done = () => {
      clearTimeout(timer)
      for (const u of unsubscribe) u()
    }
    const check = () => {
      if (!condition()) return
      done()
      resolve()
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`not within ${timeoutMs} ms: ${what}`))
    }, timeoutMs)
    for (const s of servers) unsubscribe.push(s.subscribe(check))
    check()
  })

/** Spawn a process to completion (bounded), collecting its output. */
export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number }
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: { ...baseEnv(), ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${command} ${args.join(" ")} timed out:\n${stdout}\n${stderr}`))
    }, options.timeoutMs ?? 30_000)
    child.once("error", reject)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(options.input ?? "")
  })

/** Run the CLI directly (node + tsx) against a database. */
export const cli = (
  db: string,
  args: ReadonlyArray<string>,
  input?: string,
  env: Record<string, string> = {}
) =>
  runProcess(process.execPath, ["--conditions=@latchkey/source", "--import", "tsx", "src/cli.ts", ...args], {
    cwd: serverDir,
    env: { LATCHKEY_DB: db, ...env },
    ...(input !== undefined ? { input } : {})
  })

/**
 * Run the CLI's commands in this process (the same code as `src/cli.ts`, without a process start),
 * with `input` on its standard input.
 */
export const cliInProcess = async (
  db: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  input = ""
): Promise<{ code: number; stdout: string; stderr: string }> => {
  let stdout = ""
  let stderr = ""
  const code = await Commands.run(args, {
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    },
    env: { LATCHKEY_DB: db, ...env },
    readStdin: async () => input
  })
  return { code, stdout, stderr }
}

/** Create an application with the CLI; returns its JSON. */
export const createApp = async (
  db: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): Promise<{ app_key: string; app_secret: string; redirect_uris: Array<string> }> => {
  const r = await cliInProcess(db, ["app", "create", ...args, "--json"], env)
  if (r.code !== 0) throw new Error(`app create failed (${r.code}): ${r.stderr}`)
  return JSON.parse(r.stdout) as { app_key: string; app_secret: string; redirect_uris: Array<string> }
}

/** Create a user with the CLI: in a process of its own, or `inProcess` (`cliInProcess`, no process start). */
export const createUser = async (
  db: string,
  username: string,
  password: string,
  env: Record<string, string> = {},
  inProcess = false
) => {
  const args = ["user", "create", "--username", username, "--password", password, "--json"]
  const r = inProcess ? await cliInProcess(db, args, env) : await cli(db, args, undefined, env)
  if (r.code !== 0) throw new Error(`user create failed (${r.code}): ${r.stderr}`)
  return JSON.parse(r.stdout) as { user_id: string; username: string }
}

export const basic = (key: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(key)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** A minimal cookie-keeping fetch for driving the pages. */
export class Browser {
  readonly cookies = new Map<string, string>()
  /** `headers` go with every request (e.g. `connection: close`, a new connection each time). */
  constructor(readonly headers: Record<string, string> = {}) {}
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers: Record<string, string> = {
      accept: "text/html",
      ...this.headers,
      ...(init.headers as Record<string, string>)
    }
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    const res = await fetch(url, { ...init, headers, redirect: "manual" })
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(";")[0] as string
      const eq = pair.indexOf("=")
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    return res
  }
  postForm(url: string, fields: Record<string, string>): Promise<Response> {
    return this.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString()
    })
  }
}

/** The first form of a page with its hidden fields. */
export const formOf = (
  html: string,
  skipSwitch = true
): { action: string; fields: Record<string, string> } => {
  for (const m of html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const fields: Record<string, string> = {}
    for (const i of (m[2] as string).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields[i[1] as string] = (i[2] as string).replace(/&amp;/g, "&")
    }
    if (skipSwitch && fields.switch_account !== undefined) continue
    return { action: (m[1] as string).replace(/&amp;/g, "&"), fields }
  }
  throw new Error(`no form in page: ${html.slice(0, 200)}`)
}

/**
 * Drive the sign-in and consent pages with fetch: GET the authorize URL, sign
 * in, Allow; returns the final redirect to the client.
 */
export const signInAndAllow = async (
  base: string,
  authorizeUrl: string,
  user: { username: string; password: string }
): Promise<string> => {
  const origin = new URL(base).origin
  const browser = new Browser()
  const page = await browser.fetch(authorizeUrl)
  const login = formOf(await page.text())
  const signedIn = await browser.postForm(origin + login.action, { ...login.fields, ...user })
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`)
  const next = await browser.fetch(origin + (signedIn.headers.get("location") as string))
  if (next.status === 302) return next.headers.get("location") as string
  const consent = formOf(await next.text())
  const allowed = await browser.postForm(origin + consent.action, { ...consent.fields, decision: "allow" })
  if (allowed.status !== 303) throw new Error(`consent answered ${allowed.status}`)
  return allowed.headers.get("location") as string
}

/**
 * Deployments of the scale-out scenarios: two server processes, or one server with
 * LATCHKEY_WORKERS, on a fresh store (by default one SQLite file in a new temporary directory;
 * any other store given by its environment, e.g. `{ DATABASE_URL }`). The servers are the
 * compiled `dist/main.js` under plain node, as in production.
 */
import { join } from "node:path"
import { freePort, type LogLine, type ServerProcess, spawnServer, tempDir, waitUntil } from "../helpers.js"
import type { Deployment, Instances } from "./scenarios.js"

/** A fresh, empty store for one deployment. */
export interface Store {
  /** The environment that selects it, for the servers and the CLI. */
  readonly env: Record<string, string>
  /** Delete it, once every process using it has stopped. */
  readonly cleanup: () => Promise<void> | void
}

/** One SQLite file in a new temporary directory (the file does not exist yet). */
const sqliteStore = (): Store => {
  const tmp = tempDir()
  return { env: { LATCHKEY_DB: join(tmp.dir, "shared.sqlite") }, cleanup: tmp.cleanup }
}

/** Plain node: no NODE_OPTIONS from the test runner (no loader, no conditions). */
export const compiled = { env: { NODE_OPTIONS: "" }, args: ["dist/main.js"] } as const

/** `n` distinct ports free right now on 127.0.0.1 (bounded retries). */
export const freePorts = async (n: number): Promise<Array<number>> => {
  const ports = new Set<number>()
  for (let tries = 0; ports.size < n && tries < 10 * n; tries++) ports.add(await freePort())
  if (ports.size < n) throw new Error(`no ${n} distinct free ports`)
  return [...ports]
}

/**
 * The label of the instance that wrote the `request` line of each id, once every id has one:
 * `label(server, line)` names the instance (a process, or a worker from the line's `worker`).
 */
export const requestLog =
  (servers: ReadonlyArray<ServerProcess>, label: (server: number, line: LogLine) => string) =>
  async (ids: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
    const wanted = new Set(ids)
    const found = new Map<string, string>()
    const all = () => {
      servers.forEach((s, k) => {
        for (const line of s.lines())
          if (line.msg === "request" && line.reqId !== undefined && wanted.has(line.reqId))
            found.set(line.reqId, label(k, line))
      })
      return found.size === wanted.size
    }
    await waitUntil(servers, all, `request log lines of ${ids.join(", ")}`)
    return ids.map((id) => found.get(id) as string)
  }

/**
 * Two server processes on one store, on two ports of 127.0.0.1, started at the same time on the
 * empty store, with one issuer (A's address, as if A's were the public one).
 */
export const twoProcesses =
  (store: () => Promise<Store> | Store = sqliteStore) =>
  async (): Promise<Deployment> => {
    const { env: storeEnv, cleanup } = await store()
    return {
      storeEnv,
      cleanup,
      start: async (env): Promise<Instances> => {
        const [portA, portB] = (await freePorts(2)) as [number, number]
        const issuer = `http://127.0.0.1:${portA}`
        const started = await Promise.allSettled(
          [portA, portB].map((port) =>
            spawnServer(
              { ...compiled.env, ...env, ...storeEnv, PORT: String(port), LATCHKEY_ISSUER: issuer },
              compiled.args,
              { timeoutMs: 30_000 }
            )
          )
        )
        const [A, B] = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []))
        if (A === undefined || B === undefined) {
          await Promise.all([A?.stop(), B?.stop()])
          throw started.flatMap((r) => (r.status === "rejected" ? [r.reason] : []))[0]
        }
        return {
          a: `http://127.0.0.1:${A.port}`,
          b: `http://127.0.0.1:${B.port}`,
          survivor: `http://127.0.0.1:${B.port}`,
          killA: async () => {
            A.child.kill("SIGKILL")
            await A.exited
          },
          answeredBy: requestLog([A, B], (k) => (k === 0 ? "A" : "B")),
          stop: async () => {
            await Promise.all([A.stop(), B.stop()])
          }
        }
      }
    }
  }

/** The workers the primary started that have not died or stopped since, by its log lines. */
export const liveWorkers = (server: ServerProcess): Array<{ worker: number; pid: number }> => {
  const gone = new Set(
    server
      .lines()
      .filter((l) => l.worker !== undefined && /^worker (died|stopped)/.test(l.msg ?? ""))
      .map((l) => l.pid)
  )
  return server
    .lines()
    .filter((l) => l.msg === "worker started" && !gone.has(l.pid))
    .map((l) => ({ worker: l.worker as number, pid: l.pid as number }))
}

/** The cluster's line once all its workers are ready. */
export const allReady = (line: LogLine): boolean => /^all \d+ workers ready$/.test(line.msg ?? "")

/**
 * Kill -9 a worker of a server started with LATCHKEY_WORKERS and wait (15 s at most) until the
 * primary has restarted it and the new worker listens; returns the new worker's id.
 */
export const killWorker = async (server: ServerProcess, victim: { worker: number; pid: number }) => {
  const newest = Math.max(
    ...server.lines().flatMap((l) => (l.msg === "worker started" ? [l.worker as number] : []))
  )
  process.kill(victim.pid, "SIGKILL")
  await server.waitForLine((l) => l.msg === "worker died: restarting it" && l.pid === victim.pid, 15_000)
  const started = await server.waitForLine(
    (l) => l.msg === "worker started" && (l.worker as number) > newest,
    15_000
  )
  await server.waitForLine(
    (l) => l.msg?.startsWith("listening") === true && l.worker === started.worker,
    15_000
  )
  return started.worker as number
}

/**
 * One server with LATCHKEY_WORKERS=`workers` on one store: A and B are the same address, and
 * the primary hands each new connection to the next worker (the scenarios open one per request);
 * the instance of a request is the `worker` of its log line. Killing A kills one worker.
 */
export const clusterOf =
  (workers: number, store: () => Promise<Store> | Store = sqliteStore) =>
  async (): Promise<Deployment> => {
    const { env: storeEnv, cleanup } = await store()
    return {
      storeEnv,
      cleanup,
      start: async (env): Promise<Instances> => {
        const [port] = (await freePorts(1)) as [number]
        const base = `http://127.0.0.1:${port}`
        const s = await spawnServer(
          {
            ...compiled.env,
            ...env,
            ...storeEnv,
            PORT: String(port),
            LATCHKEY_ISSUER: base,
            LATCHKEY_WORKERS: String(workers)
          },
          compiled.args,
          { ready: allReady, timeoutMs: 30_000 }
        )
        return {
          a: base,
          b: base,
          survivor: base,
          killA: async () => {
            await killWorker(s, liveWorkers(s)[0] as { worker: number; pid: number })
          },
          answeredBy: requestLog([s], (_, line) => `worker ${line.worker}`),
          stop: async () => {
            await s.stop()
          }
        }
      }
    }
  }

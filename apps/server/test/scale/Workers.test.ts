/**
 * LATCHKEY_WORKERS: the compiled server as a node:cluster primary. The workers share the port
 * and log their id, a killed worker is replaced (at a bounded rate), signals stop every worker
 * gracefully, and a server that cannot start exits 1 instead of restarting in a loop.
 */
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Cluster from "../../src/Cluster.js"
import * as Env from "../../src/Env.js"
import { type LogLine, runProcess, type ServerProcess, serverDir, spawnServer, tempDir } from "../helpers.js"
import { allReady, compiled, killWorker, liveWorkers, requestLog } from "./deployments.js"

const tmp = tempDir()
const started: Array<ServerProcess> = []
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()))
  tmp.cleanup()
})

const startCluster = async (name: string) => {
  const server = await spawnServer(
    { ...compiled.env, LATCHKEY_DB: join(tmp.dir, `${name}.sqlite`), PORT: "0", LATCHKEY_WORKERS: "2" },
    compiled.args,
    { ready: allReady, timeoutMs: 30_000 }
  )
  started.push(server)
  return server
}

/** `n` health checks, each on a new connection (the primary hands connections to workers in turn). */
const healthChecks = async (base: string, n: number): Promise<Array<string>> => {
  const ids: Array<string> = []
  for (let k = 0; k < n; k++) {
    const res = await fetch(`${base}/healthz`, { headers: { connection: "close" } })
    assert.strictEqual(res.status, 200)
    ids.push(res.headers.get("x-request-id") ?? "")
  }
  return ids
}

describe("LATCHKEY_WORKERS", () => {
  it("is 1 by default, a whole number from 1 to 64", () => {
    assert.strictEqual(Env.read({}).workers, 1)
    assert.strictEqual(Env.read({ LATCHKEY_WORKERS: "" }).workers, 1)
    assert.strictEqual(Env.read({ LATCHKEY_WORKERS: "4" }).workers, 4)
    assert.strictEqual(Env.read({ LATCHKEY_WORKERS: "64" }).workers, 64)
    for (const raw of ["0", "65", "-1", "1.5", "two", "2x"]) {
      assert.throws(
        () => Env.read({ LATCHKEY_WORKERS: raw }),
        Env.EnvError,
        /^LATCHKEY_WORKERS must be a whole number between 1 and 64/,
        raw
      )
    }
  })

  it("needs a database the workers share", () => {
    assert.throws(
      () => Env.read({ LATCHKEY_WORKERS: "2", LATCHKEY_DB: ":memory:" }),
      Env.EnvError,
      /^LATCHKEY_WORKERS above 1 needs a database the workers share/
    )
    assert.strictEqual(Env.read({ LATCHKEY_WORKERS: "1", LATCHKEY_DB: ":memory:" }).workers, 1)
  })
})

describe("restart rate", () => {
  const policy = Cluster.restartPolicy(2)

  it("allows twice the number of workers restarts a minute at once", () => {
    assert.deepStrictEqual(policy, { max: 4, windowMs: 60_000 })
    assert.strictEqual(Cluster.restartDelay([], 1_000, policy), 0)
    assert.strictEqual(Cluster.restartDelay([1_000, 2_000, 3_000], 4_000, policy), 0)
  })

  it("delays a restart past the limit until the oldest of the last ones is a minute old", () => {
    assert.strictEqual(Cluster.restartDelay([1_000, 2_000, 3_000, 4_000], 5_000, policy), 56_000)
    // restarts scheduled in the future count too: a crash loop cannot queue restarts at once
    assert.strictEqual(Cluster.restartDelay([2_000, 3_000, 4_000, 61_000], 5_000, policy), 57_000)
    assert.strictEqual(Cluster.restartDelay([1_000, 2_000, 3_000, 4_000], 61_000, policy), 0)
  })
})

describe("LATCHKEY_WORKERS=2, compiled, under plain node", () => {
  it("both workers serve the one port and log their id; a killed worker is replaced and serves; Ctrl-C (SIGINT twice) stops them all gracefully with exit code 0", async () => {
    const server = await startCluster("serve")
    const byWorker = requestLog([server], (_, line) => String(line.worker))
    const first = await byWorker(await healthChecks(server.base, 4))
    assert.sameMembers(
      [...new Set(first)],
      liveWorkers(server).map((w) => String(w.worker))
    )
    const replacement = await killWorker(server, liveWorkers(server)[0] as { worker: number; pid: number })
    const after = new Set(await byWorker(await healthChecks(server.base, 4)))
    assert.isTrue(after.has(String(replacement)), [...after].join(","))
    assert.strictEqual(after.size, 2)

    // from the terminal and relayed by pnpm: one request to stop
    const serving = liveWorkers(server).map((w) => w.worker)
    server.child.kill("SIGINT")
    server.child.kill("SIGINT")
    assert.strictEqual(await server.exited, 0, server.stdout())
    const lines = server.lines()
    assert.strictEqual(lines.filter((l) => l.msg === "signal received: stopping the workers").length, 1)
    assert.sameMembers(
      lines.filter((l) => l.msg === "stopped" && l.worker !== undefined).map((l) => l.worker),
      serving
    )
    // every line a worker wrote carries its id; the primary's last line none
    for (const l of lines.filter((l) => l.msg === "request" || l.msg?.startsWith("listening") === true))
      assert.isNumber(l.worker)
    assert.strictEqual(lines.at(-1)?.msg, "stopped")
    assert.isUndefined(lines.at(-1)?.worker)
    assert.strictEqual(server.stderr(), "")
  }, 60_000)

  it("restarts crashing workers at most 4 times a minute, then delays; a pending restart does not hold up SIGTERM", async () => {
    const server = await startCluster("crash-loop")
    const died = (pid: number) =>
      server.waitForLine((l) => l.msg?.startsWith("worker died") === true && l.pid === pid)
    const answers: Array<string> = []
    for (let k = 0; k < 5; k++) {
      // the newest worker: after the first kill, a replacement that may still be starting
      const victim = liveWorkers(server).at(-1) as { worker: number; pid: number }
      process.kill(victim.pid, "SIGKILL")
      answers.push((await died(victim.pid)).msg as string)
      if (k < 4)
        await server.waitForLine((l) => l.msg === "worker started" && (l.worker as number) > victim.worker)
    }
    assert.deepStrictEqual(answers, [
      ...Array.from({ length: 4 }, () => "worker died: restarting it"),
      "worker died: restart delayed (too many restarts)"
    ])
    const delayed = server.lines().find((l) => l.msg?.includes("delayed") === true) as LogLine
    assert.isAbove(delayed.delayMs as number, 0)
    assert.isAtMost(delayed.delayMs as number, 60_000)
    assert.strictEqual(liveWorkers(server).length, 1)
    assert.strictEqual(await server.stop(), 0, server.stdout())
    assert.strictEqual(server.lines().at(-1)?.msg, "stopped")
  }, 60_000)

  it("a worker that cannot start (the port is taken) stops the server with exit code 1, without restarts", async () => {
    const taken: Server = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const port = (taken.address() as { port: number }).port
      const r = await runProcess(process.execPath, compiled.args, {
        cwd: serverDir,
        env: {
          ...compiled.env,
          HOST: "127.0.0.1",
          LATCHKEY_DB: join(tmp.dir, "taken.sqlite"),
          PORT: String(port),
          LATCHKEY_WORKERS: "2"
        },
        timeoutMs: 30_000
      })
      assert.strictEqual(r.code, 1, r.stdout)
      assert.include(r.stdout, "could not start: a worker exited before it was ready")
      assert.notInclude(r.stdout, "restarting")
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()))
    }
  })

  it("the primary migrates the database before forking: when it cannot open it, no worker starts and the exit code is 1", async () => {
    // a directory is no database file
    const r = await runProcess(process.execPath, compiled.args, {
      cwd: serverDir,
      env: { ...compiled.env, LATCHKEY_DB: tmp.dir, PORT: "0", LATCHKEY_WORKERS: "2" },
      timeoutMs: 30_000
    })
    assert.strictEqual(r.code, 1, r.stdout)
    assert.include(r.stdout, "could not start")
    assert.notInclude(r.stdout, "worker started")
  })

  it("LATCHKEY_WORKERS=1 runs no cluster: the log lines carry no worker", async () => {
    const server = await spawnServer(
      { ...compiled.env, LATCHKEY_DB: join(tmp.dir, "one.sqlite"), PORT: "0", LATCHKEY_WORKERS: "1" },
      compiled.args
    )
    await healthChecks(server.base, 1)
    assert.strictEqual(await server.stop(), 0)
    assert.isFalse(server.lines().some((l) => "worker" in l || l.msg?.includes("workers") === true))
  })
})

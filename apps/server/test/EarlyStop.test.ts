/**
 * A stop requested during start-up is a clean exit (0), in one process and in a cluster's primary
 * or workers. Start-up is pinned: the database is a TCP server that accepts and never answers (or,
 * for the workers, a gate that carries the primary's migration to PostgreSQL and holds every later
 * connection), so the signal is sent while the process provably waits for its database.
 */
import { spawn } from "node:child_process"
import { connect, createServer, type Server, type Socket } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { type LogLine, logLines, serverDir } from "./helpers.js"
import { createDatabase, serverUrl } from "./postgres/database.js"

/**
 * A TCP server on 127.0.0.1 that carries the first `carried` connections to `target` and holds
 * every later one open without a byte; `held` resolves at the first connection held.
 */
const gate = async (carried: number, target?: { host: string; port: number }) => {
  const sockets = new Set<Socket>()
  let accepted = 0
  let onHeld: () => void = () => {}
  const held = new Promise<void>((resolve) => {
    onHeld = resolve
  })
  const server: Server = createServer((client) => {
    sockets.add(client)
    client.on("error", () => client.destroy())
    if (accepted++ < carried && target !== undefined) {
      const upstream = connect(target.port, target.host)
      sockets.add(upstream)
      upstream.on("error", () => upstream.destroy())
      client.pipe(upstream).pipe(client)
      return
    }
    onHeld()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    held,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** Start the server (from its sources) with `env`; its exit code and log lines once it has exited. */
const start = (env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--conditions=@latchkey/source", "--import", "tsx", "src/main.ts"], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      HOST: "127.0.0.1",
      PORT: "0",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d
  })
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    err += d
  })
  const exited = new Promise<{ code: number | null; lines: Array<LogLine>; stderr: string }>((resolve) =>
    child.once("close", (code) => resolve({ code, lines: logLines(out), stderr: err }))
  )
  return { child, exited, lines: () => logLines(out) }
}

const messages = (lines: ReadonlyArray<LogLine>) => lines.map((l) => l.msg)

describe("SIGTERM during start-up", () => {
  it("one process waiting for its database exits 0, having served nothing", async () => {
    const db = await gate(0)
    try {
      const server = start({ DATABASE_URL: `postgres://latchkey:pw@127.0.0.1:${db.port}/latchkey` })
      await db.held
      server.child.kill("SIGTERM")
      const { code, lines, stderr } = await server.exited
      assert.strictEqual(code, 0, stderr)
      assert.include(messages(lines), "signal received during start-up: exiting")
      assert.notInclude(messages(lines), "could not start")
      assert.isFalse(lines.some((l) => l.msg?.startsWith("listening") === true))
    } finally {
      await db.close()
    }
  })

  it("a cluster's primary waiting for the migration exits 0 without forking a worker", async () => {
    const db = await gate(0)
    try {
      const server = start({
        DATABASE_URL: `postgres://latchkey:pw@127.0.0.1:${db.port}/latchkey`,
        LATCHKEY_WORKERS: "2"
      })
      await db.held
      server.child.kill("SIGTERM")
      const { code, lines, stderr } = await server.exited
      assert.strictEqual(code, 0, stderr)
      assert.notInclude(messages(lines), "worker started")
      assert.notInclude(messages(lines), "could not start")
    } finally {
      await db.close()
    }
  })

  it.skipIf(serverUrl === undefined)(
    "a cluster's workers waiting for their database stop with 0 and so does the primary",
    async () => {
      const database = await createDatabase()
      // The primary's migration is the first connection; every worker's is held
      const db = await gate(1, { host: database.host, port: database.port })
      try {
        const server = start({ DATABASE_URL: database.via("127.0.0.1", db.port), LATCHKEY_WORKERS: "2" })
        await db.held
        assert.strictEqual(server.lines().filter((l) => l.msg === "worker started").length, 2)
        server.child.kill("SIGTERM")
        const { code, lines, stderr } = await server.exited
        assert.strictEqual(code, 0, `${stderr}\n${JSON.stringify(lines, null, 1)}`)
        const stopped = lines.filter((l) => l.msg === "worker stopped")
        assert.strictEqual(stopped.length, 2)
        assert.isTrue(stopped.every((l) => l.code === 0 || l.signal === "SIGTERM"))
        assert.notInclude(messages(lines), "could not start: a worker exited before it was ready")
        assert.notInclude(messages(lines), `all 2 workers ready`)
      } finally {
        await db.close()
        await database.drop()
      }
    },
    30_000
  )
})

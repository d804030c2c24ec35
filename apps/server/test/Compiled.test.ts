/**
 * What production runs: the compiled server and CLI (`dist/`, built by turbo before this
 * package's tests) under plain node, without tsx and without the "@latchkey/source" export
 * condition, so the workspace packages resolve to their compiled `dist` too (a `.ts` file would
 * fail to load: ERR_UNKNOWN_FILE_EXTENSION).
 */
import { existsSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { logLines, runProcess, serverDir, spawnServer, tempDir } from "./helpers.js"

const tmp = tempDir()
afterAll(() => tmp.cleanup())

/** Plain node: no NODE_OPTIONS from the test runner (no loader, no conditions). */
const plain = { NODE_OPTIONS: "" }

const startCompiled = (name: string) =>
  spawnServer({ ...plain, LATCHKEY_DB: join(tmp.dir, `${name}.sqlite`), PORT: "0" }, ["dist/main.js"])

/** A token request whose body is still missing its last bytes: in flight until `finish`. */
const inFlight = async (port: number): Promise<{ finish: () => void; answer: Promise<string> }> => {
  const body = "grant_type=password&x=1"
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => resolve(s))
    s.once("error", reject)
  })
  socket.write(
    "POST /oauth2/oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n` +
      body.slice(0, 5)
  )
  const answer = new Promise<string>((resolve) => {
    let data = ""
    socket.setEncoding("utf8").on("data", (d: string) => {
      data += d
    })
    socket.once("close", () => resolve(data))
    socket.once("error", () => resolve(data))
  })
  return { finish: () => socket.end(body.slice(5)), answer }
}

describe("the compiled server under plain node", () => {
  it("dist/main.js and dist/cli.js are built", () => {
    for (const file of ["main.js", "cli.js"])
      assert.isTrue(
        existsSync(join(serverDir, "dist", file)),
        `dist/${file} is missing: build first (pnpm -w run build; turbo's test task depends on build)`
      )
  })

  it("starts, answers /healthz, and stops gracefully on SIGTERM with exit code 0", async () => {
    const server = await startCompiled("health")
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/healthz`)
      assert.strictEqual(res.status, 200)
      assert.deepStrictEqual(await res.json(), { status: "ok" })
    } finally {
      const code = await server.stop()
      assert.strictEqual(code, 0, server.stderr())
    }
    const msgs = logLines(server.stdout()).map((l) => l.msg ?? "")
    assert.isTrue(
      msgs.some((m) => m.startsWith("shutting down")),
      server.stdout()
    )
    assert.strictEqual(msgs.at(-1), "stopped")
    assert.strictEqual(server.stderr(), "")
  })

  it("the same signal twice within a moment (Ctrl-C under pnpm: the terminal's and pnpm's) is one graceful stop", async () => {
    const server = await startCompiled("ctrl-c")
    const request = await inFlight(server.port)
    await new Promise((r) => setTimeout(r, 100))
    server.child.kill("SIGINT") // from the terminal
    await new Promise((r) => setTimeout(r, 20))
    server.child.kill("SIGINT") // relayed by pnpm
    await new Promise((r) => setTimeout(r, 300))
    assert.isNull(server.child.exitCode, "the server must wait for the request in flight")
    request.finish()
    assert.match(await request.answer, /^HTTP\/1\.1 \d{3} /)
    assert.strictEqual(await server.stop(), 0, server.stdout())
    const lines = logLines(server.stdout())
    assert.strictEqual(lines.filter((l) => l.msg === "signal received").length, 1)
    assert.isFalse(lines.some((l) => l.msg?.startsWith("second signal") === true))
    assert.strictEqual(lines.at(-1)?.msg, "stopped")
  })

  it("a second signal a while later still exits at once, with exit code 1", async () => {
    const server = await startCompiled("impatient")
    const request = await inFlight(server.port)
    await new Promise((r) => setTimeout(r, 100))
    server.child.kill("SIGINT")
    await new Promise((r) => setTimeout(r, 1200))
    assert.isNull(server.child.exitCode, "the server must wait for the request in flight")
    assert.strictEqual(await server.stop(), 1) // SIGTERM
    await request.answer
    assert.isTrue(
      logLines(server.stdout()).some((l) => l.msg === "second signal: exiting at once"),
      server.stdout()
    )
  })

  it("the CLI runs from dist/cli.js", async () => {
    const db = join(tmp.dir, "cli.sqlite")
    const created = await runProcess(
      process.execPath,
      ["dist/cli.js", "user", "create", "--username", "ada", "--password-stdin", "--json"],
      { cwd: serverDir, env: { ...plain, LATCHKEY_DB: db }, input: "a long password" }
    )
    assert.strictEqual(created.code, 0, created.stderr)
    assert.strictEqual((JSON.parse(created.stdout) as { username: string }).username, "ada")
    const listed = await runProcess(process.execPath, ["dist/cli.js", "user", "list", "--json"], {
      cwd: serverDir,
      env: { ...plain, LATCHKEY_DB: db }
    })
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.include(listed.stdout, '"ada"')
  })
})

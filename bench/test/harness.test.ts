/**
 * The harness end to end on the bare-http configuration: a second or two with a few
 * connections, once with the default generator (wrk when installed, else autocannon)
 * and once with autocannon. Only counts are checked, never timings. And the two durable-floor
 * baselines (durable-floor, durable-floor-pipelined) on a store seeded with the Latchkey CLI: a
 * valid token, its token and audit rows in the database once the answer arrived, a 401 for a
 * wrong secret, and a 503 for a batch whose insert fails. And the seeding: a password starting
 * with `-` still makes its user through the CLI.
 */
import { createHash } from "node:crypto"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ScryptHasher } from "@latchkey/node"
import BetterSqlite3 from "better-sqlite3"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { plan, runBench, waitReady } from "../src/harness.js"
import * as Knobs from "../src/knobs.js"
import * as Latchkey from "../src/latchkey.js"
import { detectTool } from "../src/load.js"
import { benchRoot } from "../src/paths.js"
import { freePort, spawnGroup, stopGroup, waitExit } from "../src/proc.js"
import * as Report from "../src/report.js"

const knobs = (loadgen: string) =>
  Knobs.read({
    SCENARIOS: "client_credentials,introspection",
    CONFIGS: "bare-http",
    ROUNDS: "1",
    DURATION: "2",
    WARMUP: "0",
    CONNS: "4",
    LOADGEN: loadgen
  })

describe("harness on bare-http", () => {
  for (const loadgen of ["auto", "autocannon"] as const) {
    it(`counts valid answers with ${loadgen === "auto" ? detectTool("auto") : loadgen}`, async () => {
      const result = await runBench(knobs(loadgen), { log: () => {} })
      expect(result.runs.map((r) => [r.scenario, r.config])).toEqual([
        ["client_credentials", "bare-http"],
        ["introspection", "bare-http"]
      ])
      for (const run of result.runs) {
        expect(run.problems).toEqual([])
        expect(run.valid).toBeGreaterThan(0)
        expect(run.invalid).toBe(0)
        expect(run.errors).toBe(0)
        expect(run.rssMaxMiB).toBeGreaterThan(0)
      }
      const md = Report.markdown(result)
      expect(md).toContain("| bare-http | client_credentials |")
    })
  }

  it("reads the knobs", () => {
    const k = Knobs.read({})
    expect(k.rounds).toBe(3)
    expect(k.duration).toBe(10)
    expect(k.warmup).toBe(3)
    expect(k.conns).toBe(50)
    expect(k.scenarios).not.toContain("big-store")
    expect(Knobs.read({ BIG: "1" }).scenarios).toContain("big-store")
    expect(() => Knobs.read({ SCENARIOS: "nope" })).toThrow(/unknown scenario/)
  })

  it("runs durable-floor and durable-floor-pipelined between oidc-provider and latchkey, on the seeded Latchkey store", () => {
    const steps = plan(Knobs.read({ SCENARIOS: "client_credentials" }))
    expect(steps.map((s) => s.config)).toEqual([
      "bare-http",
      "express-bare",
      "oidc-provider",
      "durable-floor",
      "durable-floor-pipelined",
      "latchkey",
      "latchkey-express",
      "latchkey-workers"
    ])
    expect(steps.find((s) => s.config === "durable-floor")?.store).toBe("base")
    expect(steps.find((s) => s.config === "durable-floor-pipelined")?.store).toBe("base")
    expect(steps.find((s) => s.config === "latchkey-workers")?.store).toBe("base")
    // The floors do client_credentials only
    const others = plan(
      Knobs.read({ SCENARIOS: "authorization_code,refresh_token,introspection,password-hammer" })
    )
    expect(others.some((s) => s.config.startsWith("durable-floor"))).toBe(false)
  })
})

describe("seeding through the CLI", () => {
  it("never generates a password starting with -", () => {
    for (let i = 0; i < 2_000; i++)
      expect(Latchkey.generatedPassword()).toMatch(/^[A-Za-z][A-Za-z0-9_-]{16}$/)
  })

  it("creates a user whose password starts with -, with exactly that password", async () => {
    const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-seed-"))
    try {
      const commands = await Latchkey.resolveCommands(dir)
      const db = join(dir, "seed.sqlite")
      const password = "--json -x"
      const user = await Latchkey.createUser(commands, { LATCHKEY_DB: db }, "dash", password, () => {})
      expect(user.username).toBe("dash")
      const sqlite = new BetterSqlite3(db, { readonly: true })
      try {
        const hash = sqlite.prepare("SELECT password_hash FROM users WHERE username = ?").pluck().get("dash")
        expect(typeof hash).toBe("string")
        expect(await ScryptHasher.verify(password, hash as string)).toBe(true)
        expect(await ScryptHasher.verify("--json", hash as string)).toBe(false)
      } finally {
        sqlite.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the durable floors", () => {
  let dir = ""
  let base: Latchkey.BaseSeed
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "latchkey-bench-floor-"))
    base = await Latchkey.seedBase(await Latchkey.resolveCommands(dir), dir, () => {})
  }, 120_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it.each(["durable-floor", "durable-floor-pipelined"] as const)(
    "%s answers a token once its token and audit rows are committed, 401 for a wrong secret, 503 for a failed batch",
    async (config) => {
      const db = join(dir, `${config}.sqlite`)
      Latchkey.copyStore(base.db, db)
      const port = await freePort()
      const logFile = join(dir, `${config}.log`)
      const logFd = openSync(logFile, "w")
      const server = spawnGroup({
        command: [process.execPath, join(benchRoot, "servers", `${config}.mjs`)],
        cwd: benchRoot,
        env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), LATCHKEY_DB: db, LOG_LEVEL: "info" },
        cpu: null,
        stdout: logFd,
        stderr: logFd
      })
      closeSync(logFd)
      try {
        const url = `http://127.0.0.1:${port}/oauth2/oauth2/token`
        const auth = `Basic ${Buffer.from(`${base.appKey}:${base.appSecret}`).toString("base64")}`
        const exited = () => server.exitCode !== null || server.signalCode !== null
        expect(await waitReady(url, auth, 30, exited)).toBeNull()
        const post = (authorization: string, body: string) =>
          fetch(url, {
            method: "POST",
            headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
            body,
            signal: AbortSignal.timeout(5_000)
          })

        const r = await post(auth, "grant_type=client_credentials&scope=api%3Aread")
        expect(r.status).toBe(200)
        expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8")
        expect(r.headers.get("cache-control")).toBe("no-store")
        expect(r.headers.get("pragma")).toBe("no-cache")
        const requestId = r.headers.get("x-request-id")
        const body = (await r.json()) as Record<string, unknown>
        expect(body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "api:read" })
        const accessToken = String(body.access_token)
        expect(accessToken).toMatch(/^[A-Za-z0-9_-]{43}$/)

        // Read by a second connection while the server runs: the answer came after the COMMIT
        const sqlite = new BetterSqlite3(db, { readonly: true })
        try {
          const hash = createHash("sha256").update(accessToken).digest("base64url")
          const token = sqlite
            .prepare("SELECT * FROM tokens WHERE kind = 'access' AND token_hash = ?")
            .get(hash)
          expect(token).toMatchObject({
            app_key: base.appKey,
            user_id: null,
            open_id: null,
            scope: JSON.stringify(["api:read"]),
            parent_hash: null,
            revoked_at: null,
            rotated_at: null
          })
          const t = token as { family_id: string; issued_at: number; expires_at: number }
          expect(t.family_id).toMatch(/^[A-Za-z0-9_-]{22}$/)
          expect(t.expires_at - t.issued_at).toBe(3600)
          const event = sqlite.prepare("SELECT * FROM audit_events WHERE request_id = ?").get(requestId)
          expect(event).toMatchObject({
            at: t.issued_at,
            type: "token_issued",
            app_key: base.appKey,
            user_id: null,
            open_id: null,
            address: "127.0.0.1",
            detail: "client_credentials"
          })
        } finally {
          sqlite.close()
        }

        const wrong = await post(
          `Basic ${Buffer.from(`${base.appKey}:not-the-secret`).toString("base64")}`,
          "grant_type=client_credentials"
        )
        expect(wrong.status).toBe(401)
        expect(await wrong.json()).toMatchObject({ error: "invalid_client" })
        const other = await post(auth, "grant_type=password&username=a&password=b")
        expect(other.status).toBe(400)

        // A batch whose insert fails is answered 503, and the next batch commits again
        const writer = new BetterSqlite3(db)
        try {
          writer.exec(
            "CREATE TRIGGER refuse BEFORE INSERT ON tokens BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
          )
          const refused = await post(auth, "grant_type=client_credentials")
          expect(refused.status).toBe(503)
          expect(refused.headers.get("retry-after")).toBe("1")
          expect(await refused.json()).toMatchObject({ error: "temporarily_unavailable" })
          writer.exec("DROP TRIGGER refuse")
        } finally {
          writer.close()
        }
        expect((await post(auth, "grant_type=client_credentials")).status).toBe(200)
      } finally {
        await stopGroup(server)
      }
      // SIGTERM: a clean exit, and one request line per request in its log
      expect(await waitExit(server, 1_000)).toBe(true)
      expect(server.exitCode).toBe(0)
      const lines = readFileSync(logFile, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(lines.filter((l) => l.msg === "request").map((l) => l.status)).toEqual([
        200, 200, 401, 400, 503, 200
      ])
      expect(lines.at(-1)?.msg).toBe("stopped")
    },
    60_000
  )
})

/**
 * The pure helpers of the latchkey-workers and latchkey-postgres rows: reading the cluster's
 * ready line, summing RSS and CPU over processes, the knobs, the plan without DATABASE_URL, the
 * database URIs, and (only when DATABASE_URL is set) a database created and dropped.
 */
import pg from "pg"
import { describe, expect, it } from "vitest"
import { workersStatus } from "../src/cluster.js"
import { plan, skipped } from "../src/harness.js"
import * as Knobs from "../src/knobs.js"
import * as Latchkey from "../src/latchkey.js"
import * as Postgres from "../src/postgres.js"
import { cpuBetween, sumMeasured } from "../src/proc.js"

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ level: "info", time: "2026-01-01T00:00:00.000Z", service: "latchkey", ...fields })

describe("workersStatus", () => {
  const started = [
    line({ workers: 2, msg: "starting 2 workers" }),
    line({ worker: 1, pid: 11, msg: "worker started" }),
    line({ worker: 2, pid: 12, msg: "worker started" })
  ]
  const listening = (worker: number) =>
    line({ worker, port: 8080, address: "127.0.0.1", msg: "listening on 127.0.0.1:8080" })

  it("is ready only on the primary's line for exactly that many workers", () => {
    expect(workersStatus(started.join("\n"), 2)).toEqual({ ready: false, listening: 0, fatal: null })
    const one = [...started, listening(1)].join("\n")
    expect(workersStatus(one, 2)).toEqual({ ready: false, listening: 1, fatal: null })
    const all = [...started, listening(1), listening(2), line({ workers: 2, msg: "all 2 workers ready" })]
    expect(workersStatus(`${all.join("\n")}\n`, 2)).toEqual({ ready: true, listening: 2, fatal: null })
    // Another count, or a worker's line with the same text, is not the primary's
    expect(workersStatus(all.join("\n"), 3).ready).toBe(false)
    expect(workersStatus(line({ worker: 1, msg: "all 2 workers ready" }), 2).ready).toBe(false)
  })

  it("skips lines that are not JSON objects, and a torn last line", () => {
    const text = ["npm noise", "[1,2]", listening(1), listening(1), `${listening(2).slice(0, 30)}`].join("\n")
    expect(workersStatus(text, 2)).toEqual({ ready: false, listening: 1, fatal: null })
  })

  it("reports the first fatal line", () => {
    const text = [
      ...started,
      line({ level: "fatal", worker: 1, reason: "database is locked", msg: "could not start" }),
      line({ level: "fatal", msg: "could not start: a worker exited before it was ready" })
    ].join("\n")
    expect(workersStatus(text, 2).fatal).toBe("could not start: database is locked")
  })
})

describe("summing over processes", () => {
  it("sums the RSS of the processes still there", () => {
    expect(sumMeasured([100.5, 80.25, 79.25])).toBe(260)
    expect(sumMeasured([100, null, 80])).toBe(180)
    expect(sumMeasured([null, null])).toBeNull()
    expect(sumMeasured([])).toBeNull()
  })

  it("counts CPU between two readings: differences, newcomers whole, the departed not at all", () => {
    const before = new Map([
      [1, 10],
      [2, 5],
      [3, 7]
    ])
    const after = new Map([
      [1, 12.5],
      [2, 6],
      [4, 0.75]
    ])
    expect(cpuBetween(before, after)).toBeCloseTo(4.25)
    expect(cpuBetween(new Map(), new Map())).toBe(0)
  })
})

describe("knobs and plan of the new rows", () => {
  it("reads WORKERS, WORKERS_CPU and DATABASE_URL", () => {
    const k = Knobs.read({})
    expect(k.workers).toBe(2)
    expect(k.workersCpu).toBe("0")
    expect(k.databaseUrl).toBeNull()
    expect(Knobs.read({ SERVER_CPU: "2" }).workersCpu).toBe("2")
    expect(Knobs.read({ WORKERS: "4", WORKERS_CPU: "none" })).toMatchObject({ workers: 4, workersCpu: null })
    expect(() => Knobs.read({ WORKERS: "1" })).toThrow(/WORKERS/)
    expect(() => Knobs.read({ WORKERS: "2.5" })).toThrow(/WORKERS/)
    expect(Knobs.read({ DATABASE_URL: " postgres://u@h:5432/db " }).databaseUrl).toBe(
      "postgres://u@h:5432/db"
    )
    expect(() => Knobs.read({ DATABASE_URL: "mysql://u:secret@h/db" })).toThrow(/postgres:\/\//)
    expect(() => Knobs.read({ DATABASE_URL: "not a url secret" })).toThrow(/PostgreSQL URI/)
    try {
      Knobs.read({ DATABASE_URL: "mysql://u:hunter2@h/db" })
    } catch (e) {
      expect(String(e)).not.toContain("hunter2")
    }
  })

  it("skips latchkey-postgres with a note without DATABASE_URL, and runs it last with one", () => {
    const without = Knobs.read({ SCENARIOS: "client_credentials" })
    expect(plan(without).map((s) => s.config)).not.toContain("latchkey-postgres")
    expect(skipped(without)).toEqual([expect.stringMatching(/^latchkey-postgres skipped: DATABASE_URL/)])
    const only = Knobs.read({ SCENARIOS: "client_credentials", CONFIGS: "latchkey-postgres" })
    expect(plan(only)).toEqual([])
    expect(skipped(Knobs.read({ SCENARIOS: "introspection" }))).toEqual([])
    const withPg = Knobs.read({
      SCENARIOS: "client_credentials",
      DATABASE_URL: "postgres://p@127.0.0.1/test"
    })
    expect(skipped(withPg)).toEqual([])
    const steps = plan(withPg)
    expect(steps.map((s) => s.config).slice(-2)).toEqual(["latchkey-workers", "latchkey-postgres"])
    expect(steps.find((s) => s.config === "latchkey-postgres")).toMatchObject({
      kind: "client_credentials",
      store: "postgres"
    })
  })

  it("keeps DATABASE_URL and LATCHKEY_WORKERS of the bench from every Latchkey process", () => {
    const saved = { url: process.env.DATABASE_URL, workers: process.env.LATCHKEY_WORKERS }
    process.env.DATABASE_URL = "postgres://p@127.0.0.1/test"
    process.env.LATCHKEY_WORKERS = "4"
    try {
      const env = Latchkey.latchkeyEnv({ LATCHKEY_DB: "/tmp/x.sqlite" })
      expect(env.DATABASE_URL).toBeUndefined()
      expect(env.LATCHKEY_WORKERS).toBeUndefined()
      expect(env.LATCHKEY_DB).toBe("/tmp/x.sqlite")
      expect(Latchkey.latchkeyEnv({ DATABASE_URL: "postgres://p@127.0.0.1/x" }).DATABASE_URL).toBe(
        "postgres://p@127.0.0.1/x"
      )
    } finally {
      if (saved.url === undefined) delete process.env.DATABASE_URL
      else process.env.DATABASE_URL = saved.url
      if (saved.workers === undefined) delete process.env.LATCHKEY_WORKERS
      else process.env.LATCHKEY_WORKERS = saved.workers
    }
  })
})

describe("PostgreSQL databases", () => {
  it("names a database on the same server, keeping credentials and parameters", () => {
    expect(
      Postgres.databaseUrl("postgres://u:p%40ss@db.example:5433/test?sslmode=disable", "latchkey_bench_ab12")
    ).toBe("postgres://u:p%40ss@db.example:5433/latchkey_bench_ab12?sslmode=disable")
    expect(Postgres.databaseUrl("postgresql://127.0.0.1", "x_1")).toBe("postgresql://127.0.0.1/x_1")
    expect(Postgres.databaseName()).toMatch(/^latchkey_bench_[0-9a-f]{12}$/)
  })

  it("keeps passwords out of the record", () => {
    expect(Postgres.redactUrl("postgres://u:hunter2@h:5432/test?password=x")).toBe(
      "postgres://u:***@h:5432/test"
    )
    expect(Postgres.redactUrl("postgres://postgres@127.0.0.1:5432/test")).toBe(
      "postgres://postgres@127.0.0.1:5432/test"
    )
    expect(Postgres.redactUrl("nope")).toBe("(not a URI)")
  })

  const url = process.env.DATABASE_URL
  it.skipIf(url === undefined || url === "")(
    "creates, copies and drops databases (DATABASE_URL)",
    async () => {
      const admin = url as string
      const exists = async (name: string) => {
        const c = new pg.Client({ connectionString: admin })
        await c.connect()
        try {
          return (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1
        } finally {
          await c.end()
        }
      }
      const name = Postgres.databaseName()
      await Postgres.createDatabase(admin, name)
      await Postgres.createDatabase(admin, `${name}_copy`, name)
      expect(await exists(name)).toBe(true)
      expect(await exists(`${name}_copy`)).toBe(true)
      // A session left open does not stop the drop (WITH (FORCE))
      const open = new pg.Client({ connectionString: Postgres.databaseUrl(admin, `${name}_copy`) })
      await open.connect()
      open.on("error", () => {})
      expect(await Postgres.dropAll()).toEqual([])
      await open.end().catch(() => {})
      expect(await exists(name)).toBe(false)
      expect(await exists(`${name}_copy`)).toBe(false)
      expect(await Postgres.describeServer(admin)).toMatch(/^PostgreSQL \d+/)
    }
  )
})

/**
 * What the server and the CLI say when the settings point at a database they cannot use, or give
 * the admin listener the public port: one `latchkey:` line on stderr naming the setting, the path
 * (or the database) and the reason in words, exit code 1, never a stack trace or a password. A
 * misspelt variable outside `LATCHKEY_*` is warned of once, by the name it was meant to be.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, mkdirSync } from "node:fs"
import { connect } from "node:net"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { StorageError } from "@latchkey/core"
import * as Env from "../src/Env.js"
import * as StartError from "../src/StartError.js"
import { cli, runProcess, serverDir, spawnServer, tempDir } from "./helpers.js"
import { createDatabase, serverUrl } from "./postgres/database.js"
import { adminToken } from "./prometheus.js"

const source = ["--conditions=@latchkey/source", "--import", "tsx"]

/** Start the server with `env` until it exits (a start that fails). */
const startServer = (env: Record<string, string>) =>
  runProcess(process.execPath, [...source, "src/main.ts"], { cwd: serverDir, env: { PORT: "0", ...env } })

/** The one `latchkey:` line of `stderr`: exactly one, and no stack trace anywhere. */
const oneLine = (stderr: string): string => {
  const lines = stderr
    .split("\n")
    .filter((l) => l.startsWith("latchkey: ") && !l.startsWith("latchkey: warning"))
  assert.strictEqual(lines.length, 1, `stderr: ${stderr}`)
  assert.notMatch(stderr, /^\s+at /m)
  return lines[0] as string
}

/** Whether the tests run as root, whom no directory mode stops. */
const root = process.getuid?.() === 0

/**
 * Run the CLI's `user create` on SQLite file `db`, as the user `nobody` when the tests run as root;
 * once it names the database on stderr (it opens it next), it has `openMs` to exit, else it is
 * killed and the result says so (`code` null).
 */
const cliOpening = (db: string, openMs: number): Promise<{ code: number | null; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      [...source, "src/cli.ts", "user", "create", "--username", "alice", "--password", "a long password"],
      {
        cwd: serverDir,
        env: { PATH: process.env.PATH ?? "", HOME: "/tmp", LATCHKEY_DB: db },
        stdio: ["ignore", "ignore", "pipe"],
        ...(root ? { uid: 65534, gid: 65534 } : {})
      }
    )
    let stderr = ""
    let deadline: NodeJS.Timeout | undefined
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
      if (deadline === undefined && stderr.includes(`latchkey: database ${db}`))
        deadline = setTimeout(() => child.kill("SIGKILL"), openMs)
    })
    child.once("error", reject)
    child.once("close", (code) => {
      clearTimeout(deadline)
      resolve({ code, stderr })
    })
  })

describe("a SQLite path the server cannot use (LATCHKEY_DB)", () => {
  const tmp = tempDir()
  afterAll(() => tmp.cleanup())

  it("under a file that is no directory: exit 1 and one line naming LATCHKEY_DB, the path and the reason", async () => {
    const r = await startServer({ LATCHKEY_DB: "/dev/null/x.sqlite" })
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      oneLine(r.stderr),
      "latchkey: LATCHKEY_DB: the database file /dev/null/x.sqlite cannot be created: /dev/null is not a directory"
    )
  })

  it("under /proc, where a recursive mkdir never ends: exit 1 with the directory refused", async () => {
    const r = await startServer({ LATCHKEY_DB: "/proc/nope/x.sqlite" })
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      oneLine(r.stderr),
      "latchkey: LATCHKEY_DB: the database file /proc/nope/x.sqlite cannot be created: the directory /proc/nope cannot be created: no such file or directory (the file system may not allow it) (ENOENT)"
    )
  })

  it("the CLI under /proc: the error within a second of opening, not a hang", async () => {
    const r = await cliOpening("/proc/nope/x.sqlite", 1000)
    assert.strictEqual(r.code, 1, r.stderr)
    assert.include(
      r.stderr,
      "latchkey: error: LATCHKEY_DB: the database file /proc/nope/x.sqlite cannot be created: the directory /proc/nope cannot be created"
    )
  })

  it("the CLI in a directory it may not write: permission denied (EACCES), naming the file and LATCHKEY_DB", async () => {
    const locked = join(tmp.dir, "locked")
    mkdirSync(locked)
    chmodSync(tmp.dir, 0o755)
    chmodSync(locked, 0o555)
    const db = join(locked, "sub", "x.sqlite")
    const r = await cliOpening(db, 1000)
    assert.strictEqual(r.code, 1, r.stderr)
    assert.include(
      r.stderr,
      `latchkey: error: LATCHKEY_DB: the database file ${db} cannot be created: the directory ${join(locked, "sub")} cannot be created: permission denied (EACCES)`
    )
  })
})

describe.skipIf(serverUrl === undefined)("a PostgreSQL database that does not exist (DATABASE_URL)", () => {
  it("the server says which database is missing and where, on stderr, without the password", async () => {
    const database = await createDatabase()
    await database.drop()
    const url = new URL(database.url)
    url.password = "pw-never-shown"
    const name = url.pathname.slice(1)
    const r = await startServer({ DATABASE_URL: url.toString() })
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      oneLine(r.stderr),
      `latchkey: DATABASE_URL names the database "${name}", which does not exist on ${url.host}: create it (createdb ${name}) or correct DATABASE_URL`
    )
    assert.notInclude(r.stdout + r.stderr, "pw-never-shown")
    assert.notInclude(r.stdout + r.stderr, "3D000")
  })
})

/** The PostgreSQL server of DATABASE_URL, or else the one on 127.0.0.1:5432. */
const local = new URL(serverUrl ?? "postgres://postgres@127.0.0.1:5432/postgres")

/**
 * Whether the server at `local` answers an SSLRequest (RFC-less, PostgreSQL's protocol) with
 * 'N': it answers and offers no TLS. False when nothing answers within a second, or it offers TLS.
 */
const offersNoTls = (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(Number(local.port || 5432), local.hostname)
    const done = (answer: boolean) => {
      socket.destroy()
      resolve(answer)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once("error", () => done(false))
    socket.once("connect", () => socket.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47])))
    socket.once("data", (d: Buffer) => done(d.toString("latin1", 0, 1) === "N"))
  })

const noTlsLine = (hostPort: string, asked: string) =>
  `DATABASE_URL: the PostgreSQL server at ${hostPort} does not offer TLS (SSL) but the URL asks for it (${asked}); connect without TLS (sslmode=disable) only on a trusted network, or enable TLS on the server`

describe("DATABASE_URL asking for TLS of a PostgreSQL server without it", () => {
  it("is explained in one line naming the server and what asked for TLS, never the password", () => {
    const refused = new StorageError.StorageError({
      message: "the database server does not offer TLS (SSL), but the connection asks for it (sslmode)",
      cause: new Error("The server does not support SSL connections")
    })
    for (const [url, asked] of [
      ["postgres://u:pw-never-shown@db.internal:6543/latchkey?sslmode=require", "sslmode=require"],
      [
        "postgres://u:pw-never-shown@db.internal:6543/latchkey?sslmode=verify-full&x=1",
        "sslmode=verify-full"
      ],
      ["postgres://u:pw-never-shown@db.internal:6543/latchkey?ssl=true", "ssl"],
      ["postgres://u:pw-never-shown@db.internal:6543/latchkey", "PGSSLMODE"]
    ] as const) {
      const line = StartError.explain(Env.read({ DATABASE_URL: url }), refused)
      assert.strictEqual(line, noTlsLine("db.internal:6543", asked))
      assert.notInclude(line ?? "", "pw-never-shown")
    }
  })

  it("the server and the CLI exit 1 with that line against a server that offers no TLS", async (ctx) => {
    if (!(await offersNoTls())) return ctx.skip()
    const url = new URL(local)
    url.password = "pw-never-shown"
    url.searchParams.set("sslmode", "require")
    const server = await startServer({ DATABASE_URL: url.toString() })
    assert.strictEqual(server.code, 1)
    assert.strictEqual(oneLine(server.stderr), `latchkey: ${noTlsLine(url.host, "sslmode=require")}`)
    const listed = await cli("unused.sqlite", ["user", "list"], undefined, { DATABASE_URL: url.toString() })
    assert.strictEqual(listed.code, 1)
    assert.include(listed.stderr.split("\n"), `latchkey: error: ${noTlsLine(url.host, "sslmode=require")}`)
    assert.notMatch(listed.stderr, /^\s+at /m)
    for (const r of [server, listed]) {
      assert.notInclude(r.stdout + r.stderr, "pw-never-shown")
      assert.notInclude(r.stdout + r.stderr, "postgres storage failed")
    }
  }, 90_000)
})

describe("the admin listener on the public port", () => {
  it("is refused at start as the public port, before anything listens, in one process or a cluster", async () => {
    const tmp = tempDir()
    try {
      for (const workers of ["1", "2"]) {
        const r = await startServer({
          PORT: "18080",
          LATCHKEY_ADMIN_PORT: "18080",
          LATCHKEY_ADMIN_TOKEN: adminToken,
          LATCHKEY_WORKERS: workers,
          LATCHKEY_DB: join(tmp.dir, "admin.sqlite")
        })
        assert.strictEqual(r.code, 1)
        assert.strictEqual(
          oneLine(r.stderr),
          "latchkey: LATCHKEY_ADMIN_PORT must not be PORT, the public port (both are 18080): the admin API and the metrics never share it; set LATCHKEY_ADMIN_PORT to another port"
        )
        assert.strictEqual(r.stdout, "")
      }
    } finally {
      tmp.cleanup()
    }
  })
})

describe("a misspelt variable outside LATCHKEY_", () => {
  it("is warned of once at start by the setting it was meant to be, without its value", async () => {
    const tmp = tempDir()
    try {
      const server = await spawnServer({
        LATCHKEY_DB: join(tmp.dir, "db.sqlite"),
        PORT: "0",
        DATABSE_URL: "postgres://latchkey:pw-never-shown@db.example/latchkey"
      })
      try {
        const warnings = server.lines().filter((l) => l.level === "warn" && l.msg?.startsWith("DATABSE_URL"))
        assert.deepStrictEqual(
          warnings.map((l) => l.msg),
          ["DATABSE_URL is not a Latchkey setting and is ignored; did you mean DATABASE_URL?"]
        )
        assert.notInclude(server.stdout() + server.stderr(), "pw-never-shown")
      } finally {
        await server.stop()
      }
    } finally {
      tmp.cleanup()
    }
  })
})

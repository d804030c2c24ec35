import { copyFileSync, existsSync, renameSync, unlinkSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  basic,
  createApp,
  createUser,
  freePort,
  runProcess,
  type ServerProcess,
  serverDir,
  spawnServer,
  tempDir
} from "./helpers.js"
import { adminToken } from "./prometheus.js"

describe("the server process", () => {
  const tmp = tempDir()
  const db = join(tmp.dir, "nested", "dir", "latchkey.sqlite")
  let server: ServerProcess

  beforeAll(async () => {
    server = await spawnServer({ LATCHKEY_DB: db, PORT: "0" })
  })
  afterAll(async () => {
    await server.stop()
    tmp.cleanup()
  })

  it("creates and migrates the database on first start", () => {
    assert.isTrue(existsSync(db))
  })

  it("answers /healthz and /readyz", async () => {
    const health = await fetch(`${server.base}/healthz`)
    assert.strictEqual(health.status, 200)
    assert.deepStrictEqual(await health.json(), { status: "ok" })
    const ready = await fetch(`${server.base}/readyz`)
    assert.strictEqual(ready.status, 200)
    assert.deepStrictEqual(await ready.json(), { status: "ok" })
  })

  it("runs no admin listener without LATCHKEY_ADMIN_PORT", () => {
    assert.isTrue(server.lines().some((l) => l.msg?.startsWith("listening") === true))
    assert.isFalse(
      server.lines().some((l) => l.adminPort !== undefined || l.msg?.startsWith("admin") === true)
    )
  })

  it("defaults the issuer to http://localhost:$PORT", async () => {
    const res = await fetch(`${server.base}/.well-known/oauth-authorization-server`)
    const doc = (await res.json()) as { issuer: string }
    assert.strictEqual(doc.issuer, `http://localhost:${server.port}`)
  })

  it("answers unknown paths with JSON 404", async () => {
    const res = await fetch(`${server.base}/nope`)
    assert.strictEqual(res.status, 404)
    assert.strictEqual(((await res.json()) as { error: string }).error, "not_found")
  })

  /** Register an application and GET /api/me with its client_credentials token for `device-7`. */
  const meWithAssertedSubject = async (name: string) => {
    const app = await createApp(db, [
      "--name",
      name,
      "--redirect-uri",
      "https://me.example/cb",
      "--scope",
      "profile,email"
    ])
    const tokenRes = await fetch(`${server.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: basic(app.app_key, app.app_secret),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "grant_type=client_credentials&open_id=device-7"
    })
    const token = (await tokenRes.json()) as { access_token: string }
    const me = await fetch(`${server.base}/api/me`, {
      headers: { authorization: `Bearer ${token.access_token}` }
    })
    return { app, me }
  }

  it("serves /api/me for a valid Bearer token", async () => {
    const { app, me } = await meWithAssertedSubject("Me")
    assert.strictEqual(me.status, 200)
    assert.deepStrictEqual(await me.json(), {
      open_id: "device-7",
      client_id: app.app_key,
      scope: "email,profile"
    })
    const anonymous = await fetch(`${server.base}/api/me`)
    assert.strictEqual(anonymous.status, 401)
    assert.strictEqual(anonymous.headers.get("www-authenticate"), 'Bearer realm="latchkey"')
  })

  it("/api/me tells in Latchkey-Subject-Type that an application asserted the open_id", async () => {
    const { me } = await meWithAssertedSubject("Me too")
    assert.strictEqual(me.status, 200)
    assert.strictEqual(me.headers.get("latchkey-subject-type"), "application")
  })

  it("logs one JSON line per request without secrets, headers, bodies or token query strings", async () => {
    const secret = "SENTINEL-SEC-7731-0000000000000000000000"
    const app = await createApp(db, [
      "--name",
      "Logs",
      "--redirect-uri",
      "https://logs.example/cb",
      "--grant-types",
      "password,client_credentials",
      "--app-key",
      "sentinel-app",
      "--app-secret",
      secret
    ])
    await fetch(`${server.base}/oauth2/oauth2/token?leak=SENTINEL-QUERY`, {
      method: "POST",
      headers: {
        authorization: basic(app.app_key, app.app_secret),
        "content-type": "application/x-www-form-urlencoded",
        cookie: "latchkey_session=SENTINEL-COOKIE"
      },
      body: "grant_type=password&username=nobody&password=SENTINEL-PW-7731"
    })
    await new Promise((r) => setTimeout(r, 200))
    const out = server.stdout()
    for (const sentinel of [
      "SENTINEL-SEC",
      "SENTINEL-PW",
      "SENTINEL-QUERY",
      "SENTINEL-COOKIE",
      '"authorization"',
      "Basic "
    ]) {
      assert.notInclude(out, sentinel)
    }
    const lines = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const tokenLine = [...lines]
      .reverse()
      .find((l) => l.msg === "request" && l.path === "/oauth2/oauth2/token")
    assert.isDefined(tokenLine)
    assert.strictEqual(tokenLine?.method, "POST")
    assert.strictEqual(tokenLine?.status, 400)
    assert.isString(tokenLine?.reqId)
    assert.isNumber(tokenLine?.durationMs)
  })
})

describe("configuration errors", () => {
  it("a DATABASE_URL whose server does not answer: exit code 1, the reason, and never the password", async () => {
    const r = await runProcess(
      process.execPath,
      ["--conditions=@latchkey/source", "--import", "tsx", "src/main.ts"],
      {
        cwd: serverDir,
        // port 1 on the loopback: nothing listens, the connection is refused at once
        env: { DATABASE_URL: "postgres://latchkey:pw-never-logged@127.0.0.1:1/latchkey", PORT: "0" }
      }
    )
    assert.strictEqual(r.code, 1)
    assert.include(r.stdout + r.stderr, "the database cannot be reached")
    assert.notInclude(r.stdout + r.stderr, "pw-never-logged")
  })

  it("LOG_LEVEL=verbose: exit code 1 and one line naming the variable, the value and the levels, no stack trace", async () => {
    const r = await runProcess(
      process.execPath,
      ["--conditions=@latchkey/source", "--import", "tsx", "src/main.ts"],
      { cwd: serverDir, env: { LOG_LEVEL: "verbose", PORT: "0", LATCHKEY_DB: ":memory:" } }
    )
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      r.stderr,
      'latchkey: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")\n'
    )
    assert.strictEqual(r.stdout, "")
  })

  it("refuses a malformed issuer", async () => {
    const r = await runProcess(
      process.execPath,
      ["--conditions=@latchkey/source", "--import", "tsx", "src/main.ts"],
      {
        cwd: serverDir,
        env: { LATCHKEY_ISSUER: "not a url", PORT: "0" }
      }
    )
    assert.strictEqual(r.code, 1)
    assert.include(r.stderr, "LATCHKEY_ISSUER")
  })
})

describe("lifecycle", () => {
  it("finishes an in-flight request on SIGTERM, then exits 0", async () => {
    const tmp = tempDir()
    const db = join(tmp.dir, "db.sqlite")
    try {
      const app = await createApp(db, [
        "--name",
        "Slow",
        "--redirect-uri",
        "https://slow.example/cb",
        "--grant-types",
        "password"
      ])
      await createUser(db, "slowpoke", "a long password")
      const server = await spawnServer({ LATCHKEY_DB: db, PORT: "0" })
      // a first request opens the keep-alive connection the next one reuses
      assert.strictEqual((await fetch(`${server.base}/healthz`)).status, 200)
      // the password grant runs scrypt (hundreds of ms), so it is still in flight when the signal arrives
      const pending = fetch(`${server.base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: {
          authorization: basic(app.app_key, app.app_secret),
          "content-type": "application/x-www-form-urlencoded"
        },
        body: "grant_type=password&username=slowpoke&password=a%20long%20password"
      })
      await new Promise((r) => setTimeout(r, 100))
      const stopping = server.stop()
      const res = await pending
      assert.strictEqual(res.status, 200)
      assert.strictEqual(await stopping, 0)
      const out = server.stdout()
      assert.include(out, '"msg":"stopped"')
      // the signal came while the token request was being served
      assert.isBelow(out.indexOf('"msg":"signal received"'), out.indexOf('"path":"/oauth2/oauth2/token"'))
      await fetch(`${server.base}/healthz`).then(
        () => assert.fail("still listening"),
        () => undefined
      )
    } finally {
      tmp.cleanup()
    }
  })

  it("keeps the generated server key in the database across restarts", async () => {
    const tmp = tempDir()
    const db = join(tmp.dir, "db.sqlite")
    try {
      const app = await createApp(db, ["--name", "Keep", "--redirect-uri", "https://keep.example/cb"])
      const port = await freePort()
      for (let i = 0; i < 2; i++) {
        const server = await spawnServer({ LATCHKEY_DB: db, PORT: String(port) })
        const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
          method: "POST",
          headers: {
            authorization: basic(app.app_key, app.app_secret),
            "content-type": "application/x-www-form-urlencoded"
          },
          body: "grant_type=client_credentials"
        })
        assert.strictEqual(res.status, 200)
        assert.strictEqual(await server.stop(), 0)
      }
    } finally {
      tmp.cleanup()
    }
  })
})

/** A TCP server holding a port of 127.0.0.1, as another process would. */
const holdPort = async (): Promise<{ port: number; close: () => Promise<void> }> => {
  const held: Server = createServer()
  await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve))
  const address = held.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return { port, close: () => new Promise<void>((resolve) => held.close(() => resolve())) }
}

describe("a port in use", () => {
  const tmp = tempDir()
  afterAll(() => tmp.cleanup())
  const start = (env: Record<string, string>) =>
    runProcess(process.execPath, ["--conditions=@latchkey/source", "--import", "tsx", "src/main.ts"], {
      cwd: serverDir,
      env: { LATCHKEY_DB: join(tmp.dir, "ports.sqlite"), ...env }
    })
  /** The `latchkey:` line on stderr: exactly one line, no stack trace. */
  const oneLine = (stderr: string): string => {
    const lines = stderr.split("\n").filter((l) => l !== "")
    assert.deepStrictEqual(lines.filter((l) => l.startsWith("latchkey: ")).length, 1, `stderr: ${stderr}`)
    assert.notMatch(stderr, /^\s+at /m)
    return lines.find((l) => l.startsWith("latchkey: ")) as string
  }

  it("PORT: exit code 1 and one line naming PORT", async () => {
    const held = await holdPort()
    try {
      const r = await start({ PORT: String(held.port) })
      assert.strictEqual(r.code, 1)
      const line = oneLine(r.stderr)
      assert.include(line, `127.0.0.1:${held.port} is already in use`)
      assert.include(line, `set PORT to a free port (PORT=${held.port} now)`)
      assert.notInclude(line, "LATCHKEY_ADMIN_PORT")
      assert.notMatch(r.stdout, /^\s+at /m)
    } finally {
      await held.close()
    }
  })

  it("LATCHKEY_ADMIN_PORT: exit code 1 and one line naming LATCHKEY_ADMIN_PORT, one process or a cluster", async () => {
    const held = await holdPort()
    try {
      for (const workers of ["1", "2"]) {
        const r = await start({
          PORT: "0",
          LATCHKEY_WORKERS: workers,
          LATCHKEY_ADMIN_PORT: String(held.port),
          LATCHKEY_ADMIN_TOKEN: adminToken
        })
        assert.strictEqual(r.code, 1, workers)
        const line = oneLine(r.stderr)
        assert.include(line, `set LATCHKEY_ADMIN_PORT to a free port (LATCHKEY_ADMIN_PORT=${held.port} now)`)
        // A cluster fails in its primary, before any worker starts
        assert.notInclude(r.stdout, "worker started")
      }
    } finally {
      await held.close()
    }
  })
})

describe("unknown LATCHKEY_ variables", () => {
  it("are warned of once at start, with the nearest known name", async () => {
    const tmp = tempDir()
    try {
      const server = await spawnServer({
        LATCHKEY_DB: join(tmp.dir, "db.sqlite"),
        PORT: "0",
        LATCHKEY_ISUER: "x"
      })
      try {
        const warnings = server
          .lines()
          .filter(
            (l) => l.level === "warn" && typeof l.msg === "string" && l.msg.startsWith("LATCHKEY_ISUER")
          )
        assert.deepStrictEqual(
          warnings.map((l) => l.msg),
          ["LATCHKEY_ISUER is not a Latchkey setting and is ignored; did you mean LATCHKEY_ISSUER?"]
        )
      } finally {
        await server.stop()
      }
    } finally {
      tmp.cleanup()
    }
  })
})

describe("/readyz and the SQLite file", () => {
  const tmp = tempDir()
  afterAll(() => tmp.cleanup())

  /** Poll /readyz until it answers `status`, 10 s at most. */
  const readyzBecomes = async (base: string, status: number): Promise<void> => {
    const deadline = Date.now() + 10_000
    let last = 0
    while (Date.now() < deadline) {
      last = (await fetch(`${base}/readyz`)).status
      if (last === status) return
      await new Promise((r) => setTimeout(r, 50))
    }
    assert.fail(`/readyz still answers ${last}, not ${status}`)
  }

  for (const [what, change] of [
    ["deleted", (db: string) => unlinkSync(db)],
    [
      "replaced",
      (db: string) => {
        copyFileSync(db, `${db}.copy`)
        renameSync(`${db}.copy`, db)
      }
    ]
  ] as const) {
    it(`answers 503 once the database file is ${what} under the running server`, async () => {
      const db = join(tmp.dir, `${what}.sqlite`)
      const server = await spawnServer({ LATCHKEY_DB: db, PORT: "0" })
      try {
        assert.strictEqual((await fetch(`${server.base}/readyz`)).status, 200)
        change(db)
        await readyzBecomes(server.base, 503)
        assert.deepStrictEqual(await (await fetch(`${server.base}/readyz`)).json(), { status: "unavailable" })
        assert.strictEqual((await fetch(`${server.base}/healthz`)).status, 200)
      } finally {
        await server.stop()
      }
    })
  }
})

/**
 * The admin listener over real HTTP on 127.0.0.1: the bearer token in front of the admin API and
 * `/metrics`, neither on the public port, and the metrics moving by exactly what was done on the
 * public port (one process, and a cluster whose primary sums its workers).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  basic,
  cliInProcess,
  createApp,
  type ServerProcess,
  serverDir,
  spawnServer,
  tempDir,
  waitUntil
} from "./helpers.js"
import { adminPort, adminToken, parse, type Sample, scrape, value } from "./prometheus.js"

/** The server's version: its package.json's. */
const { version } = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8")) as { version: string }

const tmp = tempDir()
afterAll(() => tmp.cleanup())

const form = { "content-type": "application/x-www-form-urlencoded" }

const tokenRequest = (base: string, authorization: string, body: string) =>
  fetch(`${base}/oauth2/oauth2/token`, { method: "POST", headers: { authorization, ...form }, body })

describe("the admin listener", () => {
  const db = join(tmp.dir, "admin.sqlite")
  let server: ServerProcess
  let admin: string

  beforeAll(async () => {
    server = await spawnServer({
      LATCHKEY_DB: db,
      PORT: "0",
      LATCHKEY_ADMIN_PORT: "0",
      LATCHKEY_ADMIN_TOKEN: adminToken,
      // A lockout after two failures, for the throttle counter
      LATCHKEY_THROTTLE_FREE_FAILURES: "2"
    })
    admin = `http://127.0.0.1:${await adminPort(server)}`
  })
  afterAll(async () => {
    await server.stop()
  })

  it("tells the server's version in the listening line and as latchkey_build_info", async () => {
    const listening = server.lines().find((l) => l.msg?.startsWith("listening") === true)
    assert.strictEqual(listening?.version, version)
    const samples = await scrape(Number(new URL(admin).port))
    const info = samples.filter((s) => s.name === "latchkey_build_info")
    assert.deepStrictEqual(info, [
      { name: "latchkey_build_info", labels: { version, nodejs_version: process.version }, value: 1 }
    ])
  })

  it("is not the public port, and the public port serves neither the admin API nor /metrics", async () => {
    assert.notStrictEqual(new URL(admin).port, String(server.port))
    for (const path of ["/admin/v1/applications", "/admin/v1/openapi.json", "/metrics"]) {
      for (const headers of [{}, { authorization: `Bearer ${adminToken}` }]) {
        const res = await fetch(`${server.base}${path}`, { headers })
        assert.strictEqual(res.status, 404, path)
        assert.strictEqual(((await res.json()) as { error: string }).error, "not_found")
      }
    }
  })

  it("answers 401 with a Bearer challenge without the token or with a wrong one; an unauthorized POST changes nothing", async () => {
    const wrong = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Bearer ${adminToken}x` },
      { authorization: `Bearer ${adminToken.slice(0, -1)}` },
      { authorization: `Basic ${Buffer.from(`admin:${adminToken}`).toString("base64")}` }
    ]
    for (const path of ["/metrics", "/admin/v1/applications"]) {
      for (const headers of wrong) {
        const res = await fetch(`${admin}${path}`, { headers })
        assert.strictEqual(res.status, 401, `${path} ${JSON.stringify(headers)}`)
        assert.strictEqual(res.headers.get("www-authenticate"), 'Bearer realm="latchkey-admin"')
        const body = await res.text()
        assert.strictEqual((JSON.parse(body) as { error: string }).error, "unauthorized")
        assert.notInclude(body, "latchkey_")
      }
    }
    const post = await fetch(`${admin}/admin/v1/applications`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Never", redirect_uris: ["https://never.example/cb"] })
    })
    assert.strictEqual(post.status, 401)
    const list = await cliInProcess(db, ["app", "list", "--json"])
    assert.notInclude(list.stdout, "Never")
  })

  it("serves the admin API and the metrics with the right token, and JSON 404 elsewhere (the console too, unless LATCHKEY_CONSOLE=on)", async () => {
    const headers = { authorization: `Bearer ${adminToken}` }
    const apps = await fetch(`${admin}/admin/v1/applications`, { headers })
    assert.strictEqual(apps.status, 200)
    assert.isArray(await apps.json())
    const unknown = await fetch(`${admin}/admin/v1/nothing-here`, { headers })
    assert.strictEqual(unknown.status, 404)
    const metrics = await fetch(`${admin}/metrics`, { headers })
    assert.strictEqual(metrics.status, 200)
    assert.match(metrics.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
    assert.strictEqual(metrics.headers.get("cache-control"), "no-store")
    const text = await metrics.text()
    // The hardening headers, and the length of the text, in the one list of the answer's headers
    assert.strictEqual(metrics.headers.get("x-frame-options"), "DENY")
    assert.strictEqual(metrics.headers.get("content-length"), String(Buffer.byteLength(text)))
    for (const name of [
      "latchkey_tokens_issued_total",
      "latchkey_oauth_errors_total",
      "latchkey_throttle_events_total",
      "latchkey_http_request_duration_seconds",
      "latchkey_storage_operation_duration_seconds",
      "latchkey_sessions",
      "process_cpu_seconds_total",
      "nodejs_heap_size_used_bytes"
    ]) {
      assert.include(text, `# TYPE ${name} `, name)
    }
    const post = await fetch(`${admin}/metrics`, { method: "POST", headers })
    assert.strictEqual(post.status, 405)
    for (const path of [
      "/",
      "/healthz",
      "/oauth2/oauth2/token",
      "/metrics/",
      "/admin",
      "/console",
      "/console/sign-in"
    ]) {
      const res = await fetch(`${admin}${path}`, { headers })
      assert.strictEqual(res.status, 404, path)
      assert.strictEqual(((await res.json()) as { error: string }).error, "not_found")
    }
  })

  it("counts tokens by grant type and App Key, errors by endpoint and code, and times requests and stores exactly", async () => {
    const app = await createApp(db, [
      "--name",
      "Counted",
      "--redirect-uri",
      "https://counted.example/cb",
      "--scope",
      "profile",
      "--grant-types",
      "client_credentials,refresh_token,authorization_code"
    ])
    const auth = basic(app.app_key, app.app_secret)
    const before = await scrape(Number(new URL(admin).port))
    for (let i = 0; i < 3; i++) {
      assert.strictEqual((await tokenRequest(server.base, auth, "grant_type=client_credentials")).status, 200)
    }
    // With an open_id the response carries a refresh token; refreshing it is one more token response
    const withRefresh = (await (
      await tokenRequest(server.base, auth, "grant_type=client_credentials&open_id=device-1")
    ).json()) as { refresh_token: string }
    const refreshed = await tokenRequest(
      server.base,
      auth,
      `grant_type=refresh_token&refresh_token=${withRefresh.refresh_token}`
    )
    assert.strictEqual(refreshed.status, 200)
    assert.strictEqual((await tokenRequest(server.base, auth, "grant_type=magic")).status, 400)
    assert.strictEqual((await tokenRequest(server.base, auth, "grant_type=password")).status, 400)
    const wrongSecret = basic(app.app_key, "not-the-secret")
    assert.strictEqual(
      (await tokenRequest(server.base, wrongSecret, "grant_type=client_credentials")).status,
      401
    )
    const authorize = await fetch(
      `${server.base}/oauth2/oauth2/authorize?response_type=code&client_id=${app.app_key}&redirect_uri=${encodeURIComponent("https://counted.example/cb")}&scope=bogus&state=s`,
      { redirect: "manual" }
    )
    assert.strictEqual(authorize.status, 302)
    assert.match(authorize.headers.get("location") ?? "", /error=invalid_scope/)
    const me = await fetch(`${server.base}/api/me`, { headers: { authorization: "Bearer not-a-token" } })
    assert.strictEqual(me.status, 401)
    await fetch(`${server.base}/some/unknown/path`)
    const after = await scrape(Number(new URL(admin).port))

    const delta = (name: string, labels: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels)
    const issued = "latchkey_tokens_issued_total"
    assert.strictEqual(delta(issued, { grant_type: "client_credentials", app_key: app.app_key }), 4)
    assert.strictEqual(delta(issued, { grant_type: "refresh_token", app_key: app.app_key }), 1)
    assert.strictEqual(delta(issued, {}), 5)
    const errors = "latchkey_oauth_errors_total"
    assert.strictEqual(delta(errors, { endpoint: "token", error: "unsupported_grant_type" }), 1)
    assert.strictEqual(delta(errors, { endpoint: "token", error: "unauthorized_client" }), 1)
    assert.strictEqual(delta(errors, { endpoint: "token", error: "invalid_client" }), 1)
    assert.strictEqual(delta(errors, { endpoint: "authorize", error: "invalid_scope" }), 1)
    assert.strictEqual(delta(errors, { endpoint: "api_me", error: "invalid_token" }), 1)
    assert.strictEqual(delta(errors, {}), 5)
    const requests = "latchkey_http_request_duration_seconds_count"
    assert.strictEqual(delta(requests, { endpoint: "token", method: "POST", status: "200" }), 5)
    assert.strictEqual(delta(requests, { endpoint: "token", method: "POST", status: "400" }), 2)
    assert.strictEqual(delta(requests, { endpoint: "token", method: "POST", status: "401" }), 1)
    assert.strictEqual(delta(requests, { endpoint: "authorize", method: "GET", status: "302" }), 1)
    assert.strictEqual(delta(requests, { endpoint: "other", method: "GET", status: "404" }), 1)
    assert.strictEqual(delta(requests, {}), 11)
    // Raw paths never become labels
    assert.isFalse(after.some((s) => Object.values(s.labels).some((v) => v.includes("/"))))
    // Each token response stores its tokens in one TokenStore.insert (the refresh in one rotate)
    const storage = "latchkey_storage_operation_duration_seconds_count"
    assert.strictEqual(delta(storage, { operation: "TokenStore.insert" }), 4)
    assert.strictEqual(delta(storage, { operation: "TokenStore.rotate" }), 1)
    assert.isAbove(delta(storage, { operation: "ApplicationStore.find" }), 0)
  })

  it("counts a client authentication lockout once, as the audit trail does", async () => {
    const app = await createApp(db, ["--name", "Locked", "--redirect-uri", "https://locked.example/cb"])
    const port = Number(new URL(admin).port)
    const before = await scrape(port)
    const wrong = basic(app.app_key, "wrong-secret")
    let statuses: Array<number> = []
    for (let i = 0; i < 6 && !statuses.includes(429); i++) {
      statuses = [
        ...statuses,
        (await tokenRequest(server.base, wrong, "grant_type=client_credentials")).status
      ]
    }
    assert.include(statuses, 429)
    const after = await scrape(port)
    const audit = await cliInProcess(db, ["audit", "tail", "--app", app.app_key, "--json"])
    const lockouts = (JSON.parse(audit.stdout) as Array<{ type: string }>).filter(
      (e) => e.type === "client_auth_throttled"
    ).length
    assert.strictEqual(lockouts, 1)
    const kind = { kind: "client_auth" }
    assert.strictEqual(
      value(after, "latchkey_throttle_events_total", kind) -
        value(before, "latchkey_throttle_events_total", kind),
      lockouts
    )
    assert.strictEqual(value(after, "latchkey_throttle_events_total", { kind: "signin" }), 0)
  })

  it("reads the sign-in sessions gauge from the store at each scrape", async () => {
    const app = await createApp(db, ["--name", "Pages", "--redirect-uri", "https://pages.example/cb"])
    const port = Number(new URL(admin).port)
    const before = value(await scrape(port), "latchkey_sessions")
    const page = await fetch(
      `${server.base}/oauth2/oauth2/authorize?response_type=code&client_id=${app.app_key}&redirect_uri=${encodeURIComponent("https://pages.example/cb")}&state=s`,
      { headers: { accept: "text/html" } }
    )
    assert.strictEqual(page.status, 200)
    assert.strictEqual(value(await scrape(port), "latchkey_sessions"), before + 1)
  })
})

describe("the admin listener of a cluster (LATCHKEY_WORKERS=2)", () => {
  it("runs in the primary and sums the workers' metrics", async () => {
    const db = join(tmp.dir, "cluster.sqlite")
    const server = await spawnServer(
      {
        LATCHKEY_DB: db,
        PORT: "0",
        LATCHKEY_WORKERS: "2",
        LATCHKEY_ADMIN_PORT: "0",
        LATCHKEY_ADMIN_TOKEN: adminToken
      },
      undefined,
      { ready: (l) => /^all \d+ workers ready$/.test(l.msg ?? ""), timeoutMs: 30_000 }
    )
    try {
      const adminLines = server.lines().filter((l) => typeof l.adminPort === "number")
      assert.strictEqual(adminLines.length, 1)
      assert.isUndefined(adminLines[0]?.worker)
      const port = adminLines[0]?.adminPort as number
      const app = await createApp(db, ["--name", "Cluster", "--redirect-uri", "https://cluster.example/cb"])
      const auth = basic(app.app_key, app.app_secret)
      // New connections: the primary hands them to the workers in turn
      const ids = new Set<unknown>()
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
          method: "POST",
          headers: { authorization: auth, connection: "close", ...form },
          body: "grant_type=client_credentials"
        })
        assert.strictEqual(res.status, 200)
        ids.add(res.headers.get("x-request-id"))
      }
      const requestLines = () => server.lines().filter((l) => l.msg === "request" && ids.has(l.reqId))
      await waitUntil([server], () => requestLines().length === 6, "the request lines of the token requests")
      // Both workers served some of them, so the sum below is over both
      assert.strictEqual(new Set(requestLines().map((l) => l.worker)).size, 2)
      const samples: Array<Sample> = await scrape(port)
      assert.strictEqual(
        value(samples, "latchkey_tokens_issued_total", {
          grant_type: "client_credentials",
          app_key: app.app_key
        }),
        6
      )
      assert.strictEqual(
        value(samples, "latchkey_http_request_duration_seconds_count", { endpoint: "token", status: "200" }),
        6
      )
      // Each sample appears once: the text is one exposition, not one per process
      const text = await (
        await fetch(`http://127.0.0.1:${port}/metrics`, {
          headers: { authorization: `Bearer ${adminToken}` }
        })
      ).text()
      assert.strictEqual(
        text.split("\n").filter((l) => l.startsWith("# TYPE latchkey_tokens_issued_total")).length,
        1
      )
      assert.strictEqual(
        value(parse(text), "latchkey_tokens_issued_total", {
          grant_type: "client_credentials",
          app_key: app.app_key
        }),
        6
      )
      // Each process's start time and event loop lag stay its own, labelled by worker; one build_info
      for (const name of ["process_start_time_seconds", "nodejs_eventloop_lag_p99_seconds"]) {
        const workers = samples.filter((s) => s.name === name).map((s) => s.labels.worker)
        assert.sameMembers(workers, ["1", "2", "primary"], name)
      }
      assert.strictEqual(samples.filter((s) => s.name === "latchkey_build_info").length, 1)
      assert.strictEqual(value(samples, "latchkey_build_info"), 1)
      const unauthorized = await fetch(`http://127.0.0.1:${port}/metrics`)
      assert.strictEqual(unauthorized.status, 401)
      const apps = await fetch(`http://127.0.0.1:${port}/admin/v1/applications`, {
        headers: { authorization: `Bearer ${adminToken}` }
      })
      assert.strictEqual(apps.status, 200)
    } finally {
      assert.strictEqual(await server.stop(), 0)
    }
  }, 60_000)
})

/**
 * OpenTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, the core's spans reach an OTLP/HTTP
 * receiver (a tiny one on 127.0.0.1 accepting JSON at POST /v1/traces); without it, nothing is
 * exported.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Env from "../src/Env.js"
import { basic, createApp, spawnServer, tempDir } from "./helpers.js"

interface Received {
  readonly path: string
  readonly contentType: string | undefined
  readonly serviceName: string | undefined
  readonly spans: ReadonlyArray<string>
}

type Attribute = { readonly key: string; readonly value: { readonly stringValue?: string } }
type ExportRequest = {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<Attribute> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<{ readonly name: string }> }>
  }>
}

/** An OTLP/HTTP JSON receiver on 127.0.0.1 keeping what it was sent. */
const receiver = async () => {
  const received: Array<Received> = []
  const waiting = new Set<() => void>()
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      let body: ExportRequest = {}
      try {
        body = JSON.parse(text) as ExportRequest
      } catch {
        // not JSON: kept with no spans, and the test fails on the content type
      }
      for (const rs of body.resourceSpans ?? []) {
        received.push({
          path: req.url ?? "",
          contentType: req.headers["content-type"],
          serviceName: rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue,
          spans: (rs.scopeSpans ?? []).flatMap((s) => (s.spans ?? []).map((span) => span.name))
        })
      }
      if ((body.resourceSpans ?? []).length === 0) {
        received.push({
          path: req.url ?? "",
          contentType: req.headers["content-type"],
          serviceName: undefined,
          spans: []
        })
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end("{}")
      for (const w of waiting) w()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  /** The batches received once `condition` holds of them, checked at every batch; fails after `timeoutMs`. */
  const until = (condition: (r: ReadonlyArray<Received>) => boolean, timeoutMs = 15_000) =>
    new Promise<ReadonlyArray<Received>>((resolve, reject) => {
      const check = () => {
        if (!condition(received)) return
        clearTimeout(timer)
        waiting.delete(check)
        resolve(received)
      }
      const timer = setTimeout(() => {
        waiting.delete(check)
        reject(new Error(`not received within ${timeoutMs} ms: ${JSON.stringify(received)}`))
      }, timeoutMs)
      waiting.add(check)
      check()
    })
  return {
    port,
    received,
    until,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("Env: OpenTelemetry", () => {
  it("is off without an endpoint, and reads the endpoint, the service name and the protocol", () => {
    assert.isNull(Env.read({}).otel)
    assert.isNull(Env.read({ OTEL_SERVICE_NAME: "x" }).otel)
    assert.isNull(
      Env.read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }).otel
    )
    assert.deepStrictEqual(Env.read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).otel, {
      tracesUrl: "http://127.0.0.1:4318/v1/traces",
      serviceName: "latchkey"
    })
    assert.deepStrictEqual(
      Env.read({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example/otlp/",
        OTEL_SERVICE_NAME: "auth-eu",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json"
      }).otel,
      { tracesUrl: "https://collector.example/otlp/v1/traces", serviceName: "auth-eu" }
    )
    assert.deepStrictEqual(
      Env.read({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/custom" }).otel?.tracesUrl,
      "http://127.0.0.1:4318/custom"
    )
    for (const [bad, name] of [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://collector:4317" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        "OTEL_EXPORTER_OTLP_PROTOCOL"
      ],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" }, "OTEL_EXPORTER_OTLP_PROTOCOL"],
      [{ OTEL_SDK_DISABLED: "yes" }, "OTEL_SDK_DISABLED"]
    ] as const) {
      assert.throws(
        () => Env.read(bad),
        Env.EnvError,
        new RegExp(`^${name} must .*\\(got "`),
        JSON.stringify(bad)
      )
    }
  })
})

describe("trace export over OTLP/HTTP", () => {
  const tmp = tempDir()
  let otlp: Awaited<ReturnType<typeof receiver>>
  beforeAll(async () => {
    otlp = await receiver()
  })
  afterAll(async () => {
    await otlp.close()
    tmp.cleanup()
  })

  it("sends the token request's span, as JSON, under the service name latchkey", async () => {
    const db = join(tmp.dir, "otel.sqlite")
    const app = await createApp(db, ["--name", "Traced", "--redirect-uri", "https://traced.example/cb"])
    const server = await spawnServer({
      LATCHKEY_DB: db,
      PORT: "0",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      // Batches every 100 ms instead of 5 s, so the test waits less
      OTEL_BSP_SCHEDULE_DELAY: "100"
    })
    try {
      const res = await fetch(`${server.base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: {
          authorization: basic(app.app_key, app.app_secret),
          "content-type": "application/x-www-form-urlencoded"
        },
        body: "grant_type=client_credentials"
      })
      assert.strictEqual(res.status, 200)
      const batches = await otlp.until((r) => r.some((b) => b.spans.includes("Http.token")))
      const batch = batches.find((b) => b.spans.includes("Http.token")) as Received
      assert.strictEqual(batch.path, "/v1/traces")
      assert.match(batch.contentType ?? "", /^application\/json/)
      assert.strictEqual(batch.serviceName, "latchkey")
      assert.isTrue(server.lines().some((l) => l.msg === "exporting traces over OTLP/HTTP"))
    } finally {
      assert.strictEqual(await server.stop(), 0)
    }
  }, 30_000)

  it("flushes the spans still batched when the server stops, under OTEL_SERVICE_NAME", async () => {
    const db = join(tmp.dir, "otel-stop.sqlite")
    const app = await createApp(db, ["--name", "Flushed", "--redirect-uri", "https://flushed.example/cb"])
    const server = await spawnServer({
      LATCHKEY_DB: db,
      PORT: "0",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_SERVICE_NAME: "latchkey-flush-test",
      // No scheduled export during the test: only the flush at shutdown sends the span
      OTEL_BSP_SCHEDULE_DELAY: "600000"
    })
    const res = await fetch(`${server.base}/oauth2/oauth2/introspect`, {
      method: "POST",
      headers: {
        authorization: basic(app.app_key, app.app_secret),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "token=unknown"
    })
    assert.strictEqual(res.status, 200)
    const mine = (r: ReadonlyArray<Received>) => r.filter((b) => b.serviceName === "latchkey-flush-test")
    assert.deepStrictEqual(mine(otlp.received), [])
    assert.strictEqual(await server.stop(), 0)
    const batches = mine(await otlp.until((r) => mine(r).some((b) => b.spans.includes("Http.introspection"))))
    assert.isTrue(batches.some((b) => b.spans.includes("Http.introspection")))
  }, 30_000)

  it("exports nothing without OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
    const db = join(tmp.dir, "no-otel.sqlite")
    const server = await spawnServer({ LATCHKEY_DB: db, PORT: "0", OTEL_SERVICE_NAME: "latchkey-off-test" })
    try {
      assert.strictEqual((await fetch(`${server.base}/.well-known/oauth-authorization-server`)).status, 200)
    } finally {
      assert.strictEqual(await server.stop(), 0)
    }
    assert.isFalse(server.lines().some((l) => l.msg === "exporting traces over OTLP/HTTP"))
    assert.isFalse(otlp.received.some((b) => b.serviceName === "latchkey-off-test"))
  }, 30_000)
})

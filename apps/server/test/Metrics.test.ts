import { assert, describe, it } from "@effect/vitest"
import { Audit, Memory, TokenStore } from "@latchkey/core"
import { Effect, Layer, Logger } from "effect"
import * as Metrics from "../src/Metrics.js"
import * as Observed from "../src/Observed.js"
import { parse, value } from "./prometheus.js"

const samples = async (m: Metrics.Metrics) => parse(await m.registry.metrics())

describe("Metrics labels", () => {
  it("names endpoints from a fixed set, under the issuer's path; any other path is other", () => {
    for (const [path, prefix, endpoint] of [
      ["/oauth2/oauth2/token", "", "token"],
      ["/auth/oauth2/oauth2/token", "/auth", "token"],
      ["/oauth2/oauth2/token", "/auth", "other"],
      ["/auth/oauth2/oauth2/introspect", "/auth", "introspect"],
      ["/oauth2/oauth2/revoke", "", "revoke"],
      ["/.well-known/oauth-authorization-server", "", "metadata"],
      ["/oauth2/oauth2/authorize", "", "authorize"],
      ["/oauth2/oauth2/login", "", "login"],
      ["/auth/oauth2/oauth2/consents", "/auth", "consents"],
      ["/openapi.json", "", "openapi"],
      ["/api/me", "", "api_me"],
      ["/healthz", "/auth", "healthz"],
      ["/readyz", "", "readyz"],
      ["/oauth2/oauth2/token/", "", "other"],
      ["/admin/v1/applications", "", "other"],
      ["/metrics", "", "other"],
      [`/${"x".repeat(5000)}`, "", "other"]
    ] as const) {
      assert.strictEqual(Metrics.endpointOf(path, prefix), endpoint, `${prefix} ${path}`)
    }
  })

  it("keeps methods and grant types to fixed sets", async () => {
    const m = Metrics.make({ defaults: false })
    m.request("token", "PROPFIND", 405, 0.01)
    m.request("token", "POST", 200, 0.01)
    m.tokenIssued("urn:made:up", "app-1")
    const s = await samples(m)
    assert.strictEqual(value(s, "latchkey_http_request_duration_seconds_count", { method: "other" }), 1)
    assert.strictEqual(value(s, "latchkey_http_request_duration_seconds_count", { method: "POST" }), 1)
    assert.strictEqual(value(s, "latchkey_tokens_issued_total", { grant_type: "other", app_key: "app-1" }), 1)
  })
})

describe("Metrics over the services", () => {
  it("times every store call by Store.method, failed or not, without changing its result", async () => {
    const m = Metrics.make({ defaults: false })
    const program = Effect.gen(function* () {
      const tokens = yield* TokenStore.TokenStore
      const found = yield* tokens.find("access", "no-such-hash")
      assert.isTrue(found._tag === "None")
      yield* tokens.find("refresh", "no-such-hash")
      return yield* tokens.purgeExpired(0, 10)
    })
    const purged = await Effect.runPromise(
      program.pipe(Effect.provide(Observed.timedStorage(Memory.layer, m)))
    )
    assert.strictEqual(purged, 0)
    const s = await samples(m)
    const count = "latchkey_storage_operation_duration_seconds_count"
    assert.strictEqual(value(s, count, { operation: "TokenStore.find" }), 2)
    assert.strictEqual(value(s, count, { operation: "TokenStore.purgeExpired" }), 1)
    assert.strictEqual(value(s, count), 3)
  })

  it("counts audit events kept: record at once, recordWith only once its write succeeded", async () => {
    const m = Metrics.make({ defaults: false })
    const audit = Audit.layerWriting(Observed.countingLines(() => {}, m)).pipe(
      Layer.provide(Memory.auditLayer)
    )
    const event = (type: Audit.EventType, detail: string | null): Audit.AuditEvent => ({
      at: 1,
      type,
      appKey: "app-1",
      userId: null,
      openId: null,
      address: null,
      requestId: null,
      detail
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const log = yield* Audit.AuditLog
        yield* log.record(event("client_auth_throttled", null))
        yield* log.record(event("signin_throttled", null))
        yield* log.recordWith([event("token_issued", "password")], Effect.void)
        yield* Effect.flip(log.recordWith([event("token_issued", "password")], Effect.fail("write failed")))
      }).pipe(Effect.provide(audit), Effect.provide(Logger.replace(Logger.defaultLogger, Logger.none)))
    )
    const s = await samples(m)
    assert.strictEqual(
      value(s, "latchkey_tokens_issued_total", { grant_type: "password", app_key: "app-1" }),
      1
    )
    assert.strictEqual(value(s, "latchkey_throttle_events_total", { kind: "client_auth" }), 1)
    assert.strictEqual(value(s, "latchkey_throttle_events_total", { kind: "signin" }), 1)
    assert.strictEqual(value(s, "latchkey_audit_events_total"), 3)
  })

  it("sums the registries of several processes into one exposition", async () => {
    const a = Metrics.make({ defaults: false })
    const b = Metrics.make({ defaults: false })
    a.tokenIssued("client_credentials", "app-1")
    b.tokenIssued("client_credentials", "app-1")
    b.tokenIssued("password", "app-2")
    const text = await Metrics.exposition([
      await a.registry.getMetricsAsJSON(),
      await b.registry.getMetricsAsJSON()
    ])
    const s = parse(text)
    assert.strictEqual(value(s, "latchkey_tokens_issued_total", { app_key: "app-1" }), 2)
    assert.strictEqual(value(s, "latchkey_tokens_issued_total", { app_key: "app-2" }), 1)
  })

  it("keeps what prom-client would average or omit across processes by worker, and sums the rest", async () => {
    const a = Metrics.make()
    const b = Metrics.make()
    a.tokenIssued("client_credentials", "app-1")
    b.tokenIssued("client_credentials", "app-1")
    const s = parse(
      await Metrics.exposition([
        Metrics.ofProcess("1", await a.registry.getMetricsAsJSON()),
        Metrics.ofProcess("2", await b.registry.getMetricsAsJSON())
      ])
    )
    for (const name of [
      "process_start_time_seconds",
      "nodejs_eventloop_lag_mean_seconds",
      "nodejs_eventloop_lag_p50_seconds"
    ]) {
      assert.sameMembers(
        s.filter((x) => x.name === name).map((x) => x.labels.worker),
        ["1", "2"],
        name
      )
    }
    assert.strictEqual(value(s, "latchkey_tokens_issued_total", { app_key: "app-1" }), 2)
    assert.isTrue(
      s.filter((x) => x.name === "latchkey_tokens_issued_total").every((x) => x.labels.worker === undefined)
    )
    assert.deepStrictEqual(
      s.filter((x) => x.name === "latchkey_build_info").map((x) => x.value),
      [1]
    )
  })
})

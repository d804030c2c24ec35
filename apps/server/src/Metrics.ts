/**
 * Prometheus metrics of one server process (prom-client, on a registry of its own, every name
 * prefixed `latchkey_`): tokens issued, OAuth errors, throttle and audit events, request and
 * storage latency, pending sign-in sessions, and prom-client's default process metrics. Every
 * label takes values from a fixed set, except `app_key`, bounded by the registered applications.
 */
import {
  ApplicationStore,
  Audit,
  AuditStore,
  CodeStore,
  ConsentStore,
  type Http,
  Interaction,
  Metadata,
  OpenApi,
  OpenIdStore,
  SessionStore,
  SettingStore,
  type StorageError,
  ThrottleStore,
  TokenStore,
  UserStore
} from "@latchkey/core"
import { Context, Effect, Layer } from "effect"
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry
} from "prom-client"

/** The endpoint names of the request histogram: a fixed set, never a raw path. */
export const endpoints = [
  "token",
  "introspect",
  "revoke",
  "metadata",
  "authorize",
  "login",
  "consents",
  "openapi",
  "api_me",
  "healthz",
  "readyz",
  "other"
] as const
/** One of `endpoints`. */
export type Endpoint = (typeof endpoints)[number]

/** The grant types a `token_issued` event names; anything else counts as "other". */
export const grantTypes: ReadonlyArray<string> = [
  "authorization_code",
  "implicit",
  "password",
  "client_credentials",
  "refresh_token"
]

/** The error codes the core answers (RFC 6749 §5.2, §4.1.2.1, RFC 6750 §3.1); anything else counts as "other". */
export const errorCodes: ReadonlyArray<string> = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "unsupported_response_type",
  "invalid_scope",
  "access_denied",
  "server_error",
  "temporarily_unavailable",
  "invalid_token",
  "insufficient_scope"
]

const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** The endpoint name of a request path (without the query string) under the issuer's path `prefix`. */
export const endpointOf = (path: string, prefix: string): Endpoint => {
  if (path === OpenApi.serverPaths.healthz) return "healthz"
  if (path === OpenApi.serverPaths.readyz) return "readyz"
  if (!path.startsWith(prefix)) return "other"
  switch (path.slice(prefix.length)) {
    case Metadata.paths.token:
      return "token"
    case Metadata.paths.introspect:
      return "introspect"
    case Metadata.paths.revoke:
      return "revoke"
    case Metadata.paths.metadata:
      return "metadata"
    case Metadata.paths.authorize:
      return "authorize"
    case Metadata.paths.login:
      return "login"
    case Interaction.consentsPath:
      return "consents"
    case OpenApi.serverPaths.openapi:
      return "openapi"
    case OpenApi.serverPaths.me:
      return "api_me"
    default:
      return "other"
  }
}

/** `code` when it is one of `errorCodes`, else "other". */
export const errorLabel = (code: string): string => (errorCodes.includes(code) ? code : "other")

/** The method label: the usual methods as they are, anything else "other". */
export const methodLabel = (method: string | undefined): string =>
  method !== undefined && methods.has(method) ? method : "other"

/** The OAuth error code of a core JSON response (`{"error": …}` with a 4xx or 5xx status), if any. */
export const errorOfResponse = (response: Http.HttpResponse): string | undefined => {
  if (response.status < 400 || response.body === "") return undefined
  try {
    const body: unknown = JSON.parse(response.body)
    const error = (body as { error?: unknown } | null)?.error
    return typeof error === "string" ? errorLabel(error) : undefined
  } catch {
    return undefined
  }
}

/**
 * The OAuth error code of a response the pages or the resource wrote: `error=` in the query or
 * fragment of a redirect (RFC 6749 §4.1.2.1, §4.2.2.1), or in a Bearer challenge (RFC 6750 §3).
 */
export const errorOfHeaders = (
  location: string | undefined,
  wwwAuthenticate: string | undefined
): string | undefined => {
  if (location !== undefined) {
    try {
      const url = new URL(location, "http://localhost")
      const error =
        url.searchParams.get("error") ?? new URLSearchParams(url.hash.replace(/^#/, "")).get("error")
      if (error !== null) return errorLabel(error)
    } catch {
      // not a URL: no error to read
    }
  }
  const challenge = wwwAuthenticate === undefined ? null : /\berror="([^"]*)"/.exec(wwwAuthenticate)
  return challenge === null ? undefined : errorLabel(challenge[1] as string)
}

/** Where the sessions gauge reads from at each scrape. */
export type SessionStats = () => Promise<{ readonly sessions: number; readonly pendingBytes: number }>

/** The metrics of one process. */
export interface Metrics {
  readonly registry: Registry
  /** A `token_issued` audit event: one more token response for the grant type and application. */
  readonly tokenIssued: (grantType: string, appKey: string) => void
  /** An OAuth error answered by `endpoint`. */
  readonly oauthError: (endpoint: Endpoint, error: string) => void
  /** Any audit event; throttle events also count in `latchkey_throttle_events_total`. */
  readonly auditEvent: (type: Audit.EventType) => void
  /** One request of the public listener, `seconds` from its first byte to the end of its response. */
  readonly request: (endpoint: Endpoint, method: string | undefined, status: number, seconds: number) => void
  /** One call of a store method (`TokenStore.insert`), failed or not. */
  readonly storage: (operation: string, seconds: number) => void
  /** Read the sessions gauge from `stats` at each scrape (errors leave the last value). */
  readonly bindSessions: (stats: SessionStats) => void
}

/** Options of `make`. */
export interface MakeOptions {
  /** Collect prom-client's default process metrics, under their usual names (`process_*`, `nodejs_*`; default true). */
  readonly defaults?: boolean
}

/** A fresh registry with every Latchkey metric. */
export const make = (options: MakeOptions = {}): Metrics => {
  const registry = new Registry()
  if (options.defaults !== false) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const tokens = new Counter({
    name: "latchkey_tokens_issued_total",
    help: "Token responses issued, by grant type and application (App Key)",
    labelNames: ["grant_type", "app_key"] as const,
    registers
  })
  const errors = new Counter({
    name: "latchkey_oauth_errors_total",
    help: "OAuth error responses, by endpoint and error code",
    labelNames: ["endpoint", "error"] as const,
    registers
  })
  const throttle = new Counter({
    name: "latchkey_throttle_events_total",
    help: "Throttled attempts: client authentications (client_auth) and sign-ins (signin)",
    labelNames: ["kind"] as const,
    registers
  })
  const audit = new Counter({
    name: "latchkey_audit_events_total",
    help: "Audit events recorded, by type",
    labelNames: ["type"] as const,
    registers
  })
  const requests = new Histogram({
    name: "latchkey_http_request_duration_seconds",
    help: "Duration of the public listener's requests, by endpoint, method and status",
    labelNames: ["endpoint", "method", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers
  })
  const storage = new Histogram({
    name: "latchkey_storage_operation_duration_seconds",
    help: "Duration of store calls, by operation (Store.method)",
    labelNames: ["operation"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers
  })
  let stats: SessionStats | undefined
  let last: { sessions: number; pendingBytes: number } | undefined
  const read = async () => {
    if (stats === undefined) return last
    try {
      last = await stats()
    } catch {
      // the store is down: keep the last value (readiness tells the rest)
    }
    return last
  }
  // Every process on one store reads the same rows: across workers the highest reading counts
  new Gauge({
    name: "latchkey_sessions",
    help: "Sign-in sessions of the pages in the store (signed in or pending), read at each scrape",
    aggregator: "max",
    registers,
    async collect() {
      const now = await read()
      if (now !== undefined) this.set(now.sessions)
    }
  })
  new Gauge({
    name: "latchkey_session_pending_bytes",
    help: "Characters of pending authorization requests held by sign-in sessions, read at each scrape",
    aggregator: "max",
    registers,
    async collect() {
      if (last !== undefined) this.set(last.pendingBytes)
    }
  })
  // The labelled series of the two histograms observed on every request, each looked up once: every
  // label is from a fixed set, so these stay as small as the series themselves
  const requestChildren = new Map<string, Histogram.Internal<string>>()
  const storageChildren = new Map<string, Histogram.Internal<string>>()
  return {
    registry,
    tokenIssued: (grantType, appKey) =>
      tokens.inc({ grant_type: grantTypes.includes(grantType) ? grantType : "other", app_key: appKey }),
    oauthError: (endpoint, error) => errors.inc({ endpoint, error: errorLabel(error) }),
    auditEvent: (type) => {
      audit.inc({ type })
      if (type === "client_auth_throttled") throttle.inc({ kind: "client_auth" })
      if (type === "signin_throttled") throttle.inc({ kind: "signin" })
    },
    request: (endpoint, method, status, seconds) => {
      const m = methodLabel(method)
      const key = `${endpoint} ${m} ${status}`
      let child = requestChildren.get(key)
      if (child === undefined) {
        child = requests.labels({ endpoint, method: m, status: String(status) })
        requestChildren.set(key, child)
      }
      child.observe(seconds)
    },
    storage: (operation, seconds) => {
      let child = storageChildren.get(operation)
      if (child === undefined) {
        child = storage.labels({ operation })
        storageChildren.set(operation, child)
      }
      child.observe(seconds)
    },
    bindSessions: (s) => {
      stats = s
    }
  }
}

/** The metrics of one or more registries (a cluster's workers and its primary) in the Prometheus text format. */
export const exposition = async (
  parts: ReadonlyArray<ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>>
): Promise<string> => AggregatorRegistry.aggregate(parts.map((p) => [...p])).metrics()

/** The content type of `exposition` and `Registry.metrics()`. */
export const contentType: string = Registry.PROMETHEUS_CONTENT_TYPE

// ---------------------------------------------------------------------------------------------
// Effect wrappers: the store services and the audit log, observed from the outside, so neither
// the core nor the storage adapters know about metrics.

const methodNames = (service: object): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (let o: object | null = service; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name !== "constructor") names.add(name)
    }
  }
  return [...names]
}

/**
 * `service` with every method that returns an Effect timed into `latchkey_storage_operation_duration_seconds`
 * as `<name>.<method>`; the timing is synchronous around the effect, so a store that runs it inside a
 * transaction still can.
 */
export const timeService = <S extends object>(name: string, service: S, metrics: Metrics): S => {
  const timed: Record<string, unknown> = {}
  for (const key of methodNames(service)) {
    const value = (service as Record<string, unknown>)[key]
    if (typeof value !== "function") {
      timed[key] = value
      continue
    }
    const operation = `${name}.${key}`
    timed[key] = (...args: ReadonlyArray<unknown>) => {
      const result: unknown = value.apply(service, args)
      if (!Effect.isEffect(result)) return result
      // One match around the call (not onExit's uninterruptible region): this runs on every store
      // call of every request. An interrupted call is not timed.
      return Effect.suspend(() => {
        const start = performance.now()
        const done = () => metrics.storage(operation, (performance.now() - start) / 1000)
        return Effect.matchCauseEffect(result as Effect.Effect<unknown, unknown, unknown>, {
          onFailure: (cause) => {
            done()
            return Effect.failCause(cause)
          },
          onSuccess: (value) => {
            done()
            return Effect.succeed(value)
          }
        })
      })
    }
  }
  return timed as S
}

/** The stores of a storage layer, each timed by `timeService`; the rest of its output passes through. */
export const timedStorage = <ROut, E, RIn>(
  storage: Layer.Layer<ROut, E, RIn>,
  metrics: Metrics
): Layer.Layer<ROut, E, RIn> => {
  const wrap = Layer.effectContext(
    Effect.map(Effect.context<ROut>(), (context) => {
      let out = context
      const tags = [
        ["ApplicationStore", ApplicationStore.ApplicationStore],
        ["UserStore", UserStore.UserStore],
        ["CodeStore", CodeStore.CodeStore],
        ["TokenStore", TokenStore.TokenStore],
        ["ConsentStore", ConsentStore.ConsentStore],
        ["OpenIdStore", OpenIdStore.OpenIdStore],
        ["SettingStore", SettingStore.SettingStore],
        ["SessionStore", SessionStore.SessionStore],
        ["ThrottleStore", ThrottleStore.ThrottleStore],
        ["AuditStore", AuditStore.AuditStore]
      ] as unknown as ReadonlyArray<readonly [string, Context.Tag<unknown, object>]>
      for (const [name, tag] of tags) {
        const service = Context.getOption(out, tag)
        if (service._tag === "Some") out = Context.add(out, tag, timeService(name, service.value, metrics))
      }
      return out
    })
  )
  return Layer.provide(wrap, storage)
}

/** The AuditLog `log`, counting each event it keeps: `record` always, `recordWith` once its write committed. */
export const countingAuditLog = (
  log: Context.Tag.Service<Audit.AuditLog>,
  metrics: Metrics
): Context.Tag.Service<Audit.AuditLog> => {
  const count = (events: ReadonlyArray<Audit.AuditEvent>) =>
    Effect.sync(() => {
      for (const event of events) {
        metrics.auditEvent(event.type)
        if (event.type === "token_issued") metrics.tokenIssued(event.detail ?? "other", event.appKey ?? "")
      }
    })
  return {
    record: (event) => Effect.zipRight(log.record(event), count([event])),
    recordWith: <A, E>(events: ReadonlyArray<Audit.AuditEvent>, write: Effect.Effect<A, E>) =>
      Effect.tap(log.recordWith(events, write), () => count(events))
  }
}

/** The audit layer with `countingAuditLog` over it. */
export const countingAudit = <E, R>(
  audit: Layer.Layer<Audit.AuditLog, E, R>,
  metrics: Metrics
): Layer.Layer<Audit.AuditLog, E, R> =>
  Layer.effect(
    Audit.AuditLog,
    Effect.map(Audit.AuditLog, (log) => countingAuditLog(log, metrics))
  ).pipe(Layer.provide(audit))

/** Read the sessions gauge through `run` (a runtime of the store). */
export const sessionStats =
  (
    run: <A>(effect: Effect.Effect<A, StorageError.StorageError, SessionStore.SessionStore>) => Promise<A>
  ): SessionStats =>
  () =>
    run(Effect.flatMap(SessionStore.SessionStore, (s) => s.stats()))

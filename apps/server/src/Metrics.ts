/**
 * Prometheus metrics of one server process (prom-client, on a registry of its own, every name
 * prefixed `latchkey_`): tokens issued, OAuth errors, throttle and audit events, request and
 * storage latency, pending sign-in sessions, and prom-client's default process metrics. Every
 * label takes values from a fixed set the core declares (paths, grant types, error codes), except
 * `app_key`, bounded by the registered applications.
 */
import { Application, type Audit, type BackchannelLogout, type OAuthError, Paths } from "@latchkey/core"
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
import { version } from "./Version.js"

// The endpoint label of each path under the issuer's: the core's names of the OAuth endpoints, and the rest
const underIssuer = {
  ...Paths.oauth,
  consents: Paths.consents,
  account: Paths.account,
  openapi: Paths.openapi,
  api_me: Paths.me
} as const
const byPath = new Map<string, Endpoint>(
  Object.entries(underIssuer).map(([endpoint, path]) => [path, endpoint as Endpoint])
)

/** The endpoint label of the request histogram: a fixed set, never a raw path. */
export type Endpoint = keyof typeof underIssuer | "healthz" | "readyz" | "other"

/** The endpoint name of a request path (without the query string) under the issuer's path `prefix`. */
export const endpointOf = (path: string, prefix: string): Endpoint => {
  if (path === Paths.healthz) return "healthz"
  if (path === Paths.readyz) return "readyz"
  return path.startsWith(prefix) ? (byPath.get(path.slice(prefix.length)) ?? "other") : "other"
}

const grantTypes: ReadonlyArray<string> = Application.GrantType.literals
const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** Where the sessions gauge reads from at each scrape. */
export type SessionStats = () => Promise<{ readonly sessions: number; readonly pendingBytes: number }>

/** The metrics of one process. */
export interface Metrics {
  readonly registry: Registry
  /** A `token_issued` audit event: one more token response for the grant type ("other" if unknown) and application. */
  readonly tokenIssued: (grantType: string, appKey: string) => void
  /** An OAuth error answered by `endpoint`, by the code the core answered with. */
  readonly oauthError: (endpoint: Endpoint, error: OAuthError.Code) => void
  /** Any audit event; throttle events also count in `latchkey_throttle_events_total`. */
  readonly auditEvent: (type: Audit.EventType) => void
  /** One request of the public listener, `seconds` from its first byte to the end of its response; unusual methods are "other". */
  readonly request: (endpoint: Endpoint, method: string | undefined, status: number, seconds: number) => void
  /**
   * The observer of the calls of one store method (`TokenStore.insert`), failed or not: got once
   * per method, called with each call's seconds.
   */
  readonly storage: (operation: string) => (seconds: number) => void
  /** Read the sessions gauge from `stats` at each scrape (errors leave the last value). */
  readonly bindSessions: (stats: SessionStats) => void
  /** One run of the back-channel logout worker: its deliveries by outcome. */
  readonly backchannelOutcome: (outcome: BackchannelLogout.Outcome) => void
  /** Read the pending back-channel logout deliveries gauge from `pending` at each scrape (errors leave the last value). */
  readonly bindBackchannel: (pending: () => Promise<number>) => void
}

/** Options of `make`. */
export interface MakeOptions {
  /** Collect prom-client's default process metrics, under their usual names (`process_*`, `nodejs_*`; default true). */
  readonly defaults?: boolean
}

/** The registries a metric is registered in: the process's one. */
type Registers = Array<Registry>

/** A histogram: `observe` one value under its labels, or `of` labels the observer of their series. */
interface Observer<L extends string> {
  readonly observe: (labels: Record<L, string>, seconds: number) => void
  readonly of: (labels: Record<L, string>) => (seconds: number) => void
}

/**
 * A histogram registered in `registers`. The labelled series of each histogram are looked up
 * once: every label is from a fixed set.
 */
const histogram = <L extends string>(
  registers: Registers,
  name: string,
  help: string,
  labelNames: ReadonlyArray<L>,
  buckets: Array<number>
): Observer<L> => {
  const h = new Histogram({ name, help, labelNames, buckets, registers })
  const children = new Map<string, Histogram.Internal<L>>()
  const child = (labels: Record<L, string>): Histogram.Internal<L> => {
    const key = Object.values(labels).join(" ")
    let found = children.get(key)
    if (found === undefined) {
      found = h.labels(labels as Partial<Record<L, string>>)
      children.set(key, found)
    }
    return found
  }
  return {
    observe: (labels, seconds) => child(labels).observe(seconds),
    of: (labels) => {
      const series = child(labels)
      return (seconds) => series.observe(seconds)
    }
  }
}

/** The counters: tokens issued, OAuth errors, throttle events, audit events. */
const counters = (registers: Registers) => {
  const counter = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>) =>
    new Counter({ name: `latchkey_${name}_total`, help, labelNames, registers })
  return {
    tokens: counter("tokens_issued", "Token responses issued, by grant type and application (App Key)", [
      "grant_type",
      "app_key"
    ]),
    errors: counter("oauth_errors", "OAuth error responses, by endpoint and error code", [
      "endpoint",
      "error"
    ]),
    throttle: counter(
      "throttle_events",
      "Throttled attempts: client authentications (client_auth) and sign-ins (signin)",
      ["kind"]
    ),
    audit: counter("audit_events", "Audit events recorded, by type", ["type"])
  }
}

/** The histograms: request durations of the public listener, store call durations. */
const histograms = (registers: Registers) => ({
  requests: histogram(
    registers,
    "latchkey_http_request_duration_seconds",
    "Duration of the public listener's requests, by endpoint, method and status",
    ["endpoint", "method", "status"],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
  ),
  storage: histogram(
    registers,
    "latchkey_storage_operation_duration_seconds",
    "Duration of store calls, by operation (Store.method)",
    ["operation"],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
  )
})

/**
 * The session gauges, read from the stats bound with the function returned at each scrape.
 * Every process on one store reads the same rows: across workers the highest reading counts.
 */
const sessionGauges = (registers: Registers): ((stats: SessionStats) => void) => {
  let stats: SessionStats | undefined
  let last: { sessions: number; pendingBytes: number } | undefined
  new Gauge({
    name: "latchkey_sessions",
    help: "Sign-in sessions of the pages in the store (signed in or pending), read at each scrape",
    aggregator: "max",
    registers,
    async collect() {
      // the store is down: keep the last value (readiness tells the rest)
      if (stats !== undefined) last = await stats().catch(() => last)
      if (last !== undefined) this.set(last.sessions)
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
  return (s) => {
    stats = s
  }
}

/**
 * `latchkey_backchannel_logout_pending`, read from the store at each scrape (the same rows for every
 * process: the highest reading counts), and the counter of delivery outcomes.
 */
const backchannelMetrics = (registers: Registers) => {
  let pending: (() => Promise<number>) | undefined
  let last: number | undefined
  new Gauge({
    name: "latchkey_backchannel_logout_pending",
    help: "Back-channel logout tokens waiting to be delivered (due, claimed or waiting for a retry), read at each scrape",
    aggregator: "max",
    registers,
    async collect() {
      if (pending !== undefined) last = await pending().catch(() => last)
      if (last !== undefined) this.set(last)
    }
  })
  const outcomes = new Counter({
    name: "latchkey_backchannel_logout_deliveries_total",
    help: "Back-channel logout delivery attempts, by outcome: delivered, retried (will be tried again) or given_up",
    labelNames: ["outcome"],
    registers
  })
  return {
    outcome: ({ delivered, retried, gaveUp }: BackchannelLogout.Outcome) => {
      if (delivered > 0) outcomes.inc({ outcome: "delivered" }, delivered)
      if (retried > 0) outcomes.inc({ outcome: "retried" }, retried)
      if (gaveUp > 0) outcomes.inc({ outcome: "given_up" }, gaveUp)
    },
    bind: (p: () => Promise<number>) => {
      pending = p
    }
  }
}

/** `latchkey_build_info`: 1, labelled with the server's version and Node.js's; the same in every process. */
const buildInfo = (registers: Registers): void => {
  new Gauge({
    name: "latchkey_build_info",
    help: "The running server: its version and the Node.js version, as labels (always 1)",
    labelNames: ["version", "nodejs_version"],
    aggregator: "max",
    registers
  }).set({ version, nodejs_version: process.version }, 1)
}

/** A fresh registry with every Latchkey metric. */
export const make = (options: MakeOptions = {}): Metrics => {
  const registry = new Registry()
  if (options.defaults !== false) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  buildInfo(registers)
  const { tokens, errors, throttle, audit } = counters(registers)
  const { requests, storage } = histograms(registers)
  const bindSessions = sessionGauges(registers)
  const backchannel = backchannelMetrics(registers)
  return {
    registry,
    tokenIssued: (grantType, appKey) =>
      tokens.inc({ grant_type: grantTypes.includes(grantType) ? grantType : "other", app_key: appKey }),
    oauthError: (endpoint, error) => errors.inc({ endpoint, error }),
    auditEvent: (type) => {
      audit.inc({ type })
      if (type === "client_auth_throttled") throttle.inc({ kind: "client_auth" })
      if (type === "signin_throttled") throttle.inc({ kind: "signin" })
    },
    request: (endpoint, method, status, seconds) =>
      requests.observe(
        {
          endpoint,
          method: method !== undefined && methods.has(method) ? method : "other",
          status: String(status)
        },
        seconds
      ),
    storage: (operation) => storage.of({ operation }),
    bindSessions,
    backchannelOutcome: backchannel.outcome,
    bindBackchannel: backchannel.bind
  }
}

/**
 * The metrics of one process of a cluster, `worker` its worker id (or "primary"), made ready for
 * `exposition`: a metric prom-client would average or omit across processes (the event loop lag
 * percentiles, `process_start_time_seconds`) gets a `worker` label instead, so each process's
 * value stays; the others are summed (or their min, max or first taken) as prom-client declares.
 */
export const ofProcess = (
  worker: string,
  metrics: ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>
): ReadonlyArray<MetricObjectWithValues<MetricValue<string>>> =>
  metrics.map((metric) =>
    metric.aggregator === "average" || metric.aggregator === "omit"
      ? {
          ...metric,
          aggregator: "sum",
          values: metric.values.map((v) => ({ ...v, labels: { ...v.labels, worker } }))
        }
      : metric
  )

/** The metrics of one or more registries (a cluster's workers and its primary) in the Prometheus text format. */
export const exposition = async (
  parts: ReadonlyArray<ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>>
): Promise<string> => AggregatorRegistry.aggregate(parts.map((p) => [...p])).metrics()

/** The content type of `exposition` and `Registry.metrics()`. */
export const contentType: string = Registry.PROMETHEUS_CONTENT_TYPE

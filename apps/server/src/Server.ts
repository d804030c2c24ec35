/**
 * Running the server: listen, build the services, sweep expired rows and audit
 * events past the retention on a schedule, and shut down gracefully (stop
 * accepting, finish in-flight requests, close the database). With LATCHKEY_ADMIN_PORT
 * set it also runs the admin listener (`AdminServer`), and with OTEL_EXPORTER_OTLP_ENDPOINT
 * the trace export (`Tracing`).
 */
import type { RequestListener, Server } from "node:http"
import { Admin, Audit, AuditStore, BackchannelLogout, Sweep, Throttle, Time } from "@latchkey/core"
import { LogoutSender } from "@latchkey/node"
import { Duration, Effect, Fiber, Schedule } from "effect"
import * as AdminServer from "./AdminServer.js"
import * as App from "./App.js"
import { describeStore, type ServerEnv } from "./Env.js"
import { boundedServer, closeGracefully, listen } from "./Listen.js"
import type { Log } from "./Log.js"
import type * as Metrics from "./Metrics.js"
import * as Services from "./Services.js"
import { version } from "./Version.js"

/** Interval of the sweep of expired codes, tokens and sign-in sessions, and of old audit events. */
const sweepInterval = Duration.minutes(5)
/** Most codes, most tokens, most sessions and most audit events one sweep deletes. */
export const sweepLimit = 1000

/**
 * Delete expired codes, tokens, sign-in sessions and pending authorizations, trusted devices, and
 * throttle counters neither locked nor failed within the policy's window, at most `sweepLimit` of each: the core's
 * `Sweep.expired`; tombstones stay until their expiry.
 */
export const sweepExpired = Effect.flatMap(Throttle.ThrottlePolicy, ({ window }) =>
  Sweep.expired({ limit: sweepLimit, throttleWindow: window })
)

/**
 * Delete audit events recorded more than `retentionDays` days ago (`at < now - retentionDays * 86400`
 * by the Clock), at most `sweepLimit`, oldest first. The database refuses, with StorageError, to
 * delete any event inside the retention it was opened with (LATCHKEY_AUDIT_RETENTION_DAYS).
 */
export const sweepAudit = (retentionDays: number) =>
  Effect.gen(function* () {
    const now = yield* Time.nowSeconds
    return yield* Effect.flatMap(AuditStore.AuditStore, (s) =>
      s.purgeBefore(now - retentionDays * 86_400, sweepLimit)
    )
  })

/**
 * Every `sweepInterval`: the expired rows (`sweepExpired`), then the audit events past
 * `retentionDays` (`sweepAudit`), each logged when it deleted anything and warned about when it
 * failed; a failure never stops the schedule.
 */
const sweeps = (retentionDays: number) => {
  const expired = sweepExpired.pipe(
    Effect.tap(({ codes, tokens, throttle, sessions, keys, devices }) =>
      codes + tokens + throttle + sessions + keys + devices > 0
        ? Effect.logInfo("swept expired rows").pipe(
            Effect.annotateLogs({ codes, tokens, throttle, sessions, keys, devices })
          )
        : Effect.void
    ),
    Effect.catchAll((e) => Effect.logWarning("sweep failed").pipe(Effect.annotateLogs({ reason: e.message })))
  )
  // Apart from the expired rows: a refused audit purge does not keep them from being swept.
  const audit = sweepAudit(retentionDays).pipe(
    Effect.tap((n) =>
      n > 0
        ? Effect.logInfo("purged audit events past the retention").pipe(
            Effect.annotateLogs({ audit: n, retentionDays })
          )
        : Effect.void
    ),
    Effect.catchAll((e) =>
      Effect.logWarning("audit purge failed").pipe(Effect.annotateLogs({ reason: e.message }))
    )
  )
  return Effect.zipRight(expired, audit).pipe(Effect.repeat(Schedule.spaced(sweepInterval)))
}

/**
 * One run of the back-channel logout outbox (`BackchannelLogout.deliverDue`): the logout tokens
 * due now POSTed with `fetch` (10 seconds each at most), delivered, retried or given up.
 */
export const deliverBackchannel = BackchannelLogout.deliverDue().pipe(Effect.provide(LogoutSender.layer()))

/**
 * The back-channel logout worker: `deliverBackchannel` every 5 seconds by the Clock, each outcome
 * counted in `metrics`; forked beside the requests (its POSTs never hold one up) and interrupted
 * at shutdown, a delivery in flight then tried again once its lease ends.
 */
const backchannel = (metrics: Metrics.Metrics) =>
  BackchannelLogout.scheduled({}, (outcome) => Effect.sync(() => metrics.backchannelOutcome(outcome))).pipe(
    Effect.provide(LogoutSender.layer())
  )

/** A running server. */
export interface Running {
  readonly server: Server
  readonly port: number
  readonly issuer: string
  /** The admin listener, when this process runs it. */
  readonly admin: AdminServer.AdminServer | null
  /** This process's metrics. */
  readonly metrics: Metrics.Metrics
  /** Stop gracefully; resolves once the database is closed. */
  readonly stop: () => Promise<void>
}

/** The actor of the scopes the catalogue gets from LATCHKEY_SCOPE_DESCRIPTIONS at start. */
const seedActor = "settings"

/**
 * LATCHKEY_SCOPE_DESCRIPTIONS seeds the scope catalogue: each scope it names that the catalogue
 * lacks is added (`Admin.seedScopes`; never one it has), audited with the actor `settings`. A
 * scope the catalogue refuses, or a failed seed, is logged; the pages still show its text.
 */
const seedScopes = (
  runtime: Services.Started["runtime"],
  seed: Admin.SeedDescriptions,
  log: Log
): Promise<void> =>
  runtime.runPromise(
    Admin.seedScopes(seed).pipe(
      Effect.provideService(Audit.RequestInfo, { requestId: null, address: null, actor: seedActor }),
      Effect.match({
        onFailure: (e) => log.warn({ reason: e.message }, "the scope catalogue was not seeded"),
        onSuccess: ({ added, skipped }: Admin.Seeded) => {
          if (added.length > 0)
            log.info({ scopes: added }, "scope catalogue seeded from LATCHKEY_SCOPE_DESCRIPTIONS")
          for (const { name, problem } of skipped) {
            log.warn(
              { scope: name, reason: problem },
              "LATCHKEY_SCOPE_DESCRIPTIONS: scope not added to the catalogue"
            )
          }
        }
      })
    )
  )

/** Options of `start`. */
export interface StartOptions {
  /**
   * Run the admin listener when `env.admin` is set (default true); a cluster worker passes false,
   * since the primary runs it for all (`AdminServer.startForCluster`).
   */
  readonly adminListener?: boolean
}

/**
 * Start listening and serving; fails (after closing the port) when the database cannot be opened,
 * and with a `ListenError` naming the variable to change when a port is taken.
 */
export const start = async (env: ServerEnv, log: Log, options: StartOptions = {}): Promise<Running> => {
  let handler: RequestListener = (_req, res) => {
    res.writeHead(503, { "content-type": "application/json; charset=utf-8", "retry-after": "1" })
    res.end('{"error":"temporarily_unavailable","error_description":"starting"}')
  }
  // Bounded request lifetimes: slow clients cannot hold connections forever (docs/security.md, T9)
  const server = boundedServer(env, (req, res) => handler(req, res))
  const port = await listen(server, env.port, env.host, { port: "PORT", host: "HOST" })
  const issuer = env.issuer ?? `http://localhost:${port}`
  let started: Services.Started
  try {
    started = await Services.start(env, issuer, log)
  } catch (e) {
    server.close()
    throw e
  }
  const { runtime, metrics } = started
  await seedScopes(runtime, env.scopeDescriptions, log)
  let admin: AdminServer.AdminServer | null = null
  try {
    if (env.admin !== null && options.adminListener !== false) {
      admin = await AdminServer.start({
        host: env.admin.host,
        port: env.admin.port,
        token: env.admin.token,
        console: env.admin.console
          ? { https: issuer.startsWith("https:"), productName: env.productName }
          : null,
        runtime,
        log,
        headersTimeoutMs: env.headersTimeoutMs,
        requestTimeoutMs: env.requestTimeoutMs,
        metrics: () => metrics.registry.metrics()
      })
    }
  } catch (e) {
    server.close()
    await runtime.dispose()
    throw e
  }
  if (env.otel !== null) {
    const otlp = new URL(env.otel.tracesUrl)
    otlp.username = ""
    otlp.password = ""
    log.info({ otlp: otlp.toString(), serviceName: env.otel.serviceName }, "exporting traces over OTLP/HTTP")
  }
  handler = App.make({
    runtime,
    issuer,
    registration: env.registration,
    log,
    scopeDescriptions: env.scopeDescriptions,
    productName: env.productName,
    trustProxy: env.trustProxy,
    metrics
  })

  const sweeper = runtime.runFork(sweeps(env.auditRetentionDays))
  const deliverer = runtime.runFork(backchannel(metrics))

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      log.info("shutting down: no new connections, finishing in-flight requests")
      await Promise.all([closeGracefully(server), admin?.stop()])
      await runtime.runPromise(Fiber.interruptAll([sweeper, deliverer]))
      await runtime.dispose()
      log.info("stopped")
      await new Promise<void>((resolve) => log.flush(() => resolve()))
    })()
    return stopping
  }
  log.info(
    { port, address: env.host, issuer, db: describeStore(env), version },
    `listening on ${env.host}:${port}`
  )
  return { server, port, issuer, admin, metrics, stop }
}

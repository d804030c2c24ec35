/**
 * The whole reference server in this process for the security catalogue: the real
 * App, the real service layers over a temporary SQLite file (or PostgreSQL: the server
 * `DATABASE_URL` names, or an embedded PGlite), logs captured in memory, and clients A
 * and B and user alice of the catalogue in docs/security.md.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Writable } from "node:stream"
import { Accounts, Admin, Digest, PasswordHasher, type Throttle } from "@latchkey/core"
import { ScryptHasher } from "@latchkey/node"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { Clock, Context, Effect, Layer, ManagedRuntime } from "effect"
import { pino } from "pino"
import * as AdminServer from "../../src/AdminServer.js"
import * as App from "../../src/App.js"
import * as Env from "../../src/Env.js"
import { aroundStores } from "../../src/Observed.js"
import * as Services from "../../src/Services.js"
import { basic, tempDir } from "../helpers.js"

/** The registered redirect URI of client A (`cb` in docs/security.md's catalogue). */
export const cb = "https://app.example/cb"

/** A registered application and its Basic header. */
export interface Client {
  readonly appKey: string
  readonly appSecret: string
  readonly basic: string
}

/** A running stack. */
export interface Stack {
  /** Base URL (the issuer). */
  readonly base: string
  /** Base URL of the admin listener, when `StackOptions.adminToken` asked for one. */
  readonly admin: string | undefined
  readonly dbPath: string
  /** Everything logged so far (JSON lines). */
  readonly logs: () => string
  /** Client A: every grant type, scopes read,write, redirect `cb`. */
  readonly A: Client
  /** Client B: the same registration, another App Key. */
  readonly B: Client
  /** User alice. */
  readonly alice: { readonly username: string; readonly password: string; readonly userId: string }
  readonly runtime: ManagedRuntime.ManagedRuntime<Services.Services, unknown>
  /** Register another application. */
  readonly client: (input?: Partial<Admin.NewApplication>) => Promise<Client>
  /**
   * How often each operation ran so far, by name: every store call (`TokenStore.find`), the
   * password hasher's (`PasswordHasher.verify`) and the digests' (`Digest.hmac`). Tests count
   * work with it instead of timing it.
   */
  readonly calls: () => ReadonlyMap<string, number>
  /** Stop serving and close the database, keeping its files. */
  readonly stop: () => Promise<void>
  /** Stop, then delete the temporary directory. */
  readonly close: () => Promise<void>
}

/** Options of a stack. */
export interface StackOptions {
  readonly throttle?: Partial<Throttle.Policy>
  /** Express "trust proxy" (LATCHKEY_TRUST_PROXY). */
  readonly trustProxy?: string | false
  /** Extra environment for Env.read (e.g. LATCHKEY_REFRESH_REUSE_GRACE). */
  readonly env?: Record<string, string>
  /** The stack's Clock service (every expiry check reads it), e.g. a `manualClock`; the live clock by default. */
  readonly clock?: Clock.Clock
  /**
   * Store on PostgreSQL over this pool (`PgliteClient.make(db, { schema })`: an embedded PGlite)
   * instead of SQLite; `env: { DATABASE_URL }` stores on a PostgreSQL server instead.
   */
  readonly pool?: PostgresStorage.Pool
  /** Serve the admin listener too, behind this bearer token (`Stack.admin`). */
  readonly adminToken?: string
}

/** A clock that stands still until the test moves it: lifetimes are then tested exactly, never by waiting. */
export interface ManualClock {
  readonly clock: Clock.Clock
  /** The time, in epoch milliseconds. */
  readonly now: () => number
  /** Move the time forward by `ms` milliseconds. */
  readonly advance: (ms: number) => void
}

/**
 * A manual clock starting at `startMs` (by default 700 ms past the current whole second,
 * so that issue times are fractional). Only the time stands still: `sleep` still waits.
 */
export const manualClock = (startMs = Math.floor(Date.now() / 1000) * 1000 + 700): ManualClock => {
  let now = startMs
  const live = Clock.make()
  const nanos = () => BigInt(now) * 1_000_000n
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => now,
    currentTimeMillis: Effect.sync(() => now),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    sleep: (duration) => live.sleep(duration)
  }
  return {
    clock,
    now: () => now,
    advance: (ms) => {
      now += ms
    }
  }
}

/** `context` with each call of its stores, password hasher and digests counted into `calls` by name. */
const counting = <R>(context: Context.Context<R>, calls: Map<string, number>): Context.Context<R> => {
  const count = <A, E>(name: string, call: Effect.Effect<A, E>) =>
    Effect.zipRight(
      Effect.sync(() => calls.set(name, (calls.get(name) ?? 0) + 1)),
      call
    )
  const stores = aroundStores(context, (name) => (call) => count(name, call))
  const hasher = Context.get(
    stores as Context.Context<PasswordHasher.PasswordHasher>,
    PasswordHasher.PasswordHasher
  )
  const digest = Context.get(stores as Context.Context<Digest.Digest>, Digest.Digest)
  return Context.add(
    Context.add(stores, PasswordHasher.PasswordHasher, {
      hash: (password) => count("PasswordHasher.hash", hasher.hash(password)),
      verify: (password, hash) => count("PasswordHasher.verify", hasher.verify(password, hash))
    }),
    Digest.Digest,
    {
      sha256: (value) => count("Digest.sha256", digest.sha256(value)),
      hmac: (key, value) => count("Digest.hmac", digest.hmac(key, value))
    }
  ) as Context.Context<R>
}

/** How often each counted operation ran while `f` ran: the growth of `stack.calls()`, by name (none omitted). */
export const callsDuring = async <A>(
  stack: Pick<Stack, "calls">,
  f: () => Promise<A>
): Promise<{ readonly value: A; readonly calls: Readonly<Record<string, number>> }> => {
  const before = stack.calls()
  const value = await f()
  const grown = [...stack.calls()].map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const)
  return { value, calls: Object.fromEntries(grown.filter(([, n]) => n > 0)) }
}

/** The names of `calls` that match `pattern` (`/^PasswordHasher\./`): none, where that work must not happen. */
export const callsMatching = (
  calls: Readonly<Record<string, number>>,
  pattern: RegExp
): ReadonlyArray<string> => Object.keys(calls).filter((name) => pattern.test(name))

/** Start the stack on 127.0.0.1 with an ephemeral port. */
export const startStack = async (options: StackOptions = {}): Promise<Stack> => {
  const { dir, cleanup } = tempDir()
  const dbPath = join(dir, "latchkey.sqlite")
  const env = Env.read({ LATCHKEY_DB: dbPath, PORT: "0", ...options.env })
  const lines: Array<string> = []
  const log = pino(
    { level: "info", base: { service: "latchkey" } },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      }
    })
  )
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const services = Services.layer({ ...env, throttle: { ...env.throttle, ...options.throttle } }, base, log, {
    // cheap scrypt: the catalogue signs in many times; the cost is tested elsewhere
    hasher: ScryptHasher.layer({ N: 1024, r: 8, p: 1 }),
    ...(options.pool !== undefined ? { storage: PostgresStorage.layer({ pool: options.pool }) } : {})
  })
  const calls = new Map<string, number>()
  const counted = Layer.map(services, (context) => counting(context, calls))
  const runtime = ManagedRuntime.make(
    options.clock === undefined ? counted : Layer.provideMerge(counted, Layer.setClock(options.clock))
  )
  await runtime.runtime()
  server.on(
    "request",
    App.make({
      runtime,
      issuer: base,
      log,
      scopeDescriptions: { read: "Read your data", write: "Change your data" },
      trustProxy: options.trustProxy ?? false
    })
  )
  const admin =
    options.adminToken === undefined
      ? undefined
      : await AdminServer.start({
          host: "127.0.0.1",
          port: 0,
          token: options.adminToken,
          runtime,
          metrics: async () => "",
          log,
          headersTimeoutMs: 10_000,
          requestTimeoutMs: 10_000
        })
  const client = async (input: Omit<Partial<Admin.NewApplication>, "public"> = {}): Promise<Client> => {
    const { app, appSecret } = await runtime.runPromise(
      Admin.createApplication({
        name: "Acme Notes",
        redirectUris: [cb],
        scope: "read,write",
        grantTypes: ["authorization_code", "implicit", "password", "client_credentials", "refresh_token"],
        ...input
      })
    )
    return { appKey: app.appKey, appSecret, basic: basic(app.appKey, appSecret) }
  }
  let stopped: Promise<void> | undefined
  const stop = () => {
    stopped ??= (async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await admin?.stop()
      await runtime.dispose()
    })()
    return stopped
  }
  const A = await client()
  const B = await client({ name: "Other App" })
  const password = "alice-SENTINEL-PW-7731"
  const user = await runtime.runPromise(Accounts.createUser("alice", password))
  return {
    base,
    admin: admin === undefined ? undefined : `http://127.0.0.1:${admin.port}`,
    dbPath,
    logs: () => lines.join(""),
    calls: () => new Map(calls),
    A,
    B,
    alice: { username: "alice", password, userId: user.userId },
    runtime,
    client,
    stop,
    close: async () => {
      await stop()
      cleanup()
    }
  }
}

/** POST a form (string bodies are sent as they are) to a path of the stack. */
export const post = (
  s: Stack,
  path: string,
  body: Record<string, string> | string,
  headers: Record<string, string> = {}
): Promise<Response> =>
  fetch(s.base + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: typeof body === "string" ? body : new URLSearchParams(body).toString(),
    redirect: "manual"
  })

/** A token request with client credentials. */
export const token = (s: Stack, body: Record<string, string> | string, client: Client | string = s.A) =>
  post(s, "/oauth2/oauth2/token", body, { authorization: typeof client === "string" ? client : client.basic })

/** Status and parsed JSON body of a response. */
export const read = async (
  res: Response
): Promise<{ status: number; body: Record<string, unknown>; res: Response }> => {
  const text = await res.text()
  let body: Record<string, unknown> = {}
  try {
    body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>)
  } catch {
    body = { __text: text }
  }
  return { status: res.status, body, res }
}

// Not a server: the core's own cost of a request, in one process, with no HTTP and no database.
// The core's endpoints (`Http.route` of @latchkey/core) run on the core's in-memory stores, with
// the reference server's services otherwise (synchronous node:crypto from @latchkey/node, the
// throttle counted in the store, the audit trail kept, its lines formatted as JSON but written
// nowhere, no spans), in rounds of CONNS concurrent requests (default 50, as the load generator's
// connections). Prints one JSON object, for `client_credentials` and for the introspection of a
// valid token: the process CPU time per request; in a pass of its own, the Effect operations a
// request runs (a Supervisor counting each operation the fibers' loop evaluates, with
// OpSupervision on, less what the same wrapper around `Effect.void` counts); and in another, the
// heap's used size before and after, with its used size before and after each garbage collection
// in between (v8.GCProfiler), from which coreCost.ts works out the bytes a request allocated.
// And the operations alone of an `authorization_code` exchange (a fresh code each), a
// `refresh_token` rotation (a fresh refresh token each), a revocation (a fresh access token each)
// and a userinfo request (one `openid` access token). Set against durable-floor's CPU per request
// (its whole request, HTTP and SQLite commit included), it shows how much of a request the core's
// steps alone take.
import v8 from "node:v8"
import {
  Accounts,
  Admin,
  Audit,
  Authorize,
  Config,
  Http,
  Memory,
  PasswordHasher,
  Throttle
} from "@latchkey/core"
import { NodeCrypto } from "@latchkey/node"
import { Effect, Layer, ManagedRuntime, Option, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"

const conns = Number(process.env.CONNS ?? 50)
const rounds = Number(process.env.CORE_ROUNDS ?? 400)
const warmup = Math.ceil(rounds / 4)
/** Rounds of the allocation pass, and of the operations pass (the supervisor slows every operation). */
const allocationRounds = Math.ceil(rounds / 4)
const opsRounds = Math.max(1, Math.min(4, Math.ceil(rounds / 10)))

const stores = Layer.merge(Memory.layer, Memory.auditLayer)
const config = Layer.effect(
  Config.Config,
  Config.make({ issuer: "http://localhost", serverKey: "k".repeat(43) })
)
// A cheap stand-in: users are made for the code and refresh grants, the password grant is not measured
const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) => Effect.succeed(`plain$${password}`),
  verify: (password, hash) => Effect.succeed(hash === `plain$${password}`)
})
const audit = Audit.layerWriting((event) => void JSON.stringify({ audit: event, msg: "audit" }))
const runtime = ManagedRuntime.make(
  Layer.mergeAll(
    stores,
    config,
    hasher,
    Throttle.policyLayer(Throttle.defaultPolicy),
    audit,
    Layer.setTracerEnabled(false)
  ).pipe(Layer.provideMerge(Layer.merge(NodeCrypto.layer, stores)))
)

const { app, appSecret } = await runtime.runPromise(
  Admin.createApplication({
    name: "core-cost",
    redirectUris: ["http://127.0.0.1/cb"],
    scope: "api:read",
    grantTypes: ["client_credentials"]
  })
)
const basic = (appKey, secret) => `Basic ${Buffer.from(`${appKey}:${secret}`).toString("base64")}`
const authorization = basic(app.appKey, appSecret)
const request = (path, body, i, headers = { authorization }) => ({
  method: "POST",
  path,
  query: "",
  headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
  body,
  remoteAddress: "127.0.0.1",
  requestId: `r${i}`
})
const route = (req) => Option.getOrThrow(Http.route(req))
const answer = (req) => runtime.runPromise(route(req))

/** `rounds` rounds of `conns` concurrent requests `run(i)`, each round's answers checked. */
const inRounds = async (count, run, check) => {
  for (let r = 0; r < count; r++) {
    const answers = await Promise.all(Array.from({ length: conns }, (_, i) => run(r * conns + i)))
    if (!answers.every(check)) throw new Error(`unexpected answer: ${JSON.stringify(answers[0])}`)
  }
}

/** CPU µs per request of `rounds` rounds of `conns` concurrent requests, after a warm-up. */
const measure = async (make, check) => {
  await inRounds(warmup, (i) => answer(make(i)), check)
  const start = process.cpuUsage()
  const wall = performance.now()
  await inRounds(rounds, (i) => answer(make(i)), check)
  const used = process.cpuUsage(start)
  const n = rounds * conns
  return {
    requests: n,
    cpuUsPerRequest: (used.user + used.system) / n,
    wallUsPerRequest: ((performance.now() - wall) * 1000) / n
  }
}

/**
 * The heap's used size before and after `allocationRounds` rounds, and before and after each
 * garbage collection in between: what was allocated is the growth plus what the collections freed.
 */
const allocation = async (make, check) => {
  const profiler = new v8.GCProfiler()
  const heapUsedStart = v8.getHeapStatistics().used_heap_size
  profiler.start()
  await inRounds(allocationRounds, (i) => answer(make(i)), check)
  const { statistics } = profiler.stop()
  const heapUsedEnd = v8.getHeapStatistics().used_heap_size
  const gcs = statistics.map((s) => [
    s.beforeGC.heapStatistics.usedHeapSize,
    s.afterGC.heapStatistics.usedHeapSize
  ])
  return { requests: allocationRounds * conns, heapUsedStart, heapUsedEnd, gcs }
}

/** Counts every operation the run loop of a fiber it supervises evaluates (with OpSupervision on). */
class OpCounter extends Supervisor.AbstractSupervisor {
  ops = 0
  value = Effect.void
  onEffect() {
    this.ops += 1
  }
}
const supervised = (effect, counter) =>
  effect.pipe(
    Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
    Effect.supervised(counter)
  )
/** The operations the counting wrapper itself adds to a request: its count around `Effect.void`. */
const wrapperOps = await (async () => {
  const counter = new OpCounter()
  await runtime.runPromise(supervised(Effect.void, counter))
  return counter.ops
})()

/** Effect operations per request of `opsRounds` rounds of `make(i)`, after one round uncounted. */
const ops = async (make, check) => {
  await inRounds(1, (i) => answer(make(i)), check)
  const counter = new OpCounter()
  await inRounds(opsRounds, (i) => runtime.runPromise(supervised(route(make(conns + i)), counter)), check)
  return counter.ops / (opsRounds * conns) - wrapperOps
}

/** CPU, operations and allocation per request of one endpoint, each in a pass of its own. */
const cost = async (make, check) => ({
  ...(await measure(make, check)),
  opsPerRequest: await ops(make, check),
  allocation: await allocation(make, check)
})

const tokenPath = "/oauth2/oauth2/token"
const ok = (r) => r.status === 200
const issued = await answer(request(tokenPath, "grant_type=client_credentials", 0))
const token = JSON.parse(issued.body).access_token
const clientCredentials = await cost(
  (i) => request(tokenPath, "grant_type=client_credentials&scope=api%3Aread", i),
  ok
)
const introspection = await cost(
  (i) => request("/oauth2/oauth2/introspect", `token=${token}`, i),
  (r) => r.status === 200 && r.body.includes('"active":true')
)

// The grants of a user: an application for them, a user, and what each request uses up, made
// before the pass (codes through the authorize endpoint's approval, as a signed-in user's consent)
const cb = "http://127.0.0.1/cb"
const userApp = await runtime.runPromise(
  Admin.createApplication({
    name: "core-cost-user",
    redirectUris: [cb],
    scope: "api:read,openid",
    grantTypes: ["authorization_code", "refresh_token"]
  })
)
const userAuthorization = basic(userApp.app.appKey, userApp.appSecret)
const user = await runtime.runPromise(Accounts.createUser("core-cost", "core-cost correct horse"))
const form = (params) => new URLSearchParams(params).toString()
const userRequest = (params, i) => request(tokenPath, form(params), i, { authorization: userAuthorization })
/** What the warm-up round and the counted rounds of an operations pass use up. */
const perPass = (opsRounds + 1) * conns
const codes = (count, scope) => {
  const query = form({ response_type: "code", client_id: userApp.app.appKey, redirect_uri: cb, scope })
  const code = Effect.flatMap(Authorize.validate(query), (req) => Authorize.approve(req, user.userId))
  return runtime
    .runPromise(Effect.replicateEffect(code, count))
    .then((locations) => locations.map((l) => new URL(l).searchParams.get("code")))
}
const exchange = (code, i) => userRequest({ grant_type: "authorization_code", code, redirect_uri: cb }, i)
/** The token answers of exchanging `count` fresh codes of `scope`. */
const exchanged = async (count, scope) => {
  const answers = await Promise.all((await codes(count, scope)).map((code, i) => answer(exchange(code, i))))
  return answers.map((a) => JSON.parse(a.body))
}

const exchangeCodes = await codes(perPass, "api:read")
const authorizationCode = await ops((i) => exchange(exchangeCodes[i], i), ok)
const refreshTokens = (await exchanged(perPass, "api:read")).map((t) => t.refresh_token)
const refreshToken = await ops(
  (i) => userRequest({ grant_type: "refresh_token", refresh_token: refreshTokens[i] }, i),
  ok
)
const accessTokens = await Promise.all(
  Array.from({ length: perPass }, (_, i) => answer(request(tokenPath, "grant_type=client_credentials", i)))
).then((answers) => answers.map((a) => JSON.parse(a.body).access_token))
const revocation = await ops((i) => request("/oauth2/oauth2/revoke", form({ token: accessTokens[i] }), i), ok)
const [openId] = await exchanged(1, "openid api:read")
const userinfo = await ops(
  (i) => ({
    ...request("/oauth2/oauth2/userinfo", "", i, { authorization: `Bearer ${openId.access_token}` }),
    method: "GET"
  }),
  (r) => r.status === 200 && r.body.includes('"sub"')
)
process.stdout.write(
  `${JSON.stringify({
    conns,
    clientCredentials,
    introspection,
    opsPerRequest: { authorizationCode, refreshToken, revocation, userinfo }
  })}\n`
)
await runtime.dispose()

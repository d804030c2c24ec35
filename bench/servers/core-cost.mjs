// Not a server: the core's own cost of a request, in one process, with no HTTP and no database.
// The core's token and introspection endpoints (`Http.route` of @latchkey/core) run on the
// core's in-memory stores, with the reference server's services otherwise (synchronous
// node:crypto from @latchkey/node, the throttle counted in the store, the audit trail kept,
// its lines formatted as JSON but written nowhere, no spans), in rounds of CONNS concurrent
// requests (default 50, as the load generator's connections). Prints one JSON object: the
// process CPU time per request for `client_credentials` and for the introspection of a valid
// token. Set against durable-floor's CPU per request (its whole request, HTTP and SQLite
// commit included), it shows how much of a request the core's steps alone take.
import { Admin, Audit, Config, Http, Memory, PasswordHasher, Throttle } from "@latchkey/core"
import { NodeCrypto } from "@latchkey/node"
import { Effect, Layer, ManagedRuntime, Option } from "effect"

const conns = Number(process.env.CONNS ?? 50)
const rounds = Number(process.env.CORE_ROUNDS ?? 400)
const warmup = Math.ceil(rounds / 4)

const stores = Layer.merge(Memory.layer, Memory.auditLayer)
const config = Layer.effect(
  Config.Config,
  Config.make({ issuer: "http://localhost", serverKey: "k".repeat(43) })
)
// Never called on these paths: the password grant is not measured
const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: () => Effect.die("not measured"),
  verify: () => Effect.die("not measured")
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
const authorization = `Basic ${Buffer.from(`${app.appKey}:${appSecret}`).toString("base64")}`
const request = (path, body, i) => ({
  method: "POST",
  path,
  query: "",
  headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
  body,
  remoteAddress: "127.0.0.1",
  requestId: `r${i}`
})
const answer = (req) => runtime.runPromise(Option.getOrThrow(Http.route(req)))

/** CPU µs per request of `rounds` rounds of `conns` concurrent requests, after a warm-up. */
const measure = async (make, check) => {
  const round = () => Promise.all(Array.from({ length: conns }, (_, i) => answer(make(i))))
  for (let r = 0; r < warmup; r++) await round()
  const start = process.cpuUsage()
  const wall = performance.now()
  for (let r = 0; r < rounds; r++) {
    const answers = await round()
    if (!answers.every(check)) throw new Error(`unexpected answer: ${JSON.stringify(answers[0])}`)
  }
  const used = process.cpuUsage(start)
  const n = rounds * conns
  return {
    requests: n,
    cpuUsPerRequest: (used.user + used.system) / n,
    wallUsPerRequest: ((performance.now() - wall) * 1000) / n
  }
}

const issued = await answer(request("/oauth2/oauth2/token", "grant_type=client_credentials", 0))
const token = JSON.parse(issued.body).access_token
const clientCredentials = await measure(
  (i) => request("/oauth2/oauth2/token", "grant_type=client_credentials&scope=api%3Aread", i),
  (r) => r.status === 200
)
const introspection = await measure(
  (i) => request("/oauth2/oauth2/introspect", `token=${token}`, i),
  (r) => r.status === 200 && r.body.includes('"active":true')
)
process.stdout.write(`${JSON.stringify({ conns, clientCredentials, introspection })}\n`)
await runtime.dispose()

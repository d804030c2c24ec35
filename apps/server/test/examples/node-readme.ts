import { createServer } from "node:http"
import { Config, PasswordChecks, Sweep, Throttle } from "@latchkey/core"
import { NodeCrypto, NodeHttp, ScryptHasher } from "@latchkey/node"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Layer, ManagedRuntime } from "effect"

const serverKey = process.env.LATCHKEY_SECRET
if (serverKey === undefined) throw new Error("set LATCHKEY_SECRET to at least 32 random characters")

const services = Layer.mergeAll(
  SqliteStorage.layer({ filename: "./data/latchkey.sqlite" }),
  Config.layer({ issuer: "http://127.0.0.1:8080", serverKey }),
  Throttle.policyLayer(Throttle.defaultPolicy, {
    ...PasswordChecks.defaultLimits,
    concurrency: ScryptHasher.threads
  }),
  ScryptHasher.layer() // the password grant's hash, off the event loop
).pipe(Layer.provideMerge(NodeCrypto.layer))

// The services, and a sweep of expired codes, tokens and sessions every 5 minutes until dispose()
const runtime = ManagedRuntime.make(Sweep.layer().pipe(Layer.provideMerge(services)))

const endpoints = NodeHttp.handler(runtime)
const server = createServer((req, res) => {
  if (endpoints(req, res)) return // token, introspection, revocation, metadata
  res.writeHead(404).end()
}).listen(8080, "127.0.0.1")

// On SIGTERM: stop accepting connections, then dispose the runtime (the sweep stops, the database closes).
process.once("SIGTERM", () => server.close(() => void runtime.dispose()))

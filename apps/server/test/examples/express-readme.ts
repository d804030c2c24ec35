import { Admin, Config, PasswordChecks, Sweep, Throttle } from "@latchkey/core"
import { oauthRouter, principal, requireBearer } from "@latchkey/express"
import { NodeCrypto, ScryptHasher } from "@latchkey/node"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Layer, ManagedRuntime } from "effect"
import express from "express"

const serverKey = process.env.LATCHKEY_SECRET
if (serverKey === undefined) throw new Error("set LATCHKEY_SECRET to at least 32 random characters")

const services = Layer.mergeAll(
  SqliteStorage.layer({ filename: "./data/latchkey.sqlite" }),
  Config.layer({ issuer: "https://auth.example", serverKey }),
  // throttle counters in the store; as many password checks at once as there are hashing threads
  Throttle.policyLayer(Throttle.defaultPolicy, {
    ...PasswordChecks.defaultLimits,
    concurrency: ScryptHasher.threads
  }),
  ScryptHasher.layer() // scrypt for the sign-in page and the password grant, off the event loop
).pipe(Layer.provideMerge(NodeCrypto.layer)) // synchronous node:crypto digests and randomness

// The services, and a sweep of expired codes, tokens and sessions every 5 minutes until dispose()
const runtime = ManagedRuntime.make(Sweep.layer().pipe(Layer.provideMerge(services)))

/** Once, e.g. from a setup script: an application (its App Secret is shown only now) and a user. */
export const setup = async () => {
  const { app, appSecret } = await runtime.runPromise(
    Admin.createApplication({
      name: "Demo app",
      redirectUris: ["https://app.example/callback"],
      scope: "profile",
      grantTypes: ["authorization_code", "refresh_token"]
    })
  )
  console.log(`App Key (client_id) ${app.appKey}, App Secret ${appSecret}`)
  await runtime.runPromise(Admin.createUser("alice", "correct horse battery staple"))
}

const app = express()
// Mount the router before any body parser: it reads the raw bodies itself.
app.use(oauthRouter(runtime, { scopeDescriptions: { profile: "See your profile" } }))
app.get("/api/me", requireBearer(runtime, { scope: "profile" }), (req, res) => {
  const p = principal(req)
  res.json({ open_id: p.openId, client_id: p.clientId, scope: p.scope.join(",") })
})
const server = app.listen(8080)

// On SIGTERM: stop accepting connections, then dispose the runtime (the sweep stops, the database closes).
process.once("SIGTERM", () => server.close(() => void runtime.dispose()))

// Latchkey embedded the way a user would: oauthRouter from @latchkey/express mounted in a
// plain Express 5 app of their own, on the SQLite store, with the layers of the example in
// packages/express/README.md (no audit trail, no pino, no sweeper). The server key is the
// one the CLI kept in the database (App Secret digests depend on it), as in
// apps/server/src/Services.ts. Adapt the layers here when the core gains services.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { Config, PasswordHasher, SettingStore, Throttle } from "@latchkey/core"
import { oauthRouter } from "@latchkey/express"
import { NodeCrypto } from "@latchkey/node"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Layer, ManagedRuntime } from "effect"
import express from "express"

const port = Number(process.env.PORT ?? 0)
const host = process.env.HOST ?? "127.0.0.1"
const issuer = `http://localhost:${port}`

const storage = SqliteStorage.layer({ filename: process.env.LATCHKEY_DB ?? "./latchkey.sqlite" })
// The server key the CLI generated and kept in the database (App Secret digests depend on it)
const config = Layer.effect(
  Config.Config,
  Effect.flatMap(
    Effect.flatMap(SettingStore.SettingStore, (s) =>
      s.getOrCreate("server_key", randomBytes(32).toString("base64url"))
    ),
    (serverKey) => Config.make({ issuer, serverKey })
  )
).pipe(Layer.provide(storage))

// scrypt as in the reference server: scrypt$N$r$p$salt$hash
const derive = (password, salt, N, r, p) =>
  new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, 32, { N, r, p, maxmem: 256 * N * r + 2 ** 20 }, (e, k) =>
      e ? reject(e) : resolve(k)
    )
  )
const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) =>
    Effect.promise(async () => {
      const salt = randomBytes(16)
      const key = await derive(password, salt, 2 ** 15, 8, 3)
      return `scrypt$${2 ** 15}$8$3$${salt.toString("base64url")}$${key.toString("base64url")}`
    }),
  verify: (password, stored) =>
    Effect.promise(async () => {
      const [alg, N, r, p, salt, hash] = stored.split("$")
      if (alg !== "scrypt" || hash === undefined) return false
      const expected = Buffer.from(hash, "base64url")
      const key = await derive(password, Buffer.from(salt, "base64url"), Number(N), Number(r), Number(p))
      return key.length === expected.length && timingSafeEqual(key, expected)
    })
})

const runtime = ManagedRuntime.make(
  Layer.mergeAll(storage, config, hasher, Throttle.layer()).pipe(Layer.provideMerge(NodeCrypto.layer))
)
await runtime.runtime()

const app = express()
app.disable("x-powered-by")
app.use(oauthRouter(runtime))
const server = app.listen(port, host)
process.on("SIGTERM", () => server.close(() => runtime.dispose().then(() => process.exit(0))))

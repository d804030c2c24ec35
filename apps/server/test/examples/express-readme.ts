import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { Config, PasswordHasher, Throttle } from "@latchkey/core"
import { oauthRouter, principal, requireBearer } from "@latchkey/express"
import { NodeCrypto } from "@latchkey/node"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Layer, ManagedRuntime } from "effect"
import express from "express"

// A memory-hard password hash (salted scrypt) for the sign-in page and the password grant.
const derive = (password: string, salt: Buffer) =>
  new Promise<Buffer>((ok, fail) =>
    scrypt(password, salt, 32, { N: 2 ** 15, r: 8, p: 3, maxmem: 64 * 1024 * 1024 }, (e, key) =>
      e === null ? ok(key) : fail(e)
    )
  )
const hasher = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: (password) =>
    Effect.promise(async () => {
      const salt = randomBytes(16)
      return `${salt.toString("base64url")}$${(await derive(password, salt)).toString("base64url")}`
    }),
  verify: (password, stored) =>
    Effect.promise(async () => {
      const [salt = "", hash = ""] = stored.split("$")
      const expected = Buffer.from(hash, "base64url")
      const actual = await derive(password, Buffer.from(salt, "base64url"))
      return expected.length === actual.length && timingSafeEqual(actual, expected)
    })
})

const serverKey = process.env.LATCHKEY_SECRET
if (serverKey === undefined) throw new Error("set LATCHKEY_SECRET to at least 32 random characters")

const runtime = ManagedRuntime.make(
  Layer.mergeAll(
    SqliteStorage.layer({ filename: "./data/latchkey.sqlite" }),
    Config.layer({ issuer: "https://auth.example", serverKey }),
    Throttle.layer(),
    hasher
  ).pipe(Layer.provideMerge(NodeCrypto.layer)) // synchronous node:crypto digests and randomness
)

const app = express()
// Mount the router before any body parser: it reads the raw bodies itself.
app.use(oauthRouter(runtime, { scopeDescriptions: { profile: "See your profile" } }))
app.get("/api/me", requireBearer(runtime, { scope: "profile" }), (req, res) => {
  const p = principal(req)
  res.json({ open_id: p.openId, client_id: p.clientId, scope: p.scope.join(",") })
})
app.listen(8080)

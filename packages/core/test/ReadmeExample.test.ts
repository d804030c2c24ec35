// The usage example of README.md, kept compiling and passing.
import { assert, it } from "@effect/vitest"
import { Admin, BasicAuth, Config, Entropy, Http, Memory, PasswordHasher, Throttle } from "@latchkey/core"
import { Effect, Layer, Option } from "effect"

const Services = Layer.mergeAll(
  Memory.layer,
  Config.layer({ issuer: "https://auth.example", serverKey: "change-me-to-32-random-bytes....." }),
  Entropy.layer,
  Throttle.layer(),
  // only for the example: in production on Node, ScryptHasher.layer() of @latchkey/node
  Layer.succeed(PasswordHasher.PasswordHasher, {
    hash: (p) => Effect.succeed(p),
    verify: (p, h) => Effect.succeed(p === h)
  })
)

const program = Effect.gen(function* () {
  const { app, appSecret } = yield* Admin.createApplication({
    name: "Billing service",
    redirectUris: ["https://billing.example/callback"],
    scope: "invoices.read,invoices.write"
  })
  const response = yield* Option.getOrThrow(
    Http.route({
      method: "POST",
      path: "/oauth2/oauth2/token",
      query: "",
      headers: {
        authorization: BasicAuth.encode({ appKey: app.appKey, appSecret }),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "grant_type=client_credentials"
    })
  )
  return JSON.parse(response.body) as { access_token: string; scope: string; expires_in: number }
})

it("README: issues a client_credentials token against the in-memory layer", async () => {
  const token = await Effect.runPromise(program.pipe(Effect.provide(Services)))
  assert.strictEqual(token.scope, "invoices.read,invoices.write")
  assert.strictEqual(token.expires_in, 3600)
})

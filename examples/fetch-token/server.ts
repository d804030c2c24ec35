/**
 * Latchkey's JSON endpoints as a fetch handler on the in-memory stores, with one
 * application registered at start. Serve it with `Deno.serve(fetch)`,
 * `Bun.serve({ fetch })` or as a worker's default export; run it with Node to print a
 * client_credentials token obtained by calling the handler directly.
 */
import { Admin, BasicAuth, Config, Entropy, Memory, PasswordHasher, Throttle } from "@latchkey/core"
import { Fetch } from "@latchkey/fetch"
import { Effect, Layer, ManagedRuntime } from "effect"

export const issuer = "http://127.0.0.1:8080"

// The password grant needs a memory-hard hash; this example serves client_credentials only.
const noPasswords = Layer.succeed(PasswordHasher.PasswordHasher, {
  hash: () => Effect.die("no password grant here"),
  verify: () => Effect.succeed(false)
})

/** Every service the endpoints need; Digest defaults to Web Crypto, so this runs anywhere. */
export const runtime = ManagedRuntime.make(
  Layer.mergeAll(
    Memory.layer,
    // An example key: take a secret of at least 32 random characters from the environment in real use.
    Config.layer({ issuer, serverKey: "example-server-key-0123456789abcdef" }),
    Entropy.layer,
    Throttle.layer(),
    noPasswords
  )
)

/** The registered application: its App Key and the one-time App Secret. */
export const app = await runtime.runPromise(
  Admin.createApplication({
    name: "fetch example",
    redirectUris: [`${issuer}/cb`],
    scope: "profile",
    grantTypes: ["client_credentials"]
  })
)

/** The fetch handler: token, introspection, revocation and metadata; 404 for anything else. */
export const fetch: (request: Request) => Promise<Response> = Fetch.handler(runtime)

/** For Bun.serve and worker runtimes that take a module's default export. */
export default { fetch }

/** Ask the handler for a client_credentials token, as a client would over HTTP. */
export const issueToken = async (): Promise<Record<string, unknown>> => {
  const response = await fetch(
    new Request(`${issuer}/oauth2/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: BasicAuth.encode({ appKey: app.app.appKey, appSecret: app.appSecret }),
        "content-type": "application/x-www-form-urlencoded"
      },
      body: "grant_type=client_credentials"
    })
  )
  return (await response.json()) as Record<string, unknown>
}

// Run as a script (`pnpm start`): print a token and stop.
const script = (globalThis as { process?: { argv?: ReadonlyArray<string> } }).process?.argv?.[1]
if (script !== undefined && import.meta.url.endsWith(script.replaceAll("\\", "/"))) {
  console.log(JSON.stringify(await issueToken()))
  await runtime.dispose()
}

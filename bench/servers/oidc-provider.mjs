// Baseline: panva's oidc-provider, in-memory adapter, client_credentials with one
// client_secret_basic client allowed scope api:read, opaque access tokens, POST /token.
import { generateKeyPairSync } from "node:crypto"
import Provider from "oidc-provider"

const port = Number(process.env.PORT ?? 0)
const host = process.env.HOST ?? "127.0.0.1"
const clientId = process.env.BENCH_CLIENT_ID ?? "bench-client"
const clientSecret = process.env.BENCH_CLIENT_SECRET ?? "bench-secret-0123456789abcdefghijklmnopqrstuv"

// A signing key of our own, so the provider does not warn about its development keys
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })

const provider = new Provider(`http://${host}:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
      scope: "api:read"
    }
  ],
  scopes: ["api:read"],
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false }
  },
  jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "bench", alg: "RS256", use: "sig" }] },
  cookies: { keys: ["bench-cookie-key-0123456789abcdef"] },
  routes: { token: "/token" },
  ttl: { ClientCredentials: 3600 }
})
const server = provider.listen(port, host)
process.on("SIGTERM", () => server.close(() => process.exit(0)))

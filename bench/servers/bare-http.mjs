// Baseline: the ceiling of one Node process. node:http, the body drained, a fixed
// ~120-byte token (or, on an introspection path, a fixed introspection answer).
import { createServer } from "node:http"

const token = JSON.stringify({
  access_token: "bench0123456789abcdefghijklmnopqrstuvwxyzAB",
  token_type: "Bearer",
  expires_in: 3600,
  scope: "api:read"
})
const introspection = JSON.stringify({
  active: true,
  scope: "api:read",
  client_id: "bench-client",
  token_type: "Bearer",
  exp: 4102444800,
  iat: 1700000000
})
const headers = (body) => ({
  "content-type": "application/json; charset=utf-8",
  "content-length": Buffer.byteLength(body),
  "cache-control": "no-store",
  pragma: "no-cache"
})
const tokenHeaders = headers(token)
const introspectionHeaders = headers(introspection)

const server = createServer((req, res) => {
  req.on("data", () => {})
  req.on("end", () => {
    if (req.url?.endsWith("/introspect")) {
      res.writeHead(200, introspectionHeaders)
      res.end(introspection)
    } else {
      res.writeHead(200, tokenHeaders)
      res.end(token)
    }
  })
})
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1")
process.on("SIGTERM", () => server.close(() => process.exit(0)))

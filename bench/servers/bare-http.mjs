// Baseline: the ceiling of one Node process. node:http, the body drained, a fixed
// ~120-byte token (or, on an introspection path, a fixed introspection answer).
import { createServer } from "node:http"
import { introspection, token } from "./fixed.mjs"

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

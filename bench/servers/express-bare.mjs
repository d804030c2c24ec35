// Baseline: Express 5 with the urlencoded body parser, answering a fixed token with
// the no-store headers (what any Express token endpoint costs before doing anything).
import express from "express"
import { introspection, token } from "./fixed.mjs"

const app = express()
app.disable("x-powered-by")
app.disable("etag")
app.use(express.urlencoded({ extended: false }))
app.use((req, res) => {
  res.set({
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    pragma: "no-cache"
  })
  res.send(req.path.endsWith("/introspect") ? introspection : token)
})
const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1")
process.on("SIGTERM", () => server.close(() => process.exit(0)))

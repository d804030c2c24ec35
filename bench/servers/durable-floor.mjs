// Baseline, NOT Latchkey: durable-floor. A hand-written node:http server, with no framework
// and no abstraction, doing exactly the durable work of Latchkey's client_credentials token
// request, so the table shows, in the same run, the highest rate any implementation with
// Latchkey's guarantees could reach on this machine. Per POST /oauth2/oauth2/token:
//   - the body read with a 16 KiB cap, parsed with URLSearchParams; grant_type=client_credentials
//     required (400 otherwise);
//   - HTTP Basic decoded as Latchkey does (RFC 6749 App. B), the application read with a prepared
//     SELECT on every request (no cache), the keyed digest of the secret computed as Latchkey does
//     (HMAC-SHA-256 under the server key's UTF-8 bytes over "app_secret\0<appKey>\0<appSecret>",
//     base64url) and compared with crypto.timingSafeEqual to the stored secret_digest (401
//     invalid_client otherwise);
//   - a 32-byte random token (base64url), stored only as its SHA-256 (base64url), with the same
//     columns Latchkey fills in `tokens` and a `token_issued` row in `audit_events`;
//   - group commit: every write queued within one turn of the event loop runs in one
//     BEGIN IMMEDIATE … COMMIT (setImmediate flush) on the same SQLite file the `latchkey`
//     configuration uses, journal_mode=WAL, synchronous=FULL, and a response is written only
//     after its COMMIT returned;
//   - the token response with Latchkey's headers (content-type, cache-control: no-store,
//     pragma: no-cache, content-length, x-request-id), and one JSON request line per request
//     through pino's asynchronous destination to stdout.
// Left out (none of it durable): helmet's hardening headers, the failure throttle, audit rows
// of failed authentications, the per-user `open_id` variant (refused with 400), the second
// "audit" log line Latchkey writes per issued token, per-job savepoints (a batch only holds
// inserts of fresh random keys: it fails as a whole or not at all), the sweeper, the pages.
// The server key is LATCHKEY_SECRET when set, else the `server_key` the Latchkey CLI kept in
// the `settings` table, as in apps/server/src/Services.ts. Store seeded by the harness with the
// Latchkey CLI; LATCHKEY_DB names it. Everything but the commit is floor-http.mjs, shared with
// durable-floor-pipelined.mjs.
import { floorLog, floorServer, openStore } from "./floor-http.mjs"

const port = Number(process.env.PORT ?? 0)
const host = process.env.HOST ?? "127.0.0.1"
const file = process.env.LATCHKEY_DB
if (file === undefined || file === "") throw new Error("LATCHKEY_DB must name the seeded SQLite file")

const log = floorLog("durable-floor")
const db = openStore(file)

const insertToken = db.prepare(`INSERT INTO tokens (kind, token_hash, app_key, user_id, open_id, scope,
  family_id, parent_hash, issued_at, expires_at, revoked_at, rotated_at)
  VALUES ('access', ?, ?, NULL, NULL, ?, ?, NULL, ?, ?, NULL, NULL)`)
const insertEvent = db.prepare(`INSERT INTO audit_events (at, type, app_key, user_id, open_id, address,
  request_id, detail) VALUES (?, 'token_issued', ?, NULL, NULL, ?, ?, 'client_credentials')`)
const begin = db.prepare("BEGIN IMMEDIATE")
const commit = db.prepare("COMMIT")
const rollback = db.prepare("ROLLBACK")

// Group commit: jobs queued in one turn of the event loop share one transaction (one fsync)
let queue = []
let waiting = [] // each queued job's done, in the same order
let scheduled = false
let closed = false
const flush = () => {
  scheduled = false
  const jobs = queue
  const dones = waiting
  queue = []
  waiting = []
  if (jobs.length === 0) return
  let error = null
  try {
    begin.run()
    for (const j of jobs) {
      insertToken.run(j.tokenHash, j.appKey, j.scope, j.familyId, j.now, j.now + j.ttl)
      insertEvent.run(j.now, j.appKey, j.address, j.reqId)
    }
    commit.run()
  } catch (e) {
    error = e
    try {
      if (db.inTransaction) rollback.run()
    } catch {}
    log.error({ err: String(e) }, "group commit failed")
  }
  for (const done of dones) done(error)
}
const enqueue = (job, done) => {
  if (closed) return done(new Error("the database is closed"))
  queue.push(job)
  waiting.push(done)
  if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}

const server = floorServer({ db, log, write: enqueue })
server.listen(port, host, () =>
  log.info({ port: server.address().port, address: host, db: file }, `listening on ${host}:${port}`)
)

// Stop: no new connections, in-flight requests answered after their commit, pending writes
// committed, the database closed, the log flushed
let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  log.info("shutting down")
  server.close(() => {
    flush()
    closed = true
    db.close()
    log.info("stopped")
    log.flush(() => process.exit(0))
  })
  server.closeIdleConnections()
  setTimeout(() => server.closeAllConnections(), 10_000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)

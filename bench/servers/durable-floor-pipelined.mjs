// Baseline, NOT Latchkey: durable-floor-pipelined. durable-floor (durable-floor.mjs) with its
// commits moved off the event loop: the same work per POST /oauth2/oauth2/token, the same
// answers, headers and request log line, and every token answered only after the COMMIT holding
// its rows returned; what changes is which thread waits for the disk.
//   - the main thread, as in durable-floor: the body read with a 16 KiB cap and parsed with
//     URLSearchParams (grant_type=client_credentials required), HTTP Basic decoded as Latchkey
//     does, the application read with a prepared SELECT on every request (no cache) on the main
//     thread's own connection (WAL: a reader neither blocks nor waits for the writer), the
//     secret's keyed digest (HMAC-SHA-256 under the server key, "app_secret\0<appKey>\0<appSecret>",
//     base64url) compared with crypto.timingSafeEqual, a 32-byte random token (base64url) and a
//     16-byte family id drawn; the answers with Latchkey's JSON headers and one pino request
//     line per request to stdout (service "durable-floor-pipelined");
//   - the writer: a node:worker_threads Worker (this same file) with its own better-sqlite3
//     connection to the store (journal_mode=WAL, synchronous=FULL, busy_timeout=5000). The jobs
//     queued in one turn of the event loop (setImmediate) form a batch, handed over with
//     postMessage as plain values (token SHA-256, app key, scope, family id, issued and expiry
//     times, address, request id); the writer inserts each job's `tokens` row and `token_issued`
//     `audit_events` row in one BEGIN IMMEDIATE … COMMIT and posts back when that COMMIT
//     returned (durable) or failed; only then does the main thread answer the batch's requests:
//     200 with the token, or 503 temporarily_unavailable with retry-after: 1 for a failed batch;
//   - at most ONE batch in flight. While the writer commits batch N the event loop keeps parsing
//     and authenticating, and every job queued meanwhile (over as many turns as the commit takes)
//     joins batch N+1, handed over as soon as N is reported and before N's answers are written.
//     Why one: SQLite has one writer per file, so a second batch handed over early would only
//     wait in the writer's queue behind the first, yet it would close the next batch early and
//     split what can be one fsync into two; with one in flight the batch grows with the commit's
//     latency (group commit that adapts to the disk), and a request waits for at most the commit
//     in flight plus its own. The cost: the writer idles from its reply until the event loop
//     reads it (at most one turn);
//   - the writer thread runs in the same process, so the harness pins it to the server CPU
//     with the main thread: the gain is the main thread's time otherwise spent waiting inside
//     COMMIT, not a second core;
//   - stop (SIGTERM, SIGINT): no new connections, the queued jobs handed over and committed,
//     their requests answered, the writer closes its connection and exits, the main connection
//     is closed, the log flushed. A writer thread that dies otherwise fails its batch and every
//     queued job with 503 and stops the process (exit 1).
// Left out, as in durable-floor (none of it durable): helmet's hardening headers, the failure
// throttle, audit rows of failed authentications, the per-user `open_id` variant (refused with
// 400), the second "audit" log line Latchkey writes per issued token, per-job savepoints (a
// batch only holds inserts of fresh random keys: it fails as a whole or not at all), the
// sweeper, the pages. The server key is LATCHKEY_SECRET when set, else the `server_key` the
// Latchkey CLI kept in the `settings` table. Store seeded by the harness with the Latchkey CLI;
// LATCHKEY_DB names it. Everything but the commit is floor-http.mjs, shared with durable-floor.mjs.
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import { floorLog, floorServer, openStore } from "./floor-http.mjs"

/** Values per job in a batch handed to the writer (see `writer` for their order). */
const jobWidth = 8

/**
 * The writer thread: posts `{ type: "ready" }` once its connection is open, then commits each
 * batch (a flat array of jobWidth values per job) in one BEGIN IMMEDIATE … COMMIT and posts
 * `{ type: "committed", error }` (error: null once the COMMIT returned). `null` closes it.
 */
const writer = () => {
  const db = openStore(workerData.file)
  const insertToken = db.prepare(`INSERT INTO tokens (kind, token_hash, app_key, user_id, open_id, scope,
    family_id, parent_hash, issued_at, expires_at, revoked_at, rotated_at)
    VALUES ('access', ?, ?, NULL, NULL, ?, ?, NULL, ?, ?, NULL, NULL)`)
  const insertEvent = db.prepare(`INSERT INTO audit_events (at, type, app_key, user_id, open_id, address,
    request_id, detail) VALUES (?, 'token_issued', ?, NULL, NULL, ?, ?, 'client_credentials')`)
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const rollback = db.prepare("ROLLBACK")
  parentPort.on("message", (rows) => {
    if (rows === null) {
      db.close()
      parentPort.close()
      return
    }
    let error = null
    try {
      begin.run()
      for (let i = 0; i < rows.length; i += jobWidth) {
        // tokenHash, appKey, scope, familyId, issuedAt, expiresAt, address, reqId
        insertToken.run(rows[i], rows[i + 1], rows[i + 2], rows[i + 3], rows[i + 4], rows[i + 5])
        insertEvent.run(rows[i + 4], rows[i + 1], rows[i + 6], rows[i + 7])
      }
      commit.run()
    } catch (e) {
      error = String(e)
      try {
        if (db.inTransaction) rollback.run()
      } catch {}
    }
    parentPort.postMessage({ type: "committed", error })
  })
  parentPort.postMessage({ type: "ready" })
}

/** The main thread: the HTTP server, the application reads, and the batches handed to the writer. */
const serve = () => {
  const port = Number(process.env.PORT ?? 0)
  const host = process.env.HOST ?? "127.0.0.1"
  const file = process.env.LATCHKEY_DB
  if (file === undefined || file === "") throw new Error("LATCHKEY_DB must name the seeded SQLite file")
  const log = floorLog("durable-floor-pipelined")
  // The main thread's connection: the application SELECT and the server key only
  const db = openStore(file)
  const batches = pipeline(log, file)
  const server = floorServer({
    db,
    log,
    // tokenHash, appKey, scope, familyId, issuedAt, expiresAt, address, reqId: jobWidth values
    write: (job, done) =>
      batches.enqueue(
        [
          job.tokenHash,
          job.appKey,
          job.scope,
          job.familyId,
          job.now,
          job.now + job.ttl,
          job.address,
          job.reqId
        ],
        done
      )
  })
  // Listening once the writer has its connection open
  batches.ready.then(() =>
    server.listen(port, host, () =>
      log.info({ port: server.address().port, address: host, db: file }, `listening on ${host}:${port}`)
    )
  )

  // Stop: no new connections, in-flight requests answered after their commit, queued jobs
  // committed, the writer stopped, the database closed, the log flushed
  let stopping = false
  const stop = (code) => {
    if (stopping) return
    stopping = true
    log.info("shutting down")
    server.close(async () => {
      await batches.close()
      db.close()
      log.info("stopped")
      log.flush(() => process.exit(code))
    })
    server.closeIdleConnections()
    setTimeout(() => server.closeAllConnections(), 10_000).unref()
  }
  batches.died.then(() => stop(1))
  process.on("SIGTERM", () => stop(0))
  process.on("SIGINT", () => stop(0))
}

/**
 * The batches: `enqueue(row, done)` queues a job (its jobWidth values) and calls `done(null)`
 * once its COMMIT returned, `done(error)` if its batch failed. `ready` resolves once the writer
 * has its connection; `close()` commits what is queued and stops the writer; `died` resolves if
 * the writer thread stops otherwise (every job pending then is failed).
 */
const pipeline = (log, file) => {
  const thread = new Worker(new URL(import.meta.url), { workerData: { file } })
  let queue = [] // jobs not handed over yet
  let inFlight = null // the jobs of the batch the writer is committing
  let scheduled = false
  let gone = null // why no job can be committed any more
  let drained = null // called once nothing is queued or in flight (close)
  const handOver = () => {
    scheduled = false
    if (inFlight !== null || queue.length === 0 || gone !== null) return
    inFlight = queue
    queue = []
    const rows = []
    for (const j of inFlight) for (const value of j.row) rows.push(value)
    thread.postMessage(rows)
  }
  const failAll = (error) => {
    const jobs = [...(inFlight ?? []), ...queue]
    inFlight = null
    queue = []
    for (const j of jobs) j.done(error)
  }
  let onReady
  const ready = new Promise((resolve) => {
    onReady = resolve
  })
  let onDied
  const died = new Promise((resolve) => {
    onDied = resolve
  })
  thread.on("message", (message) => {
    if (message.type === "ready") return onReady()
    const jobs = inFlight
    inFlight = null
    if (message.error !== null) log.error({ err: message.error }, "group commit failed")
    // The next batch goes to the writer before this one's answers are written
    handOver()
    const error = message.error === null ? null : new Error(message.error)
    for (const j of jobs) j.done(error)
    if (drained !== null && inFlight === null && queue.length === 0) drained()
  })
  const lost = (why) => {
    if (gone !== null) return
    gone = new Error(why)
    log.error({ err: why }, "the writer thread stopped")
    failAll(gone)
    onDied()
    if (drained !== null) drained()
  }
  thread.on("error", (e) => lost(String(e)))
  thread.on("exit", (code) => lost(`the writer thread exited with code ${code}`))
  return {
    ready,
    died,
    enqueue: (row, done) => {
      if (gone !== null) return done(gone)
      queue.push({ row, done })
      if (!scheduled && inFlight === null) {
        scheduled = true
        setImmediate(handOver)
      }
    },
    close: async () => {
      if (gone === null) {
        await new Promise((resolve) => {
          drained = resolve
          handOver()
          if (inFlight === null && queue.length === 0) resolve()
        })
      }
      gone ??= new Error("the database is closed")
      if (thread.threadId !== -1) {
        const exited = new Promise((resolve) => thread.once("exit", resolve))
        thread.postMessage(null)
        await exited
      }
    }
  }
}

if (isMainThread) serve()
else writer()

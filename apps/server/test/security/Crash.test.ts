/**
 * Store invariant D12 (docs/security.md) over HTTP: SIGKILL the server in the middle of a burst of
 * token requests; after a restart on the same file every token it answered 200 for
 * is still active, and `PRAGMA integrity_check` is ok.
 */
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { afterAll } from "vitest"
import { basic, createApp, type ServerProcess, spawnServer, tempDir } from "../helpers.js"

const dir = tempDir()
afterAll(() => dir.cleanup())

it("D12 kill -9 mid-load: every token answered 200 survives the crash and the database is intact", async () => {
  const db = join(dir.dir, "crash.sqlite")
  const env = { LATCHKEY_DB: db, PORT: "0", LATCHKEY_SECRET: "crash-test-server-key-0123456789abcdef" }
  const app = await createApp(db, ["--name", "Crash", "--redirect-uri", "https://app.example/cb"], env)
  const auth = basic(app.app_key, app.app_secret)
  const server: ServerProcess = await spawnServer(env)
  const issued: Array<string> = []
  let stop = false
  const worker = async () => {
    while (!stop) {
      try {
        const r = await fetch(`${server.base}/oauth2/oauth2/token`, {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
          body: "grant_type=client_credentials"
        })
        if (r.status === 200) issued.push(((await r.json()) as { access_token: string }).access_token)
      } catch {
        return // the server is gone
      }
    }
  }
  const workers = Array.from({ length: 8 }, worker)
  // bounded: kill once at least 200 tokens were answered, or after 5 s
  const started = Date.now()
  while (issued.length < 200 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 20))
  server.child.kill("SIGKILL")
  stop = true
  await Promise.all(workers)
  await server.stop()
  assert.isAbove(issued.length, 0)

  const check = new BetterSqlite3(db)
  try {
    assert.strictEqual(check.pragma("integrity_check", { simple: true }), "ok")
  } finally {
    check.close()
  }
  const again = await spawnServer(env)
  try {
    for (const t of issued) {
      const r = await fetch(`${again.base}/oauth2/oauth2/introspect`, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: t }).toString()
      })
      assert.isTrue(
        ((await r.json()) as { active: boolean }).active,
        "a token answered before the crash was lost"
      )
    }
  } finally {
    await again.stop()
  }
}, 60_000)

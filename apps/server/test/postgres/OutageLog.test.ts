/**
 * A PostgreSQL outage in the server's log: one error line when the database stops answering (the
 * reason in words, no credentials), one info line when it answers again, and nothing per failed
 * request besides the request lines. Played with a TCP proxy that is cut and restored, and with
 * the database dropped under the running server.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as TcpProxy from "@latchkey/storage-testkit/TcpProxy"
import { basic, cliInProcess, type LogLine, type ServerProcess, spawnServer } from "../helpers.js"
import { createDatabase, type Database, serverUrl } from "./database.js"

const unavailable = (l: LogLine) => l.msg === "database unavailable"
const availableAgain = (l: LogLine) => l.msg === "database available again"

describe.skipIf(serverUrl === undefined)("a PostgreSQL outage in the log", () => {
  let database: Database
  let proxy: TcpProxy.TcpProxy
  let server: ServerProcess
  let auth: string
  beforeAll(async () => {
    database = await createDatabase()
    proxy = await TcpProxy.start({ host: database.host, port: database.port })
    const created = await cliInProcess(
      "",
      ["app", "create", "--name", "Outage", "--redirect-uri", "https://outage.example/cb", "--json"],
      {
        DATABASE_URL: database.url
      }
    )
    const app = JSON.parse(created.stdout) as { app_key: string; app_secret: string }
    auth = basic(app.app_key, app.app_secret)
    const url = new URL(database.via("127.0.0.1", proxy.port))
    url.password = "pw-never-logged"
    server = await spawnServer({ DATABASE_URL: url.toString(), PORT: "0" })
  })
  afterAll(async () => {
    await server?.stop()
    await proxy?.close()
    await database?.drop()
  })

  const token = async () =>
    (
      await fetch(`${server.base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials"
      })
    ).status
  const readyz = async () => (await fetch(`${server.base}/readyz`)).status

  it("logs the link cut once as unavailable and its restoration once as available again, whatever the number of failed requests", async () => {
    assert.strictEqual(await token(), 200)
    await proxy.cut("refuse")
    for (let i = 0; i < 10; i++) assert.strictEqual(await token(), 503)
    for (let i = 0; i < 3; i++) assert.strictEqual(await readyz(), 503)
    const down = await server.waitForLine(unavailable)
    assert.strictEqual(down.level, "error")
    assert.match(String(down.reason), /^the (database cannot be reached|connection to the database)/)
    await proxy.restore()
    // A connection the pool held when the link was cut may fail one more request
    const after: Array<number> = []
    for (let i = 0; i < 3 && after.at(-1) !== 200; i++) after.push(await token())
    assert.strictEqual(after.at(-1), 200, `statuses after the restore: ${after.join(", ")}`)
    const up = await server.waitForLine(availableAgain)
    assert.strictEqual(up.level, "info")
    assert.isAtLeast(up.unavailableSeconds as number, 0)
    for (let i = 0; i < 5; i++) assert.strictEqual(await token(), 200)
    assert.strictEqual(await readyz(), 200)
    assert.strictEqual(server.lines().filter(unavailable).length, 1)
    assert.strictEqual(server.lines().filter(availableAgain).length, 1)
    assert.notInclude(server.stdout() + server.stderr(), "pw-never-logged")
    assert.strictEqual(down.db, `postgres://127.0.0.1:${proxy.port}${new URL(database.url).pathname}`)
  })

  it("says the database does not exist once it is dropped, in one line however many requests fail", async () => {
    await database.drop()
    for (let i = 0; i < 10; i++) assert.strictEqual(await token(), 503)
    assert.strictEqual(await readyz(), 503)
    const down = await server.waitForLine((l) => unavailable(l) && l.reason === "the database does not exist")
    assert.strictEqual(down.level, "error")
    assert.strictEqual(await server.stop(), 0)
    // Once stopped, its whole output is read: one more unavailable line, the one above
    assert.strictEqual(server.lines().filter(unavailable).length, 2)
    assert.strictEqual(server.lines().filter(availableAgain).length, 1)
    assert.notInclude(server.stdout() + server.stderr(), "pw-never-logged")
  })
})

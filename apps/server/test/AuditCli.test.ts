import { assert, describe, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { cliInProcess } from "./helpers.js"
import { read, type Stack, startStack, token } from "./security/harness.js"

let s: Stack
beforeAll(async () => {
  s = await startStack()
  await token(s, { grant_type: "client_credentials" })
  await token(s, { grant_type: "client_credentials", open_id: "dev-9" }, s.B)
  await token(s, { grant_type: "client_credentials" }, `${s.A.basic.slice(0, -4)}AAA=`)
  await read(await token(s, { grant_type: "password", username: "alice", password: "not alice's password" }))
})
afterAll(() => s.close())

describe("audit tail", () => {
  it("--json lists the events oldest first with time, type, App Key, open_id, address and request id", async () => {
    const r = await cliInProcess(s.dbPath, ["audit", "tail", "--json"])
    assert.strictEqual(r.code, 0)
    const events = JSON.parse(r.stdout) as Array<Record<string, string | null>>
    const types = events.map((e) => e.type)
    assert.includeMembers(types, ["token_issued", "client_auth_failed", "signin_failed"])
    const issued = events.find((e) => e.type === "token_issued" && e.open_id === "dev-9")
    assert.strictEqual(issued?.app_key, s.B.appKey)
    assert.strictEqual(issued?.address, "127.0.0.1")
    assert.match(issued?.request_id ?? "", /^[0-9a-f-]{36}$/)
    assert.match(issued?.at ?? "", /^\d{4}-\d\d-\d\dT/)
  })

  it("--app keeps only that application's events", async () => {
    const r = await cliInProcess(s.dbPath, ["audit", "tail", "--app", s.A.appKey, "--json"])
    const events = JSON.parse(r.stdout) as Array<{ app_key: string }>
    assert.isAbove(events.length, 0)
    assert.isTrue(events.every((e) => e.app_key === s.A.appKey))
  })

  it("--limit takes the newest n; the table form has a header row", async () => {
    const limited = JSON.parse(
      (await cliInProcess(s.dbPath, ["audit", "tail", "--limit", "2", "--json"])).stdout
    )
    assert.strictEqual(limited.length, 2)
    const table = await cliInProcess(s.dbPath, ["audit", "tail"])
    assert.strictEqual(table.code, 0)
    assert.match(table.stdout, /^TIME\s+EVENT\s+APP KEY/)
  })

  it("a bad --limit is a usage error (exit 2)", async () => {
    const r = await cliInProcess(s.dbPath, ["audit", "tail", "--limit", "zero"])
    assert.strictEqual(r.code, 2)
    assert.include(r.stderr, "--limit")
  })
})

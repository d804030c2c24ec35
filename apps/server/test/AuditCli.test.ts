import { assert, describe, it } from "@effect/vitest"
import { AdminApi } from "@latchkey/core"
import { afterAll, beforeAll } from "vitest"
import * as Commands from "../src/Commands.js"
import { basic, cliInProcess } from "./helpers.js"
import { read, type Stack, startStack, token } from "./security/harness.js"

let s: Stack
beforeAll(async () => {
  s = await startStack()
  await token(s, { grant_type: "client_credentials" })
  await token(s, { grant_type: "client_credentials", open_id: "dev-9" }, s.B)
  await token(s, { grant_type: "client_credentials" }, basic(s.A.appKey, "not the App Secret"))
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

  it("gives the same events in the same order as GET /admin/v1/audit: the newest, oldest first", async () => {
    const token = "admin-token-0123456789abcdef-0123456789"
    const res = await s.runtime.runPromise(
      AdminApi.route(
        {
          method: "GET",
          path: `${AdminApi.basePath}/audit`,
          query: "limit=3",
          headers: { authorization: `Bearer ${token}` },
          body: ""
        },
        { token }
      )
    )
    assert.strictEqual(res.status, 200)
    const api = JSON.parse(res.body) as Array<Record<string, string | null>>
    const cli = JSON.parse((await cliInProcess(s.dbPath, ["audit", "tail", "--limit", "3", "--json"])).stdout)
    assert.deepStrictEqual(cli, api)
    const all = JSON.parse((await cliInProcess(s.dbPath, ["audit", "tail", "--json"])).stdout) as typeof api
    assert.deepStrictEqual(all.slice(-3), api, "the newest three, the newest last")
    const times = all.map((e) => e.at ?? "")
    assert.deepStrictEqual(times, [...times].sort())
  })

  it("shows the application's name and the username beside their ids", async () => {
    const events = JSON.parse((await cliInProcess(s.dbPath, ["audit", "tail", "--json"])).stdout) as Array<
      Record<string, string | null>
    >
    const issued = events.find((e) => e.type === "token_issued" && e.open_id === "dev-9")
    assert.deepInclude(issued, { app_key: s.B.appKey, app_name: "Other App" })
    const signIn = events.find((e) => e.type === "signin_failed" && e.user_id === s.alice.userId)
    assert.deepInclude(signIn, { username: "alice" })
    const table = (await cliInProcess(s.dbPath, ["audit", "tail"])).stdout
    assert.include(table, `${s.B.appKey} (Other App)`)
    assert.include(table, `${s.alice.userId} (alice)`)
  })

  it("a bad --limit is a usage error (exit 2)", async () => {
    const r = await cliInProcess(s.dbPath, ["audit", "tail", "--limit", "zero"])
    assert.strictEqual(r.code, 2)
    assert.include(r.stderr, "--limit")
  })
})

describe("audit tail escaping (docs/security.md, catalogue H18)", () => {
  it("the table shows C0, DEL, C1, line separators, bidi controls and the backslash as visible escapes", () => {
    assert.strictEqual(Commands.visible("plain App-Key_1.~"), "plain App-Key_1.~")
    assert.strictEqual(Commands.visible("a\nb\rc\td\\e"), "a\\nb\\rc\\td\\\\e")
    assert.strictEqual(Commands.visible("\u0000\u001b[2J\u007f\u0085\u009b"), "\\x00\\x1b[2J\\x7f\\x85\\x9b")
    assert.strictEqual(
      Commands.visible("\u061c\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069"),
      "\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a\\u202e\\u2066\\u2069"
    )
    // printable text outside ASCII is kept
    assert.strictEqual(Commands.visible("caf\u00e9 \u20ac \u{1f600}"), "caf\u00e9 \u20ac \u{1f600}")
    // every code unit from U+0000 to U+FFFF comes out free of the characters escaped
    let all = ""
    for (let c = 0; c <= 0xffff; c++) all += String.fromCharCode(c)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    assert.notMatch(Commands.visible(all), /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/)
  })

  it("the JSON escapes what JSON.stringify leaves raw and parses back to the same value", () => {
    let all = ""
    for (let c = 0; c <= 0xffff; c++) all += String.fromCharCode(c)
    const value = [{ app_key: all, detail: "\u2028\u2029\u202e\u0085\u007f" }]
    const text = Commands.auditJsonText(value)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    assert.notMatch(text, /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/)
    assert.deepStrictEqual(JSON.parse(text), value)
    assert.include(text, "\\u2028\\u2029\\u202e\\u0085\\u007f")
  })
})

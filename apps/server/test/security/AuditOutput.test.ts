/**
 * docs/security.md: catalogue row H18 and checklist K8. The App Key of a failed client
 * authentication is chosen by whoever sends it; `audit tail` must not let it move the cursor,
 * clear the screen, reorder text or forge a line: the table shows control characters as
 * visible escapes, `--json` stays valid JSON with the value intact, and stored values are
 * bounded (Audit.maxFieldLength). Since T13 an App Key with control characters is refused before
 * any store, so no request records one; the event holding one here is stored directly, as an
 * older version or another writer may have left it.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Audit, AuditStore, BasicAuth } from "@latchkey/core"
import { Effect } from "effect"
import { cli, cliInProcess } from "../helpers.js"
import { type Stack, startStack, token } from "./harness.js"

/** Clears the screen, then starts a fake line recording a token for client A. */
const forged = (appKey: string) =>
  `\u001b[2J\nTIME 2030-01-01T00:00:00.000Z  token_issued  ${appKey}  -  -  127.0.0.1\r\u2028\u202e\u0085\u007f\u2066x`
const huge = `${"k".repeat(1200)}\u2028`

/** Anything that a terminal acts on or that reorders or breaks text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const raw = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/

let s: Stack
let hostile: string

beforeAll(async () => {
  s = await startStack()
  hostile = forged(s.A.appKey)
  const send = (appKey: string) =>
    token(s, { grant_type: "client_credentials" }, BasicAuth.encode({ appKey, appSecret: "wrong" }))
  // T13: the forged App Key is malformed Basic, refused before the audit store sees it
  assert.strictEqual((await send(hostile)).status, 401)
  const failures = await s.runtime.runPromise(
    Effect.flatMap(AuditStore.AuditStore, (a) => a.query({ limit: 10, type: "client_auth_failed" }))
  )
  assert.deepStrictEqual(failures, [])
  await s.runtime.runPromise(Audit.record("client_auth_failed", { appKey: hostile }))
  assert.strictEqual((await send(huge)).status, 401)
})
afterAll(() => s.close())

describe("H18: audit tail shows hostile App Keys escaped", () => {
  it("H18, K8: the table prints each event on one line with the escapes visible (spawned, as `pnpm --silent cli audit tail`)", async () => {
    // the failures only: registering A and B recorded application_created too
    const r = await cli(s.dbPath, ["audit", "tail", "--type", "client_auth_failed"])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.notMatch(r.stdout, raw)
    const lines = r.stdout.trimEnd().split("\n")
    // the header and the two failures, nothing else: no forged line
    assert.strictEqual(lines.length, 3, r.stdout)
    assert.match(lines[0] ?? "", /^TIME\s+EVENT\s+APP KEY/)
    assert.isFalse(lines.some((l) => /^\S+\s+token_issued\s/.test(l)))
    assert.isFalse(lines.some((l) => l.startsWith("TIME 2030")))
    const failed = lines[1] ?? ""
    assert.match(failed, /^\d{4}-\d\d-\d\dT\S+\s+client_auth_failed\s/)
    assert.include(
      failed,
      `\\x1b[2J\\nTIME 2030-01-01T00:00:00.000Z  token_issued  ${s.A.appKey}  -  -  127.0.0.1\\r\\u2028\\u202e\\x85\\x7f\\u2066x`
    )
    assert.match(lines[2] ?? "", /client_auth_failed\s+k{128}\s/)
  })

  it("H18, K8: --json is valid JSON with the App Key as sent (cut to its bound) and no raw separator or bidi character", async () => {
    const r = await cliInProcess(s.dbPath, ["audit", "tail", "--json"])
    assert.strictEqual(r.code, 0)
    assert.notMatch(r.stdout.trimEnd(), raw)
    assert.strictEqual(r.stdout.trimEnd().split("\n").length, 1)
    const events = JSON.parse(r.stdout) as Array<{ type: string; app_key: string | null }>
    const failed = events.filter((e) => e.type === "client_auth_failed")
    assert.strictEqual(failed.length, 2)
    assert.strictEqual(failed[0]?.app_key, hostile)
    // ClientAuth keeps 128 characters of an App Key; every field is within Audit.maxFieldLength
    assert.strictEqual(failed[1]?.app_key, "k".repeat(128))
    assert.isTrue(events.every((e) => (e.app_key ?? "").length <= Audit.maxFieldLength))
  })
})

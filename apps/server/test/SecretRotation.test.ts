/**
 * `app rotate-secret --grace` against a running stack on the same database: the old App
 * Secret keeps working at once, until the grace ends. The CLI reads the real clock; the
 * stack runs on a manual clock, moved to the end of the grace instead of waiting for it.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { basic, cliInProcess } from "./helpers.js"
import { stableHeaders } from "./security/flows.js"
import {
  type Client,
  type ManualClock,
  manualClock,
  read,
  type Stack,
  startStack,
  token
} from "./security/harness.js"

const cc = { grant_type: "client_credentials" }

// The stack of most tests runs on the live clock; the expiry test has its own, on a manual one
let s: Stack
beforeAll(async () => {
  // the timing samples below fail many times on purpose
  s = await startStack({ throttle: { freeFailures: 1_000_000, addressFreeFailures: 1_000_000 } })
})
afterAll(() => s?.close())

const status = async (appKey: string, appSecret: string): Promise<number> =>
  (await read(await token(s, cc, basic(appKey, appSecret)))).status

/** The secret with another last character: a wrong secret. */
const otherLast = (secret: string) => `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`

interface RotatedJson {
  readonly app_key: string
  readonly app_secret: string
  readonly previous_secret_expires_at: string | null
}

const rotate = async (client: Client | string, ...flags: ReadonlyArray<string>): Promise<RotatedJson> => {
  const appKey = typeof client === "string" ? client : client.appKey
  const r = await cliInProcess(s.dbPath, ["app", "rotate-secret", appKey, ...flags, "--json"])
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as RotatedJson
}

const show = async (appKey: string) => {
  const r = await cliInProcess(s.dbPath, ["app", "show", appKey, "--json"])
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as {
    previous_secret_expires_at: string | null
    previous_secret_first_used_at: string | null
  }
}

const audit = async (appKey: string) => {
  const r = await cliInProcess(s.dbPath, ["audit", "tail", "--app", appKey, "--json"])
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as Array<{ type: string; detail: string | null; at: string }>
}

/** Move a manual clock to `ms` (epoch milliseconds); it only ever moves forward. */
const moveTo = (clock: ManualClock, ms: number) => {
  assert.isAtLeast(ms, clock.now())
  clock.advance(ms - clock.now())
}

describe("app rotate-secret --grace", () => {
  it("the old secret works at once and until the grace ends, then 401; the new one works throughout", async () => {
    const clock = manualClock()
    const own = await startStack({ clock: clock.clock })
    try {
      const status = async (appKey: string, appSecret: string): Promise<number> =>
        (await read(await token(own, cc, basic(appKey, appSecret)))).status
      const c = own.A
      const before = Date.now()
      const rotated = await cliInProcess(own.dbPath, [
        "app",
        "rotate-secret",
        c.appKey,
        "--grace",
        "1h",
        "--json"
      ])
      assert.strictEqual(rotated.code, 0, rotated.stderr)
      const r = JSON.parse(rotated.stdout) as RotatedJson
      assert.strictEqual(r.app_key, c.appKey)
      assert.notStrictEqual(r.app_secret, c.appSecret)
      const expiresMs = Date.parse(r.previous_secret_expires_at ?? "")
      // rounded up to the second: at least an hour from the rotation, never a second more
      assert.isAtLeast(expiresMs, before + 3600_000)
      assert.isBelow(expiresMs, Date.now() + 3601_000)
      assert.strictEqual(await status(c.appKey, c.appSecret), 200, "the old secret, right after the rotation")
      assert.strictEqual(await status(c.appKey, r.app_secret), 200)
      assert.strictEqual(await status(c.appKey, otherLast(r.app_secret)), 401)
      moveTo(clock, expiresMs - 1000)
      assert.strictEqual(await status(c.appKey, c.appSecret), 200, "the last second of the grace")
      moveTo(clock, expiresMs)
      assert.strictEqual(await status(c.appKey, c.appSecret), 401, "the grace is over")
      assert.strictEqual(await status(c.appKey, r.app_secret), 200)
    } finally {
      await own.close()
    }
  })

  it("without --grace (or with --grace 0) the old secret stops at once, as before", async () => {
    const c = await s.client({ name: "Rotated at once" })
    const r = await rotate(c)
    assert.isNull(r.previous_secret_expires_at)
    assert.strictEqual(await status(c.appKey, c.appSecret), 401)
    assert.strictEqual(await status(c.appKey, r.app_secret), 200)
    const zero = await rotate(c, "--grace", "0s")
    assert.isNull(zero.previous_secret_expires_at)
    assert.strictEqual(await status(c.appKey, r.app_secret), 401)
    assert.strictEqual(await status(c.appKey, zero.app_secret), 200)
  })

  it("a second rotation during the grace drops the oldest secret", async () => {
    const c = await s.client({ name: "Rotated twice" })
    const first = await rotate(c, "--grace", "2d")
    const second = await rotate(c, "--grace", "30m")
    assert.strictEqual(await status(c.appKey, c.appSecret), 401, "the oldest secret")
    assert.strictEqual(await status(c.appKey, first.app_secret), 200, "the previous secret")
    assert.strictEqual(await status(c.appKey, second.app_secret), 200)
    const shown = await show(c.appKey)
    assert.strictEqual(shown.previous_secret_expires_at, second.previous_secret_expires_at)
  })

  it("the rotation and the first use of the old secret are in the audit trail; app show tells both", async () => {
    const c = await s.client({ name: "Audited rotation" })
    const r = await rotate(c, "--grace", "90m")
    const human = await cliInProcess(s.dbPath, ["app", "show", c.appKey])
    assert.include(
      human.stdout,
      `Old secret:    works until ${r.previous_secret_expires_at}; not used since the rotation`
    )
    assert.isNull((await show(c.appKey)).previous_secret_first_used_at)
    for (let i = 0; i < 3; i++) assert.strictEqual(await status(c.appKey, c.appSecret), 200)
    assert.strictEqual(await status(c.appKey, r.app_secret), 200)
    const events = await audit(c.appKey)
    const rotated = events.filter((e) => e.type === "secret_rotated")
    assert.deepStrictEqual(
      rotated.map((e) => e.detail),
      ["grace 5400s"]
    )
    const used = events.filter((e) => e.type === "client_auth_previous_secret")
    assert.strictEqual(used.length, 1, "one event per rotation, not one per request")
    assert.strictEqual(used[0]?.detail, `previous secret works until ${r.previous_secret_expires_at}`)
    const shown = await show(c.appKey)
    assert.strictEqual(shown.previous_secret_first_used_at, used[0]?.at)
    const text = await cliInProcess(s.dbPath, ["app", "show", c.appKey])
    assert.include(text.stdout, `first used after the rotation at ${used[0]?.at}`)
    const tail = await cliInProcess(s.dbPath, ["audit", "tail", "--app", c.appKey])
    for (const secret of [c.appSecret, r.app_secret]) assert.notInclude(tail.stdout, secret)
  })

  it("during a grace a wrong secret and an unknown App Key stay indistinguishable; the old and the new secret answer alike", async () => {
    // Timing is equal by construction (both digests are compared on every request, see
    // ClientAuth.authenticate); a wall-clock comparison would fail under load, so none here.
    const c = await s.client({ name: "Alike rotation" })
    const r = await rotate(c, "--grace", "1d")
    const w = await token(s, cc, basic(c.appKey, "x".repeat(43)))
    const u = await token(s, cc, basic("rotation-unknown-app-key-00", "x".repeat(43)))
    assert.deepStrictEqual(stableHeaders(u), stableHeaders(w))
    assert.strictEqual(await u.text(), await w.text())
    const old = await token(s, cc, basic(c.appKey, c.appSecret))
    const fresh = await token(s, cc, basic(c.appKey, r.app_secret))
    assert.deepStrictEqual([old.status, fresh.status], [200, 200])
    assert.deepStrictEqual(stableHeaders(old), stableHeaders(fresh))
  })
})

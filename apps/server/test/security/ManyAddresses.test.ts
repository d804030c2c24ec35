/**
 * Throttles that outsiders cannot turn against users (docs/security.md): attacks
 * sent in parallel from several loopback addresses (127.0.0.x) against the real
 * server and SQLite. Each address is a distinct client address for the server.
 */
import { request } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Accounts } from "@latchkey/core"
import { basic, formOf } from "../helpers.js"
import { authorizeUrl } from "./flows.js"
import { manualClock, type Stack, startStack } from "./harness.js"

interface Answer {
  readonly status: number
  readonly setCookies: ReadonlyArray<string>
  readonly text: string
}

/** One HTTP request sent from `localAddress`. */
const send = (
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {}
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? "GET", headers: options.headers, localAddress },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (d: string) => {
          text += d
        })
        res.on("end", () => {
          const raw = res.headers["set-cookie"]
          resolve({ status: res.statusCode ?? 0, setCookies: raw ?? [], text })
        })
      }
    )
    req.on("error", reject)
    req.end(options.body)
  })

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** A browser at one address: keeps its cookies. */
class Browser {
  readonly cookies = new Map<string, string>()
  constructor(readonly address: string) {}
  private cookieHeader(): Record<string, string> {
    return this.cookies.size === 0
      ? {}
      : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
  }
  private keep(a: Answer): Answer {
    for (const c of a.setCookies) {
      const pair = c.split(";")[0] as string
      const eq = pair.indexOf("=")
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    return a
  }
  async get(url: string): Promise<Answer> {
    return this.keep(
      await send(this.address, url, { headers: { accept: "text/html", ...this.cookieHeader() } })
    )
  }
  async post(url: string, fields: Record<string, string>): Promise<Answer> {
    return this.keep(
      await send(this.address, url, {
        method: "POST",
        headers: {
          accept: "text/html",
          "content-type": "application/x-www-form-urlencoded",
          ...this.cookieHeader()
        },
        body: form(fields)
      })
    )
  }
  /** Open the sign-in page; returns the POST that signs in with `password` (not sent yet). */
  async openSignIn(s: Stack, username: string, password: string): Promise<() => Promise<Answer>> {
    const page = await this.get(authorizeUrl(s))
    const f = formOf(page.text)
    return () => this.post(new URL(s.base).origin + f.action, { ...f.fields, username, password })
  }
}

const addresses = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `127.0.0.${from + i}`)

// The time stands still unless a test moves it: slots of the schedule fall where the test says
const clock = manualClock()
let s: Stack
beforeAll(async () => {
  s = await startStack({
    clock: clock.clock,
    throttle: {
      freeFailures: 3,
      addressFreeFailures: 5,
      slowFreeFailures: 3,
      baseLockout: 60,
      maxLockout: 60,
      maxDelay: 1,
      window: 600
    }
  })
})
afterAll(async () => {
  await s.close()
})

describe("attacks from many addresses (docs/security.md, throttling)", () => {
  it("wrong secrets for an App Key sent in parallel from eight addresses never refuse its own secret from another", async () => {
    const client = await s.client({ name: "Many addresses" })
    const wrong = basic(client.appKey, "x".repeat(43))
    const tokenFrom = (address: string, authorization: string) =>
      send(address, `${s.base}/oauth2/oauth2/token`, {
        method: "POST",
        headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials"
      })
    const attack = addresses(2, 8).flatMap((a) => Array.from({ length: 6 }, () => tokenFrom(a, wrong)))
    const statuses = (await Promise.all(attack)).map((r) => r.status)
    assert.isTrue(statuses.every((st) => st === 401 || st === 429))
    assert.isTrue(statuses.includes(429), "the attackers' own addresses were throttled")
    assert.strictEqual((await tokenFrom("127.0.0.10", client.basic)).status, 200)
    // the attacker's address is the one that waits
    assert.strictEqual((await tokenFrom("127.0.0.2", client.basic)).status, 429)
  })

  it("a username attacked in parallel from eight addresses: a browser the user never used, her own browser and the password grant all still sign in", async () => {
    await s.runtime.runPromise(Accounts.createUser("many-ada", "ada-correct-password"))
    const ada = new Browser("127.0.0.20")
    assert.strictEqual((await (await ada.openSignIn(s, "many-ada", "ada-correct-password"))()).status, 303)
    assert.isTrue(ada.cookies.has("latchkey_device"))
    const posts = await Promise.all(
      addresses(21, 8).flatMap((a) =>
        Array.from({ length: 5 }, (_, i) => new Browser(a).openSignIn(s, "many-ada", `wrong-${a}-${i}`))
      )
    )
    const statuses = (await Promise.all(posts.map((p) => p()))).map((r) => r.status)
    assert.isTrue(statuses.includes(429), "each attacking address ran out of its budget for the username")
    // a browser Ada never used is slowed down (at most maxDelay), not refused, once the username's
    // next slot is within maxDelay: the attack left it 2 s ahead (slots 1 s apart)…
    clock.advance(1000)
    const stranger = await (
      await new Browser("127.0.0.30").openSignIn(s, "many-ada", "ada-correct-password")
    )()
    assert.strictEqual(stranger.status, 303)
    // …her own browser, signed out, signs in, and the application's password grant answers
    ada.cookies.delete("latchkey_session")
    assert.strictEqual((await (await ada.openSignIn(s, "many-ada", "ada-correct-password"))()).status, 303)
    const grant = await send("127.0.0.31", `${s.base}/oauth2/oauth2/token`, {
      method: "POST",
      headers: { authorization: s.A.basic, "content-type": "application/x-www-form-urlencoded" },
      body: form({ grant_type: "password", username: "many-ada", password: "ada-correct-password" })
    })
    assert.strictEqual(grant.status, 200)
  })

  it("30 sign-ins for one username posted at once from six addresses: no more passwords are checked than the budgets of the six allow", async () => {
    await s.runtime.runPromise(Accounts.createUser("many-bob", "bob-correct-password"))
    const posts = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        new Browser(`127.0.0.${40 + (i % 6)}`).openSignIn(
          s,
          "many-bob",
          i === 29 ? "bob-correct-password" : `wrong-${i}-password`
        )
      )
    )
    const statuses = (await Promise.all(posts.map((p) => p()))).map((r) => r.status)
    // 400 (wrong) and 303 (right) were checked; 429 was refused before the hash. Five posts from
    // each address: its budget for the username is the 3 free failures and one that locks.
    const checked = statuses.filter((st) => st === 400 || st === 303).length
    assert.isAtMost(checked, 6 * (3 + 1))
    assert.strictEqual(statuses.filter((st) => st === 429).length, 30 - checked)
  })
})

/**
 * A property-based HTTP fuzz of the token and authorize endpoints of the real
 * server: random and mutated requests (bounded in count) never produce a 5xx,
 * a redirect to an unregistered URI, a token without valid credentials, or a
 * secret in the logs.
 */
import { assert, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll } from "vitest"
import { basic } from "../helpers.js"
import { cb, type Stack, startStack } from "./harness.js"

let s: Stack
let code: string
let refresh: string
beforeAll(async () => {
  // throttling would soon answer 429 to everything; the fuzz is about what lies behind it
  s = await startStack({ throttle: { freeFailures: 1e6, addressFreeFailures: 1e6, slowFreeFailures: 1e6 } })
  const r = await fetch(`${s.base}/oauth2/oauth2/token`, {
    method: "POST",
    headers: { authorization: s.A.basic, "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials&open_id=fuzz-device"
  })
  refresh = ((await r.json()) as { refresh_token: string }).refresh_token
  code = "not-a-real-code-but-shaped-like-one-0123456789ab"
})
afterAll(() => s.close())

const mutate = (text: string, junk: string, at: number): string => {
  const i = text.length === 0 ? 0 : at % (text.length + 1)
  return text.slice(0, i) + junk + text.slice(i)
}

it("token endpoint: 800 random and mutated requests give no 5xx, only JSON errors, and tokens only to valid credentials", async () => {
  const values = fc.oneof(
    fc.constantFrom(
      "client_credentials",
      "authorization_code",
      "password",
      "refresh_token",
      cb,
      code,
      refresh,
      "alice",
      s.alice.password,
      s.A.appKey,
      "read,write",
      "x".repeat(3000)
    ),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.string({ maxLength: 6 })
  )
  const names = [
    "grant_type",
    "code",
    "redirect_uri",
    "username",
    "password",
    "scope",
    "refresh_token",
    "client_id",
    "client_secret",
    "code_verifier",
    "open_id"
  ]
  const form = fc
    .tuple(
      fc.constantFrom("client_credentials", "authorization_code", "password", "refresh_token"),
      fc.dictionary(fc.constantFrom(...names), values, { maxKeys: 5 })
    )
    .map(([g, rest]) => {
      const p: Record<string, string> = { grant_type: g, ...rest }
      // open_id and client_id are identifiers the caller chooses and are audited as named (a
      // failed client authentication records the App Key it was given): keep secrets out of them
      if (p.open_id === s.alice.password || p.open_id === refresh) p.open_id = "device-1"
      if (p.client_id === s.alice.password || p.client_id === refresh) p.client_id = s.A.appKey
      return new URLSearchParams(p).toString()
    })
  const body = fc.oneof(
    { arbitrary: form, weight: 3 },
    fc
      .tuple(form, fc.string({ unit: "binary", maxLength: 8 }), fc.nat())
      .map(([f, j, at]) => mutate(f, j, at))
  )
  const auth = fc.oneof(
    { arbitrary: fc.constantFrom(s.A.basic, s.B.basic), weight: 5 },
    fc.constant(undefined),
    fc.string({ minLength: 1, maxLength: 30 }).map((x) => basic(s.A.appKey, x)),
    fc.string({ maxLength: 40 }).map((x) => x.replace(/[\r\n\0]/g, ""))
  )
  const type = fc.oneof(
    { arbitrary: fc.constant("application/x-www-form-urlencoded"), weight: 8 },
    fc.constantFrom(
      "application/json",
      "text/plain",
      "multipart/form-data; boundary=x",
      "application/x-www-form-urlencoded; charset=utf-7"
    )
  )
  let issued = 0
  await fc.assert(
    fc.asyncProperty(body, auth, type, async (b, a, t) => {
      const headers: Record<string, string> = { "content-type": t }
      if (a !== undefined) headers.authorization = a
      let res: Response
      try {
        res = await fetch(`${s.base}/oauth2/oauth2/token`, { method: "POST", headers, body: b })
      } catch (e) {
        // fetch itself refuses some header values before sending; nothing reached the server
        if (e instanceof TypeError) return
        throw e
      }
      const text = await res.text()
      assert.isBelow(res.status, 500, text)
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/)
      const json = JSON.parse(text) as { error?: string; access_token?: string }
      if (res.status === 200) {
        issued++
        assert.include([s.A.basic, s.B.basic], a, "a token was issued without valid client credentials")
        assert.isString(json.access_token)
      } else {
        assert.isString(json.error)
      }
    }),
    { numRuns: 800 }
  )
  assert.isAbove(issued, 0, "the fuzz never reached a successful grant")
  for (const secret of [s.A.appSecret, s.B.appSecret, s.alice.password, refresh])
    assert.notInclude(s.logs(), secret)
}, 120_000)

it("authorize endpoint: 800 random and mutated queries never redirect to an unregistered URI and never 5xx", async () => {
  const uri = fc.oneof(
    fc.constantFrom(
      cb,
      `${cb}/`,
      "https://evil.example/cb",
      "//evil.example/cb",
      "https://app.example/cb#x",
      "javascript:alert(1)"
    ),
    fc.webUrl(),
    fc.string({ maxLength: 20 })
  )
  const query = fc
    .record(
      {
        response_type: fc.constantFrom("code", "token", "CODE", "code token", "", "id_token"),
        client_id: fc.oneof({ arbitrary: fc.constant(s.A.appKey), weight: 4 }, fc.string({ maxLength: 12 })),
        redirect_uri: fc.oneof({ arbitrary: fc.constant(cb), weight: 3 }, uri),
        state: fc.string({ unit: "binary", maxLength: 30 }),
        scope: fc.oneof(
          fc.constantFrom("read", "read,write", "admin", "", "read write"),
          fc.string({ maxLength: 8 })
        ),
        client_type: fc.constantFrom("PC", "Mobile", "pc", "Desktop"),
        code_challenge: fc.string({ maxLength: 60 }),
        code_challenge_method: fc.constantFrom("S256", "plain", "S512")
      },
      { requiredKeys: [] }
    )
    .map((q) => new URLSearchParams(q).toString())
  const raw = fc.oneof(
    { arbitrary: query, weight: 3 },
    fc
      .tuple(query, fc.string({ unit: "binary", maxLength: 6 }), fc.nat())
      .map(([q, j, at]) => mutate(q, j, at))
  )
  let redirects = 0
  await fc.assert(
    fc.asyncProperty(raw, async (q) => {
      let res: Response
      try {
        res = await fetch(`${s.base}/oauth2/oauth2/authorize?${q}`, { redirect: "manual" })
      } catch (e) {
        if (e instanceof TypeError) return
        throw e
      }
      await res.arrayBuffer()
      assert.isBelow(res.status, 500)
      const location = res.headers.get("location")
      if (location !== null) {
        redirects++
        const absolute = new URL(location, s.base)
        const toClient = location.startsWith(`${cb}?`) || location.startsWith(`${cb}#`)
        const onOrigin = absolute.origin === new URL(s.base).origin
        assert.isTrue(toClient || onOrigin, location)
      }
    }),
    { numRuns: 800 }
  )
  assert.isAbove(redirects, 0, "the fuzz never reached an error redirect")
}, 120_000)

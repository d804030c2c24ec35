/**
 * Store invariants D10 and D11 (docs/security.md) over HTTP: two server processes on one SQLite file,
 * parallel redemptions of one code and parallel refreshes of one refresh token,
 * split between the processes. Exactly one wins every time, nothing answers 5xx,
 * and presenting the lost token again leaves the family revoked.
 */
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import {
  Browser,
  basic,
  createApp,
  createUser,
  formOf,
  type ServerProcess,
  spawnServer,
  tempDir
} from "../helpers.js"

const cb = "https://app.example/cb"
const rounds = 40
const parallel = 20

let dir: { dir: string; cleanup: () => void }
let servers: Array<ServerProcess> = []
let auth: string
let appKey: string
const browser = new Browser()

beforeAll(async () => {
  dir = tempDir()
  const db = join(dir.dir, "race.sqlite")
  const env = { LATCHKEY_DB: db, PORT: "0", LATCHKEY_SECRET: "race-test-server-key-0123456789abcdef" }
  const app = await createApp(
    db,
    [
      "--name",
      "Race",
      "--redirect-uri",
      cb,
      "--scope",
      "read",
      "--grant-types",
      "authorization_code,refresh_token"
    ],
    env
  )
  appKey = app.app_key
  auth = basic(app.app_key, app.app_secret)
  await createUser(db, "racer", "a long enough password", env)
  servers = await Promise.all([spawnServer(env), spawnServer(env)])
  // sign in once and consent: later authorize requests answer 302 with a code at once
  const first = servers[0] as ServerProcess
  const page = await browser.fetch(authorizeUrl(first))
  const login = formOf(await page.text())
  const origin = new URL(first.base).origin
  const signedIn = await browser.postForm(origin + login.action, {
    ...login.fields,
    username: "racer",
    password: "a long enough password"
  })
  const consentPage = await browser.fetch(origin + (signedIn.headers.get("location") as string))
  const consent = formOf(await consentPage.text())
  await browser.postForm(origin + consent.action, { ...consent.fields, decision: "allow" })
}, 60_000)

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
  dir.cleanup()
})

const authorizeUrl = (s: ServerProcess) =>
  `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams({ response_type: "code", client_id: appKey, redirect_uri: cb })}`

const newCode = async (): Promise<string> => {
  const res = await browser.fetch(authorizeUrl(servers[0] as ServerProcess))
  assert.strictEqual(res.status, 302)
  return new URL(res.headers.get("location") as string).searchParams.get("code") as string
}

const tokenAt = (i: number, body: Record<string, string>) =>
  fetch(`${(servers[i % 2] as ServerProcess).base}/oauth2/oauth2/token`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body).toString()
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }))

it(`D10 race-code: ${rounds} rounds of ${parallel} parallel redemptions across 2 processes, exactly one winner, no 5xx, replay revokes`, async () => {
  for (let round = 0; round < rounds; round++) {
    const code = await newCode()
    const results = await Promise.all(
      Array.from({ length: parallel }, (_, i) =>
        tokenAt(i, { grant_type: "authorization_code", code, redirect_uri: cb })
      )
    )
    assert.strictEqual(results.filter((r) => r.status === 200).length, 1, `round ${round}`)
    assert.isTrue(results.every((r) => r.status === 200 || r.body.error === "invalid_grant"))
    const winner = results.find((r) => r.status === 200)?.body as Record<string, string>
    // the losers were replays: the winner's refresh token is revoked with its family
    const after = await tokenAt(round, {
      grant_type: "refresh_token",
      refresh_token: winner.refresh_token as string
    })
    assert.strictEqual(after.body.error, "invalid_grant")
  }
}, 60_000)

it(`D11 race-refresh: ${rounds} rounds of ${parallel} parallel refreshes across 2 processes, exactly one winner, no 5xx, reuse revokes`, async () => {
  for (let round = 0; round < rounds; round++) {
    const code = await newCode()
    const issued = await tokenAt(round, { grant_type: "authorization_code", code, redirect_uri: cb })
    const rt = issued.body.refresh_token as string
    const results = await Promise.all(
      Array.from({ length: parallel }, (_, i) =>
        tokenAt(i, { grant_type: "refresh_token", refresh_token: rt })
      )
    )
    assert.strictEqual(results.filter((r) => r.status === 200).length, 1, `round ${round}`)
    assert.isTrue(results.every((r) => r.status === 200 || r.body.error === "invalid_grant"))
    const successor = results.find((r) => r.status === 200)?.body.refresh_token as string
    const next = await tokenAt(round + 1, { grant_type: "refresh_token", refresh_token: successor })
    assert.strictEqual(next.body.error, "invalid_grant", "the losing reuse revoked the family")
  }
}, 60_000)

/**
 * The scale-out scenarios: two instances of the server on one store must answer as one server.
 * They are written once over a `Deployment` (how to start the instances on a fresh store, how to
 * reach A and B, how to kill A), so the same tests run against two processes on one SQLite file,
 * the workers of one server (LATCHKEY_WORKERS), or servers on PostgreSQL (DATABASE_URL).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Browser, basic, createApp, createUser, formOf, signInAndAllow } from "../helpers.js"

/** Two running instances of the server on one store. */
export interface Instances {
  /** Base URL of instance A. */
  readonly a: string
  /** Base URL of instance B; the same as `a` for the workers of one server, which take connections in turn. */
  readonly b: string
  /** The base URL that answers after `killA`. */
  readonly survivor: string
  /**
   * kill -9 instance A (or one worker), requests in flight or not; resolves once it is gone and
   * `survivor` answers on every instance it will have (a restarted worker included).
   */
  readonly killA: () => Promise<void>
  /**
   * The instance that answered each request, by its X-Request-Id (from the instances' `request`
   * log lines, waiting for them, bounded): a label per id, equal labels for one instance.
   */
  readonly answeredBy: (requestIds: ReadonlyArray<string>) => Promise<ReadonlyArray<string>>
  /** Stop every instance still running (SIGTERM, bounded). */
  readonly stop: () => Promise<void>
}

/** Where the scenarios run. */
export interface Deployment {
  /** The environment that selects the shared store, for the CLI that seeds it: `{ LATCHKEY_DB }` or `{ DATABASE_URL }`. */
  readonly storeEnv: Record<string, string>
  /** Start the instances on the (empty) store, with `env` added to their environment. */
  readonly start: (env: Record<string, string>) => Promise<Instances>
  /** Delete the store once the instances are stopped. */
  readonly cleanup: () => Promise<void> | void
}

/** The environment the scenarios start the instances with: a throttle budget small enough to reach. */
const scenarioEnv: Record<string, string> = { LATCHKEY_THROTTLE_FREE_FAILURES: "3" }

const cb = "https://app.example/cb"
const password = "scale-out password"
/** Every request on a new connection: workers behind one port are then handed them in turn. */
const fresh = { connection: "close" }

/** A JSON endpoint's answer and the request id it was given. */
interface Reply {
  readonly status: number
  readonly body: Record<string, unknown>
  readonly id: string
}

/** A form POST to a JSON endpoint, given up after `timeoutMs`. */
const post = async (
  url: string,
  form: Record<string, string>,
  authorization: string,
  timeoutMs = 15_000
): Promise<Reply> => {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...fresh, authorization, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await res.text()
  return {
    status: res.status,
    body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
    id: res.headers.get("x-request-id") ?? ""
  }
}

/** The id of a page response. */
const idOf = (res: Response): string => res.headers.get("x-request-id") ?? ""

/**
 * Register the scenarios under `name`, on a deployment made by `deployment` (called once, before
 * them). The instances start on the empty store (both generating or reading the server key at
 * once), then the CLI registers the applications and users.
 */
export const describeMultiInstance = (name: string, deployment: () => Promise<Deployment>): void => {
  describe(name, () => {
    let d: Deployment | undefined
    let i: Instances
    let app: { app_key: string; app_secret: string; auth: string }
    let throttled: { app_key: string; app_secret: string }

    beforeAll(async () => {
      d = await deployment()
      i = await d.start(scenarioEnv)
      const db = d.storeEnv.LATCHKEY_DB ?? ""
      const grants = "authorization_code,refresh_token,client_credentials"
      const created = await createApp(
        db,
        ["--name", "Scale", "--redirect-uri", cb, "--scope", "read", "--grant-types", grants],
        d.storeEnv
      )
      app = { ...created, auth: basic(created.app_key, created.app_secret) }
      throttled = await createApp(
        db,
        ["--name", "Throttled", "--redirect-uri", cb, "--grant-types", "client_credentials"],
        d.storeEnv
      )
      await Promise.all(
        ["scale-1", "scale-2"].map((username) => createUser(db, username, password, d?.storeEnv, true))
      )
    }, 60_000)

    afterAll(async () => {
      await i?.stop()
      await d?.cleanup()
    }, 30_000)

    const token = (base: string, form: Record<string, string>, auth = app.auth, timeoutMs?: number) =>
      post(`${base}/oauth2/oauth2/token`, form, auth, timeoutMs)
    const introspect = (base: string, t: string) =>
      post(`${base}/oauth2/oauth2/introspect`, { token: t }, app.auth)
    const authorizeUrl = (base: string, params: Record<string, string> = {}) =>
      `${base}/oauth2/oauth2/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: app.app_key,
        redirect_uri: cb,
        scope: "read",
        ...params
      })}`
    const codeOf = (location: string) => new URL(location).searchParams.get("code") as string

    it("a code issued and redeemed at A is refused at B, and that replay revokes what A issued for it", async () => {
      const callback = await signInAndAllow(i.a, authorizeUrl(i.a), { username: "scale-1", password })
      const redemption = { grant_type: "authorization_code", code: codeOf(callback), redirect_uri: cb }
      const redeemed = await token(i.a, redemption)
      assert.strictEqual(redeemed.status, 200, JSON.stringify(redeemed.body))
      const replays = [await token(i.b, redemption), await token(i.b, redemption)]
      for (const r of replays) {
        assert.strictEqual(r.status, 400)
        assert.strictEqual(r.body.error, "invalid_grant")
      }
      assert.isFalse((await introspect(i.b, redeemed.body.access_token as string)).body.active)
      const [redeemedBy, ...replayedBy] = await i.answeredBy([redeemed.id, ...replays.map((r) => r.id)])
      assert.isTrue(
        replayedBy.some((by) => by !== redeemedBy),
        `a replay reached another instance than the redemption: ${redeemedBy} ${replayedBy}`
      )
    })

    it("of 50 parallel refreshes of one refresh token spread over A and B exactly one wins; reusing the old one revokes the new tokens, seen at the other instance", async () => {
      const issued = await token(i.a, { grant_type: "client_credentials", open_id: "race-subject" })
      assert.strictEqual(issued.status, 200, JSON.stringify(issued.body))
      const old = issued.body.refresh_token as string
      assert.isString(old)
      const refresh = { grant_type: "refresh_token", refresh_token: old }
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, k) => token(k % 2 === 0 ? i.a : i.b, refresh))
      )
      const winners = results.flatMap((r, k) => (r.status === 200 ? [{ r, k }] : []))
      assert.strictEqual(winners.length, 1, JSON.stringify(results.map((r) => r.status)))
      for (const r of results) if (r.status !== 200) assert.strictEqual(r.body.error, "invalid_grant")
      const winner = (winners[0] as { r: Reply; k: number }).r
      const other = (winners[0] as { r: Reply; k: number }).k % 2 === 0 ? i.b : i.a
      assert.strictEqual((await token(i.a, refresh)).body.error, "invalid_grant")
      assert.isFalse((await introspect(other, winner.body.access_token as string)).body.active)
      const next = await token(other, {
        grant_type: "refresh_token",
        refresh_token: winner.body.refresh_token as string
      })
      assert.strictEqual(next.body.error, "invalid_grant")
      assert.strictEqual(new Set(await i.answeredBy(results.map((r) => r.id))).size, 2)
    })

    it("a token revoked at A is inactive at B at once", async () => {
      const issued = await token(i.a, { grant_type: "client_credentials" })
      const access = issued.body.access_token as string
      assert.isTrue((await introspect(i.b, access)).body.active)
      const revoked = await post(`${i.a}/oauth2/oauth2/revoke`, { token: access }, app.auth)
      assert.strictEqual(revoked.status, 200)
      const seen = [await introspect(i.b, access), await introspect(i.b, access)]
      for (const s of seen) assert.deepStrictEqual(s.body, { active: false })
      const [revokedBy, ...seenBy] = await i.answeredBy([revoked.id, ...seen.map((s) => s.id)])
      assert.isTrue(
        seenBy.some((by) => by !== revokedBy),
        `${revokedBy} ${seenBy}`
      )
    })

    it("a sign-in started at A finishes at B: the session cookie and each form's CSRF token hold on the other instance", async () => {
      const browser = new Browser(fresh)
      const page = await browser.fetch(authorizeUrl(i.a, { state: "across" }))
      assert.strictEqual(page.status, 200)
      const login = formOf(await page.text())
      const signedIn = await browser.postForm(i.b + login.action, {
        ...login.fields,
        username: "scale-2",
        password
      })
      assert.strictEqual(signedIn.status, 303)
      const consentPage = await browser.fetch(new URL(signedIn.headers.get("location") as string, i.b).href)
      assert.strictEqual(consentPage.status, 200)
      const consent = formOf(await consentPage.text())
      const allowed = await browser.postForm(i.a + consent.action, { ...consent.fields, decision: "allow" })
      assert.strictEqual(allowed.status, 303)
      const landed = new URL(allowed.headers.get("location") as string)
      assert.strictEqual(landed.searchParams.get("state"), "across")
      const redeemed = await token(i.b, {
        grant_type: "authorization_code",
        code: codeOf(landed.href),
        redirect_uri: cb
      })
      assert.strictEqual(redeemed.status, 200, JSON.stringify(redeemed.body))
      const [pageBy, signedInBy, consentPageBy, allowedBy] = await i.answeredBy(
        [page, signedIn, consentPage, allowed].map(idOf)
      )
      assert.isTrue(
        pageBy !== signedInBy || consentPageBy !== allowedBy,
        `a form was posted to another instance than the one that showed it: ${[pageBy, signedInBy, consentPageBy, allowedBy]}`
      )
    })

    it("wrong secrets alternated between A and B draw on one throttle budget: 429 after 4 failures in all, not 8", async () => {
      const wrong = basic(throttled.app_key, "not the secret at all")
      const answers: Array<Reply> = []
      for (let k = 0; k < 6; k++)
        answers.push(await token(k % 2 === 0 ? i.a : i.b, { grant_type: "client_credentials" }, wrong))
      assert.deepStrictEqual(
        answers.map((a) => a.status),
        [401, 401, 401, 401, 429, 429]
      )
      // Locked out on both instances: even the right secret
      const right = basic(throttled.app_key, throttled.app_secret)
      for (const base of [i.a, i.b])
        assert.strictEqual((await token(base, { grant_type: "client_credentials" }, right)).status, 429)
      assert.strictEqual(new Set(await i.answeredBy(answers.slice(0, 4).map((a) => a.id))).size, 2)
    })

    it("kill -9 of A in a burst of token requests loses no token answered 200: each one is active at the survivor", async () => {
      const total = 120
      const killAfter = 30
      const issued: Array<{ token: string; afterKill: boolean }> = []
      let settled = 0
      let next = 0
      let killed: Promise<void> | undefined
      const one = async (k: number) => {
        try {
          // 5 s: a connection a cluster's primary was handing to the killed worker stays open
          // until the client gives up (docs/decisions.md, "Worker processes")
          const r = await token(
            k % 2 === 0 ? i.a : i.b,
            { grant_type: "client_credentials" },
            app.auth,
            5_000
          )
          if (r.status === 200)
            issued.push({ token: r.body.access_token as string, afterKill: killed !== undefined })
        } catch {
          // A died with this request: no answer, so nothing was promised
        }
        settled++
        if (settled === killAfter) killed = i.killA()
      }
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          while (next < total) await one(next++)
        })
      )
      await killed
      assert.isAtLeast(issued.filter((t) => !t.afterKill).length, killAfter - 6)
      assert.isAtLeast(issued.filter((t) => t.afterKill).length, 1, "the survivor kept answering")
      const inactive: Array<string> = []
      for (const t of issued) {
        const r = await introspect(i.survivor, t.token)
        if (r.body.active !== true) inactive.push(`${r.status} ${JSON.stringify(r.body)}`)
      }
      assert.deepStrictEqual(inactive, [])
    }, 60_000)
  })
}

/**
 * docs/security.md T13 and T17 on every store: NUL, other C0 controls, DEL, C1, invalid
 * percent-encoding, invalid UTF-8 and lone surrogates in every parameter of every endpoint (T13)
 * and in every value an administrator gives through the admin API or the CLI (T17) are bad input
 * (a 4xx with the RFC 6749 error the endpoint gives malformed input, or 400 naming the field),
 * never a 5xx nor a storage outage, and change nothing. The same rows run on SQLite, on PostgreSQL over an embedded PGlite, and on
 * the PostgreSQL server `DATABASE_URL` names when it is set.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Browser, cliInProcess, formOf } from "../helpers.js"
import { assertErrorPage, assertRedirectError, authorizePath } from "./browse.js"
import { expectError } from "./flows.js"
import { cb, post, read, type Stack } from "./harness.js"
import {
  adminToken,
  assertNoOutage,
  encoded,
  formWith,
  logMark,
  shownTexts,
  snapshot,
  stores,
  texts
} from "./hostile.js"

const tokenPath = "/oauth2/oauth2/token"
const basicOf = (text: string) => `Basic ${Buffer.from(text, "utf8").toString("base64")}`

for (const store of stores) {
  describe(`hostile text (T13, T17) on ${store.name}`, () => {
    let s: Stack
    let close: () => Promise<void> = async () => {}
    let cliEnv: Record<string, string> | undefined
    let before = ""
    let mark = 0
    beforeAll(async () => {
      const started = await store.start()
      s = started.stack
      close = started.close
      cliEnv = started.cliEnv
      before = await snapshot(s)
      mark = logMark(s)
    }, 120_000)
    afterAll(async () => {
      // Every row of this store: nothing changed, no 5xx, no outage logged
      try {
        assert.strictEqual(await snapshot(s), before)
        assertNoOutage(s, mark)
      } finally {
        await close()
      }
    })

    const form = (path: string, body: string, headers: Record<string, string> = {}) =>
      post(s, path, body, { authorization: s.A.basic, ...headers }).then(read)

    it("T13: token endpoint: every parameter of every grant is 400 with the grant's error for malformed input", async () => {
      const grants: ReadonlyArray<readonly [Record<string, string>, string, string]> = [
        [{ grant_type: "authorization_code", code: "c", redirect_uri: cb }, "code", "invalid_request"],
        [
          { grant_type: "authorization_code", code: "c", redirect_uri: cb },
          "redirect_uri",
          "invalid_request"
        ],
        [
          { grant_type: "authorization_code", code: "c", redirect_uri: cb },
          "code_verifier",
          "invalid_request"
        ],
        [
          { grant_type: "password", username: "alice", password: s.alice.password },
          "username",
          "invalid_request"
        ],
        [
          { grant_type: "password", username: "alice", password: s.alice.password },
          "password",
          "invalid_request"
        ],
        [{ grant_type: "refresh_token", refresh_token: "r" }, "refresh_token", "invalid_request"],
        [{ grant_type: "refresh_token", refresh_token: "r" }, "scope", "invalid_scope"],
        [{ grant_type: "client_credentials" }, "open_id", "invalid_request"],
        [{ grant_type: "client_credentials" }, "client_id", "invalid_request"],
        [{}, "grant_type", "unsupported_grant_type"]
      ]
      for (const [fields, name, error] of grants) {
        for (const v of encoded) {
          const r = await form(tokenPath, formWith(fields, name, v.raw))
          expectError(r, 400, v.kind === "encoding" ? "invalid_request" : error)
        }
      }
    })

    it("T13: Basic credentials: a hostile App Key or App Secret is the 401 invalid_client of any malformed Basic, at every endpoint", async () => {
      const credentials = [
        ...encoded.map((v) => `${v.raw}:secret`),
        ...encoded.map((v) => `${encodeURIComponent(s.A.appKey)}:${v.raw}`),
        ...texts.map(([, t]) => `${t}:secret`),
        ...texts.map(([, t]) => `${s.A.appKey}:${t}`)
      ]
      for (const path of [tokenPath, "/oauth2/oauth2/introspect", "/oauth2/oauth2/revoke"]) {
        for (const c of credentials) {
          const body = path === tokenPath ? "grant_type=client_credentials" : "token=t"
          const r = await form(path, body, { authorization: basicOf(c) })
          expectError(r, 401, "invalid_client")
        }
      }
    })

    it("T13: introspection and revocation: a hostile token is 400 invalid_request; a hostile hint is ignored like any unknown one", async () => {
      for (const path of ["/oauth2/oauth2/introspect", "/oauth2/oauth2/revoke"]) {
        for (const v of encoded) {
          expectError(await form(path, formWith({}, "token", v.raw)), 400, "invalid_request")
          const hint = await form(path, formWith({ token: "t" }, "token_type_hint", v.raw))
          if (v.kind === "encoding") expectError(hint, 400, "invalid_request")
          else assert.strictEqual(hint.status, 200, JSON.stringify(hint.body))
        }
      }
    })

    it("T13: authorize: client_id and redirect_uri get the error page, the other parameters their redirect error; state comes back exactly", async () => {
      const base = { response_type: "code", client_id: s.A.appKey, redirect_uri: cb }
      const get = (query: string) =>
        fetch(`${s.base}${authorizePath}?${query}`, { headers: { accept: "text/html" }, redirect: "manual" })
      const redirected: ReadonlyArray<readonly [string, string]> = [
        ["response_type", "unsupported_response_type"],
        ["scope", "invalid_scope"],
        ["client_type", "invalid_request"],
        ["code_challenge", "invalid_request"],
        ["code_challenge_method", "invalid_request"]
      ]
      for (const v of encoded) {
        for (const name of ["client_id", "redirect_uri"]) {
          await assertErrorPage(await get(formWith(base, name, v.raw)))
        }
        for (const [name, error] of redirected) {
          const res = await get(formWith(base, name, v.raw))
          if (v.kind === "encoding") await assertErrorPage(res)
          else assertRedirectError(res, error)
        }
        for (const name of ["state", "ui_locales"]) {
          const res = await get(formWith(base, name, v.raw))
          // The state is the client's and goes back as it came (docs/decisions.md); ui_locales a hint
          if (v.kind === "encoding") await assertErrorPage(res)
          else assert.strictEqual(res.status, 200, await res.text())
        }
      }
    })

    /** A fresh form of the page `url` leads to, in a browser of its own (or `browser`). */
    const pageForm = async (url: string, browser = new Browser()) => {
      const page = await browser.fetch(url)
      assert.strictEqual(page.status, 200)
      return { browser, ...formOf(await page.text()) }
    }
    const postRaw = (browser: Browser, action: string, body: string) =>
      browser.fetch(s.base + action, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body
      })
    const authorizeA = () =>
      `${s.base}${authorizePath}?${new URLSearchParams({ response_type: "code", client_id: s.A.appKey, redirect_uri: cb })}`

    it("T13: sign-in form: a hostile username or password is the generic sign-in failure, never shown again; a hostile ticket is the expired-form page", async () => {
      for (const v of encoded) {
        for (const name of ["username", "password"]) {
          const f = await pageForm(authorizeA())
          const res = await postRaw(f.browser, f.action, formWith({ ...f.fields, ...s.alice }, name, v.raw))
          const html = await res.text()
          assert.strictEqual(res.status, 400, html.slice(0, 300))
          if (v.kind === "control") assert.include(html, "Username or password is incorrect.")
          // the username field is filled in again only with alice, never with the hostile value
          const refill = /name="username"[^>]*?(?: value="([^"]*)")?[ >]/.exec(html)?.[1]
          assert.include([undefined, "alice"], refill)
        }
        for (const name of ["txn", "csrf_token"]) {
          const f = await pageForm(authorizeA())
          const res = await postRaw(f.browser, f.action, formWith({ ...f.fields, ...s.alice }, name, v.raw))
          await assertErrorPage(
            res,
            v.kind === "encoding" ? "invalid_request" : "access_denied",
            v.kind === "encoding" ? 400 : 403
          )
        }
      }
    })

    /** A browser signed in as alice (through the sign-in form of client B's request, so no consent is given). */
    const signedIn = async () => {
      const url = `${s.base}${authorizePath}?${new URLSearchParams({ response_type: "code", client_id: s.B.appKey, redirect_uri: cb })}`
      const f = await pageForm(url)
      const res = await f.browser.postForm(s.base + f.action, { ...f.fields, ...s.alice })
      assert.strictEqual(res.status, 303)
      return { browser: f.browser, url }
    }

    it("T13: consent form: a hostile decision is the no-decision page, a hostile ticket the expired-form page; nothing is allowed", async () => {
      const { browser, url } = await signedIn()
      for (const v of encoded) {
        const rows: ReadonlyArray<readonly [string, string, number]> = [
          ["decision", "invalid_request", 400],
          ["txn", "access_denied", 403],
          ["csrf_token", "access_denied", 403]
        ]
        for (const [name, error, status] of rows) {
          const f = await pageForm(url, browser)
          const res = await postRaw(
            browser,
            f.action,
            formWith({ ...f.fields, decision: "allow" }, name, v.raw)
          )
          if (v.kind === "encoding") await assertErrorPage(res, "invalid_request", 400)
          else await assertErrorPage(res, error, status)
        }
      }
    })

    it("T13: consents page: a hostile App Key, action or ticket is refused before any store; a hostile username is the generic sign-in failure", async () => {
      const consents = `${s.base}/oauth2/oauth2/consents`
      for (const v of encoded) {
        const anonymous = await pageForm(consents)
        const signIn = await postRaw(
          anonymous.browser,
          anonymous.action,
          formWith({ ...anonymous.fields, ...s.alice }, "username", v.raw)
        )
        assert.strictEqual(signIn.status, 400, (await signIn.text()).slice(0, 300))
      }
      const { browser } = await signedIn()
      const rows: ReadonlyArray<readonly [Record<string, string>, string, string, number]> = [
        [{ action: "withdraw" }, "app_key", "invalid_request", 400],
        [{ action: "withdraw", app_key: s.A.appKey }, "action", "invalid_request", 400],
        [{ action: "withdraw", app_key: s.A.appKey }, "txn", "access_denied", 403],
        [{ action: "withdraw", app_key: s.A.appKey }, "csrf_token", "access_denied", 403]
      ]
      for (const v of encoded) {
        for (const [fields, name, error, status] of rows) {
          // the sign-out form's ticket, sent as a withdrawal
          const f = await pageForm(consents, browser)
          const res = await postRaw(browser, f.action, formWith({ ...f.fields, ...fields }, name, v.raw))
          if (v.kind === "encoding") await assertErrorPage(res, "invalid_request", 400)
          else await assertErrorPage(res, error, status)
        }
      }
    })

    it("T13: session cookie and /api/me bearer: hostile values are no session and an invalid request, never a store error", async () => {
      for (const v of encoded) {
        for (const value of [v.raw, `${v.raw}.sig`]) {
          const res = await fetch(authorizeA(), {
            headers: { accept: "text/html", cookie: `latchkey_session=${value}; latchkey_device=${value}` },
            redirect: "manual"
          })
          assert.strictEqual(res.status, 200)
        }
        const me = await fetch(`${s.base}/api/me`, { headers: { authorization: `Bearer ${v.raw}` } })
        assert.strictEqual(me.status, 400)
        assert.include(me.headers.get("www-authenticate") ?? "", 'error="invalid_request"')
      }
    })

    /** A request to the admin API; the parsed JSON answer. */
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${s.admin}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminToken}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
      })
      return { status: res.status, text: await res.text() }
    }
    const expectField = (r: { status: number; text: string }, field: string, value: string) => {
      assert.strictEqual(r.status, 400, r.text)
      const body = JSON.parse(r.text) as Record<string, unknown>
      assert.strictEqual(body.error, "invalid_request", r.text)
      assert.strictEqual(body.field, field, r.text)
      // the value itself is never echoed, not even escaped
      assert.notInclude(JSON.stringify(body), JSON.stringify(value).slice(1, -1))
    }

    it("T17: admin API paths: a hostile App Key, user id or audit filter is 400 naming the field; one that does not decode is 404", async () => {
      const alice = s.alice.userId
      for (const v of encoded) {
        const rows: ReadonlyArray<readonly [string, string, string, unknown?]> = [
          ["GET", `/applications/${v.raw}`, "app_key"],
          ["PATCH", `/applications/${v.raw}`, "app_key", { name: "x" }],
          ["DELETE", `/applications/${v.raw}`, "app_key"],
          ["POST", `/applications/${v.raw}/secret`, "app_key", {}],
          ["DELETE", `/applications/${v.raw}/subjects/someone/tokens`, "app_key"],
          ["DELETE", `/applications/${v.raw}/consents/${alice}`, "app_key"],
          ["DELETE", `/applications/${s.A.appKey}/consents/${v.raw}`, "user"],
          ["GET", `/users/${v.raw}`, "user"],
          ["PATCH", `/users/${v.raw}`, "user", { disabled: true }],
          ["DELETE", `/users/${v.raw}`, "user"],
          ["GET", `/users/${v.raw}/consents`, "user"],
          ["GET", `/audit?app_key=${v.raw}`, "app_key"],
          ["GET", `/audit?type=${v.raw}`, "type"]
        ]
        for (const [method, path, field, body] of rows) {
          const r = await admin(method, path, body)
          if (v.kind === "encoding") assert.include([400, 404], r.status, r.text)
          else expectField(r, field, decodeURIComponent(v.raw))
        }
      }
    })

    it("T17: admin API bodies: a hostile name, redirect URI, scope, username or password is 400 naming the field", async () => {
      const app = { name: "Hostile", redirect_uris: [cb] }
      for (const [, t] of texts) {
        expectField(await admin("POST", "/applications", { ...app, name: t }), "name", t)
        expectField(await admin("POST", "/applications", { ...app, redirect_uris: [t] }), "redirect_uris", t)
        expectField(await admin("POST", "/applications", { ...app, scopes: [t] }), "scopes", t)
        expectField(await admin("POST", "/applications", { ...app, scopes: t }), "scopes", t)
        expectField(await admin("PATCH", `/applications/${s.A.appKey}`, { name: t }), "name", t)
        expectField(await admin("POST", "/users", { username: t, password: "long enough" }), "username", t)
        expectField(await admin("POST", "/users", { username: "hostile", password: t }), "password", t)
        expectField(await admin("PATCH", `/users/${s.alice.userId}`, { password: t }), "password", t)
        // a hostile field name is not echoed either
        const named = await admin("POST", "/users", `{${JSON.stringify(`user${t}`)}:"x"}`)
        expectField(named, "body", `user${t}`)
      }
    })

    it("T18: admin API bodies: a name or username with a bidi control or an invisible character is 400 naming the field", async () => {
      for (const [, t] of shownTexts) {
        expectField(await admin("POST", "/applications", { name: t, redirect_uris: [cb] }), "name", t)
        expectField(await admin("PATCH", `/applications/${s.A.appKey}`, { name: t }), "name", t)
        expectField(await admin("POST", "/users", { username: t, password: "long enough" }), "username", t)
      }
    })

    it("T18: CLI arguments: a name or username with a bidi control or an invisible character is refused naming the field, exit 1, nothing changed", async () => {
      if (cliEnv === undefined) return
      for (const [, t] of shownTexts.slice(0, 2)) {
        const rows: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
          [["app", "create", "--name", t, "--redirect-uri", cb], "name"],
          [["app", "update", s.A.appKey, "--name", t], "name"],
          [["user", "create", "--username", t, "--password", "long enough"], "username"]
        ]
        for (const [args, field] of rows) {
          const r = await cliInProcess(s.dbPath, args, cliEnv)
          assert.strictEqual(r.code, 1, `${args.join(" ")}: ${r.stdout}${r.stderr}`)
          assert.include(
            r.stderr,
            `${field} must not contain bidirectional or invisible formatting characters`
          )
          assert.notInclude(r.stderr, t)
        }
      }
    })

    it("T17: CLI arguments: a hostile App Key, name, username or password is refused naming the field, exit 1, nothing changed", async () => {
      if (cliEnv === undefined) return
      const env = cliEnv
      // A runtime of its own per command: a few characters are enough to show the rule runs first
      for (const [, t] of texts.filter(([name]) =>
        ["NUL", "ESC", "C1 NEL", "lone surrogate"].includes(name)
      )) {
        const rows: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
          [["app", "show", t], "app_key"],
          [["app", "delete", t], "app_key"],
          [["app", "rotate-secret", t], "app_key"],
          [["app", "update", t, "--name", "x"], "app_key"],
          [["app", "create", "--name", t, "--redirect-uri", cb], "name"],
          [["app", "update", s.A.appKey, "--name", t], "name"],
          [["user", "create", "--username", t, "--password", "long enough"], "username"],
          [["user", "create", "--username", "hostile", "--password", t], "password"],
          [["user", "disable", t], "user"],
          [["token", "revoke", "--app", t, "--open-id", "someone"], "app_key"],
          [["consent", "revoke", "--user", s.alice.userId, "--app", t], "app_key"],
          [["audit", "tail", "--app", t], "app_key"]
        ]
        for (const [args, field] of rows) {
          const r = await cliInProcess(s.dbPath, args, env)
          assert.strictEqual(r.code, 1, `${args.join(" ")}: ${r.stdout}${r.stderr}`)
          assert.include(r.stderr, field)
          assert.notInclude(r.stderr, t)
        }
      }
    })
  })
}

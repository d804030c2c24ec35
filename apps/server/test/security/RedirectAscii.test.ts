/**
 * docs/security.md: catalogue row A24 and checklist R9. A redirect URI must be printable
 * ASCII (other characters percent-encoded) so that it can always be a `Location` header:
 * registration refuses `…/cb/€`, spaces and control characters, and an application row that
 * holds such a URI already (written around registration) gets the error page at authorize,
 * never a 500 after a consent and a code were written.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Application, ApplicationStore, Scope } from "@latchkey/core"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Either } from "effect"
import type { Browser } from "../helpers.js"
import { assertErrorPage, assertRedirect, authorizePath, consentedBrowser, get } from "./browse.js"
import { cb, type Stack, startStack } from "./harness.js"

const euro = "http://127.0.0.1:9000/cb/\u20ac"
const clean = "http://127.0.0.1:9000/cb"
/** Redirect URIs no `Location` header can carry as they are. */
const unsendable = [
  euro,
  "https://app.example/caf\u00e9",
  "https://app.example/c b",
  "https://app.example/cb\u0007"
]

let s: Stack
let alice: Browser

beforeAll(async () => {
  s = await startStack()
  alice = await consentedBrowser(s)
})

afterAll(async () => {
  await s?.close()
})

/** An application row written straight into the store, as one from before the rule would be. */
const insertLegacy = (appKey: string, redirectUris: ReadonlyArray<string>) => {
  const app: Application.Application = {
    appKey,
    name: "Legacy Euro",
    secretDigest: "not-a-digest",
    redirectUris,
    scopes: Either.getOrThrow(Scope.parse("read")),
    grantTypes: ["authorization_code", "implicit"],
    requirePkce: false,
    accessTokenTtl: null,
    refreshTokenTtl: null,
    createdAt: 0
  }
  return s.runtime.runPromise(Effect.flatMap(ApplicationStore.ApplicationStore, (store) => store.insert(app)))
}

const authorize = (browser: Browser | null, appKey: string, redirectUri: string, responseType = "code") => {
  const url = `${s.base}${authorizePath}?${new URLSearchParams({
    response_type: responseType,
    client_id: appKey,
    redirect_uri: redirectUri,
    state: "st"
  })}`
  return browser === null ? get(url) : browser.fetch(url)
}

/** Rows the authorize endpoint could have written for `appKey`. */
const written = (appKey: string) => {
  const db = new BetterSqlite3(s.dbPath, { readonly: true })
  try {
    const count = (table: string) =>
      (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE app_key = ?`).get(appKey) as { n: number }).n
    return { codes: count("authorization_codes"), consents: count("consents"), tokens: count("tokens") }
  } finally {
    db.close()
  }
}

describe("A24: redirect URIs that are not printable ASCII", () => {
  it("A24: registration (Admin.createApplication) refuses `…/cb/€`, a space and a control character with invalid_request", async () => {
    for (const uri of unsendable) {
      const error = await s.client({ name: "Euro", redirectUris: [uri] }).then(
        () => null,
        (e: unknown) => String(e)
      )
      assert.isNotNull(error, JSON.stringify(uri))
      assert.match(
        error ?? "",
        /redirect URI (must be printable ASCII|contains whitespace)/,
        JSON.stringify(uri)
      )
    }
  })

  it("A24: an application row holding `…/cb/€` (and others) gets the 400 error page at authorize, signed in or not, never a 500; no consent, code or token is written", async () => {
    await insertLegacy("legacy-euro", [clean, ...unsendable])
    for (const uri of unsendable) {
      for (const responseType of ["code", "token"]) {
        await assertErrorPage(await authorize(null, "legacy-euro", uri, responseType))
        await assertErrorPage(await authorize(alice, "legacy-euro", uri, responseType))
      }
    }
    assert.deepStrictEqual(written("legacy-euro"), { codes: 0, consents: 0, tokens: 0 })
    // the application's clean URI still works: the consent page, not an error
    const page = await authorize(alice, "legacy-euro", clean)
    assert.strictEqual(page.status, 200)
    assert.include(await page.text(), "Legacy Euro")
  })

  it("R9: a registered percent-encoded URI is sent back exactly, with a code", async () => {
    const encoded = `${clean}/%E2%82%AC`
    const client = await s.client({ name: "Euro encoded", redirectUris: [cb, encoded] })
    const browser = await consentedBrowser(s, client)
    const params = assertRedirect(await authorize(browser, client.appKey, encoded), { redirectUri: encoded })
    assert.isString(params.get("code"))
  })
})

/**
 * docs/security.md, catalogue S1–S8: scope parsing. The rules the rows leave open
 * (docs/decisions.md, scope syntax): items are separated by commas or spaces, empty items are
 * ignored, duplicates collapse, output is comma-joined and sorted; scopes are
 * case-sensitive NQCHAR tokens. The `scope` parameter is read only by the
 * refresh_token grant (and at authorize); the other grants ignore it.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  authorizeUrl,
  expectError,
  redeem,
  refresh,
  type SignedIn,
  tokenSet,
  useSignedInStack
} from "./flows.js"
import { callsDuring, callsMatching, cb, read, type Stack, token } from "./harness.js"

let s: Stack
let alice: SignedIn
useSignedInStack((stack, signedIn) => {
  s = stack
  alice = signedIn
})

/** The scope of the access token a refresh with `scope` gives, or the error. */
const refreshScope = async (scope: string) => {
  const { refresh: rt } = await tokenSet(s)
  return read(await refresh(s, rt, { scope }))
}

/** The scope of the token a code authorized with `scope` gives. */
const authorizedScope = async (scope: string) => {
  const r = await read(await redeem(s, await alice.code({ scope })))
  assert.strictEqual(r.status, 200, JSON.stringify(r.body))
  return r.body.scope
}

/** An authorize request refused before sign-in: the redirect's error and state. */
const authorizeError = async (scope: string) => {
  const res = await fetch(authorizeUrl(s, { scope, state: "s-1" }), { redirect: "manual" })
  assert.strictEqual(res.status, 302)
  const location = new URL(res.headers.get("location") as string)
  assert.strictEqual(`${location.origin}${location.pathname}`, cb)
  assert.strictEqual(location.searchParams.get("state"), "s-1")
  return location.searchParams.get("error")
}

describe("S: scope parsing", () => {
  it("S1: `read,,write`, `,read` and `read,` drop their empty items (empty items are ignored, docs/decisions.md)", async () => {
    for (const [scope, expected] of [
      ["read,,write", "read,write"],
      [",read", "read"],
      ["read,", "read"],
      [",,,write,,", "write"]
    ] as const) {
      const r = await refreshScope(scope)
      assert.strictEqual(r.status, 200, scope)
      assert.strictEqual(r.body.scope, expected, scope)
    }
    assert.strictEqual(await authorizedScope("read,,write"), "read,write")
  })

  it("S2: `read,read` is deduplicated to read (never counted twice)", async () => {
    const r = await refreshScope("read,read")
    assert.strictEqual(r.status, 200)
    assert.strictEqual(r.body.scope, "read")
    assert.strictEqual(await authorizedScope("write,write,read,read"), "read,write")
  })

  it("S3: `read, write` and `read%20write` are read,write (commas or spaces separate items, both on purpose: docs/decisions.md)", async () => {
    for (const scope of ["read, write", "read write", "write read", " read ,write "]) {
      const r = await refreshScope(scope)
      assert.strictEqual(r.status, 200, scope)
      assert.strictEqual(r.body.scope, "read,write", scope)
    }
    assert.strictEqual(await authorizedScope("read write"), "read,write")
    // other whitespace is not a separator
    for (const scope of ["read\twrite", "read\nwrite", "read+write"]) {
      expectError(await refreshScope(scope), 400, "invalid_scope")
    }
  })

  it("S4: `READ` is 400 invalid_scope (scopes are case-sensitive, RFC 6749 §3.3)", async () => {
    expectError(await refreshScope("READ"), 400, "invalid_scope")
    expectError(await refreshScope("Read,write"), 400, "invalid_scope")
    assert.strictEqual(await authorizeError("READ"), "invalid_scope")
  })

  it("S5: Cyrillic `rеad`, `read\\u200b` and fullwidth `ｒｅａｄ` are 400 invalid_scope (ASCII NQCHAR only)", async () => {
    for (const scope of ["r\u0435ad", "read\u200b", "\uff52\uff45\uff41\uff44", "read\u00a0", "caf\u00e9"]) {
      expectError(await refreshScope(scope), 400, "invalid_scope")
      assert.strictEqual(await authorizeError(scope), "invalid_scope")
    }
    // a quote or backslash is not NQCHAR either
    for (const scope of ['re"ad', "re\\ad"]) expectError(await refreshScope(scope), 400, "invalid_scope")
  })

  it("S6: 5,000 items or a 10 KB scope are 400 invalid_scope before the refresh token is read; 50,000 items or 100 KB are 413 (a body over 16 KiB) before anything is", async () => {
    const { refresh: rt } = await tokenSet(s)
    // raw commas (a form body need not escape them), so 5,000 items stay under 16 KiB
    for (const scope of [Array(5000).fill("r").join(","), "r".repeat(10 * 1024)]) {
      const r = await callsDuring(s, async () =>
        read(await token(s, `grant_type=refresh_token&refresh_token=${rt}&scope=${scope}`))
      )
      expectError(r.value, 400, "invalid_scope")
      assert.deepStrictEqual(callsMatching(r.calls, /^(TokenStore|PasswordHasher)\./), [])
    }
    for (const scope of [Array(50_000).fill("r").join(","), "r".repeat(100 * 1024)]) {
      const r = await callsDuring(s, async () => read(await refresh(s, rt, { scope })))
      expectError(r.value, 413, "invalid_request")
      assert.deepStrictEqual(r.calls, {})
    }
    // the refused requests did not use the refresh token up
    assert.strictEqual((await refresh(s, rt)).status, 200)
    assert.strictEqual(await authorizeError("r".repeat(4 * 1024)), "invalid_scope")
  })

  it("S7: `*`, `%`, `admin` and `openid` are invalid_scope at the token endpoint and a redirect error with state at authorize; password and client_credentials ignore scope (only refresh_token reads it)", async () => {
    for (const scope of ["*", "%", "admin", "openid", "read,admin"]) {
      expectError(await refreshScope(scope), 400, "invalid_scope")
      assert.strictEqual(await authorizeError(scope), "invalid_scope")
    }
    const cc = await read(await token(s, { grant_type: "client_credentials", scope: "admin" }))
    assert.strictEqual(cc.status, 200)
    assert.strictEqual(cc.body.scope, "read,write")
    const pw = await read(
      await token(s, { grant_type: "password", username: "alice", password: s.alice.password, scope: "*" })
    )
    assert.strictEqual(pw.status, 200)
    assert.strictEqual(pw.body.scope, "read,write")
    const code = await read(
      await redeem(s, await alice.code({ scope: "read" }), { scope: "read,write,admin" })
    )
    assert.strictEqual(code.status, 200)
    assert.strictEqual(code.body.scope, "read")
  })

  it("S8: an empty `scope=` counts as omitted: the application's default scopes at authorize, the original grant at refresh", async () => {
    assert.strictEqual(await authorizedScope(""), "read,write")
    const r = await refreshScope("")
    assert.strictEqual(r.status, 200)
    assert.strictEqual(r.body.scope, "read,write")
    // only separators: no item at all, the same as omitted
    const commas = await refreshScope(",, ,")
    assert.strictEqual(commas.status, 200)
    assert.strictEqual(commas.body.scope, "read,write")
  })
})

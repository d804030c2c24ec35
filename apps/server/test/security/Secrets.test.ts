/**
 * docs/security.md: checklist K2, K3 and store invariant D7: after every flow has run, neither the database files
 * nor the logs hold any token, code, secret or password that was issued or sent.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { assert, it } from "@effect/vitest"
import { cliInProcess, signInAndAllow } from "../helpers.js"
import { cb, post, read, startStack, token } from "./harness.js"

it("K2/K3: a full run of every flow leaves no token, code, secret or password in the database files or the logs", async () => {
  const s = await startStack()
  const sent: Array<string> = [s.A.appSecret, s.B.appSecret, s.alice.password]
  const keep = (...values: ReadonlyArray<unknown>) => {
    for (const v of values) if (typeof v === "string" && v.length > 0) sent.push(v)
  }
  try {
    // the JWK Set: the signing key exists from here on (the server's start makes it too)
    assert.strictEqual((await fetch(`${s.base}/oauth2/oauth2/jwks`)).status, 200)
    // client_credentials, with and without open_id
    const cc = await read(await token(s, { grant_type: "client_credentials" }))
    const ccUser = await read(await token(s, { grant_type: "client_credentials", open_id: "device-42" }))
    keep(cc.body.access_token, ccUser.body.access_token, ccUser.body.refresh_token)
    // password grant, and a failed one
    const pw = await read(
      await token(s, { grant_type: "password", username: "alice", password: s.alice.password })
    )
    keep(pw.body.access_token, pw.body.refresh_token)
    const wrong = "wrong-SENTINEL-PW-0042"
    keep(wrong)
    assert.strictEqual(
      (await token(s, { grant_type: "password", username: "alice", password: wrong })).status,
      400
    )
    // code with PKCE through the real sign-in and consent pages
    const verifier = "SENTINEL-VERIFIER-".padEnd(64, "x")
    keep(verifier)
    const challenge = createHash("sha256").update(verifier).digest("base64url")
    const location = await signInAndAllow(
      s.base,
      `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: s.A.appKey,
        redirect_uri: cb,
        state: "st",
        code_challenge: challenge,
        code_challenge_method: "S256"
      })}`,
      s.alice
    )
    const code = new URL(location).searchParams.get("code") as string
    keep(code)
    const exchanged = await read(
      await token(s, { grant_type: "authorization_code", code, redirect_uri: cb, code_verifier: verifier })
    )
    assert.strictEqual(exchanged.status, 200)
    keep(exchanged.body.access_token, exchanged.body.refresh_token)
    // replay, refresh, reuse, introspection, revocation
    await token(s, { grant_type: "authorization_code", code, redirect_uri: cb, code_verifier: verifier })
    const refreshed = await read(
      await token(s, { grant_type: "refresh_token", refresh_token: pw.body.refresh_token as string })
    )
    keep(refreshed.body.access_token, refreshed.body.refresh_token)
    await token(s, { grant_type: "refresh_token", refresh_token: pw.body.refresh_token as string })
    await post(
      s,
      "/oauth2/oauth2/introspect",
      { token: cc.body.access_token as string },
      { authorization: s.A.basic }
    )
    await post(
      s,
      "/oauth2/oauth2/revoke",
      { token: ccUser.body.refresh_token as string },
      { authorization: s.A.basic }
    )
    // implicit, with the consent remembered
    const implicit = await signInAndAllow(
      s.base,
      `${s.base}/oauth2/oauth2/authorize?${new URLSearchParams({ response_type: "token", client_id: s.A.appKey, redirect_uri: cb })}`,
      s.alice
    )
    keep(new URLSearchParams(new URL(implicit).hash.slice(1)).get("access_token"))
    // a secret rotated through the CLI against the same database
    const rotated = await cliInProcess(s.dbPath, ["app", "rotate-secret", s.B.appKey, "--json"])
    assert.strictEqual(rotated.code, 0)
    keep((JSON.parse(rotated.stdout) as { app_secret: string }).app_secret)
    const audit = await cliInProcess(s.dbPath, ["audit", "tail", "--json", "--limit", "500"])
    assert.strictEqual(audit.code, 0)
    assert.isAbove((JSON.parse(audit.stdout) as Array<unknown>).length, 10)
    for (const secret of sent) assert.notInclude(audit.stdout, secret)
    assert.isAbove(sent.length, 15)
    // the files while the server runs (WAL included), then after a clean close
    const dbBytes = () =>
      [s.dbPath, `${s.dbPath}-wal`, `${s.dbPath}-shm`].filter(existsSync).map((f) => readFileSync(f))
    const running = dbBytes()
    await s.stop()
    const closed = dbBytes()
    assert.isAbove(running.length + closed.length, 1)
    for (const secret of sent) {
      for (const bytes of [...running, ...closed]) {
        assert.strictEqual(bytes.indexOf(secret), -1, "a secret is stored in the database files")
      }
    }
    // The signing key made at start is stored, its private part sealed: no JWK private member in clear
    assert.isTrue(
      [...running, ...closed].some((bytes) => bytes.indexOf('"kty"') !== -1),
      "the public signing key is stored"
    )
    for (const bytes of [...running, ...closed])
      assert.strictEqual(bytes.indexOf('"d":"'), -1, "a private key is stored in clear")
    const logs = s.logs()
    assert.include(logs, '"audit"')
    for (const secret of sent) assert.notInclude(logs, secret, "a secret reached a log line")
    assert.notInclude(logs, '"d":"', "a private key reached a log line")
  } finally {
    await s.close()
  }
})

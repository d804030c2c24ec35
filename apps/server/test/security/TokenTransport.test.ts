/**
 * docs/security.md, catalogue T1–T13: the token endpoint's transport and framing.
 * Every row: no 500, no stack trace, no HTML, no token.
 */
import { connect } from "node:net"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnServer, tempDir } from "../helpers.js"
import { createDatabase, type Database, serverUrl } from "../postgres/database.js"
import {
  expectError,
  portOf,
  rawExchange,
  rawJson,
  rawStatus,
  redeem,
  type SignedIn,
  signIn,
  useSignedInStack
} from "./flows.js"
import { callsDuring, cb, post, read, type Stack, startStack, token } from "./harness.js"

const path = "/oauth2/oauth2/token"

let s: Stack
let alice: SignedIn
useSignedInStack((stack, signedIn) => {
  s = stack
  alice = signedIn
})

/** A raw POST to the token endpoint with client A's credentials and `Connection: close`. */
const rawPost = (headers: ReadonlyArray<string>, body: string) =>
  [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    `Authorization: ${s.A.basic}`,
    "Connection: close",
    ...headers,
    "",
    body
  ].join("\r\n")

/**
 * Stream up to `total` body bytes after `head` and stop as soon as the server answers;
 * returns the answer and how many body bytes were written before it.
 */
const streamUntilAnswered = (
  port: number,
  head: string,
  total: number,
  frame: (chunk: Buffer) => Buffer = (c) => c
): Promise<{ text: string; sent: number; closed: boolean }> =>
  new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    const chunk = Buffer.alloc(64 * 1024, "a")
    let text = ""
    let sent = 0
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ text, sent, closed })
    }
    const timer = setTimeout(() => finish(false), 5000)
    const pump = () => {
      while (!done && text === "" && sent < total) {
        sent += chunk.length
        if (!socket.write(frame(chunk))) {
          socket.once("drain", pump)
          return
        }
      }
    }
    socket.setEncoding("latin1")
    socket.on("data", (d: string) => {
      text += d
    })
    socket.on("error", () => finish(true))
    socket.on("close", () => finish(true))
    socket.on("connect", () => {
      socket.write(head)
      pump()
    })
  })

describe("T: token endpoint transport and framing", () => {
  it("T1: GET /oauth2/oauth2/token with valid Basic is 405 invalid_request with Allow: POST, no token", async () => {
    const r = await read(
      await fetch(`${s.base}${path}?grant_type=client_credentials`, {
        headers: { authorization: s.A.basic }
      })
    )
    expectError(r, 405, "invalid_request")
    assert.strictEqual(r.res.headers.get("allow"), "POST")
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      const other = await read(
        await fetch(`${s.base}${path}?grant_type=client_credentials`, {
          method,
          headers: { authorization: s.A.basic }
        })
      )
      expectError(other, 405, "invalid_request")
    }
  })

  it("T2: a POST with an empty body and the parameters in the query string is 400 invalid_request (the query is never read)", async () => {
    const query = new URLSearchParams({
      grant_type: "password",
      username: "alice",
      password: s.alice.password
    })
    const r = await read(
      await fetch(`${s.base}${path}?${query}`, {
        method: "POST",
        headers: { authorization: s.A.basic, "content-type": "application/x-www-form-urlencoded" },
        body: ""
      })
    )
    expectError(r, 400, "invalid_request")
    // a grant that needs nothing but grant_type is refused too: the query is not a fallback
    const cc = await read(
      await fetch(`${s.base}${path}?grant_type=client_credentials`, {
        method: "POST",
        headers: { authorization: s.A.basic, "content-type": "application/x-www-form-urlencoded" },
        body: ""
      })
    )
    expectError(cc, 400, "invalid_request")
  })

  it("T3: a JSON body (Content-Type: application/json) is 400 invalid_request as JSON", async () => {
    const r = await read(
      await post(s, path, JSON.stringify({ grant_type: "client_credentials" }), {
        authorization: s.A.basic,
        "content-type": "application/json"
      })
    )
    expectError(r, 400, "invalid_request")
  })

  it("T4: a missing, text/plain, multipart/form-data or garbage Content-Type is 400 invalid_request", async () => {
    const body = "grant_type=client_credentials"
    // no Content-Type at all: a byte body makes fetch send none
    const none = await read(
      await fetch(s.base + path, {
        method: "POST",
        headers: { authorization: s.A.basic },
        body: new TextEncoder().encode(body)
      })
    )
    expectError(none, 400, "invalid_request")
    for (const type of [
      "text/plain",
      "multipart/form-data; boundary=xyz",
      "invalid/@@##",
      "application/x-www-form-urlencoded-evil"
    ]) {
      expectError(
        await read(await post(s, path, body, { authorization: s.A.basic, "content-type": type })),
        400,
        "invalid_request"
      )
    }
    // the form type itself, in any case, with charset UTF-8, is accepted
    const ok = await read(
      await post(s, path, body, {
        authorization: s.A.basic,
        "content-type": "Application/X-WWW-Form-URLEncoded; charset=UTF-8"
      })
    )
    assert.strictEqual(ok.status, 200)
  })

  it("T5: charset=utf-7 or charset=koi8-r is 400 invalid_request as JSON (only form-urlencoded UTF-8 is read, RFC 6749 Appendix B)", async () => {
    for (const charset of ["utf-7", "koi8-r", "iso-8859-1"]) {
      const r = await read(
        await post(s, path, "grant_type=client_credentials", {
          authorization: s.A.basic,
          "content-type": `application/x-www-form-urlencoded; charset=${charset}`
        })
      )
      expectError(r, 400, "invalid_request")
    }
  })

  it("T6: a 10 MB body is 413 JSON, answered at the 16 KiB limit without reading it all", async () => {
    const total = 10 * 1024 * 1024
    const port = portOf(s.base)
    // declared length over the limit: refused before any body byte is read
    const declared = await streamUntilAnswered(
      port,
      rawPost(["Content-Type: application/x-www-form-urlencoded", `Content-Length: ${total}`], ""),
      total
    )
    assert.strictEqual(rawStatus(declared.text), 413, declared.text.slice(0, 200))
    assert.strictEqual(rawJson(declared.text).error, "invalid_request")
    assert.isBelow(declared.sent, total, "the server read the whole 10 MB before answering")
    // chunked, no length: refused once the limit is passed
    const chunked = await streamUntilAnswered(
      port,
      rawPost(["Content-Type: application/x-www-form-urlencoded", "Transfer-Encoding: chunked"], ""),
      total,
      (c) => Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from("\r\n")])
    )
    assert.strictEqual(rawStatus(chunked.text), 413, chunked.text.slice(0, 200))
    assert.isBelow(chunked.sent, total)
    // and a body just over 16 KiB through fetch
    const over = await read(await token(s, `grant_type=client_credentials&pad=${"a".repeat(16 * 1024)}`))
    expectError(over, 413, "invalid_request")
  })

  it("T7: 5,000 parameters are refused before any work (no client authentication, no store call): 413 over 16 KiB, else 400 invalid_request for the repeated name", async () => {
    const many = await callsDuring(s, async () => read(await token(s, Array(5000).fill("a=1").join("&"))))
    expectError(many.value, 413, "invalid_request")
    assert.deepStrictEqual(many.calls, {})
    const repeated = await callsDuring(s, async () => read(await token(s, Array(5000).fill("a").join("&"))))
    expectError(repeated.value, 400, "invalid_request")
    assert.deepStrictEqual(repeated.calls, {})
  })

  it("T8: a Content-Encoding: gzip bomb is 415 invalid_request, never inflated; memory stays flat", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, "a"), { level: 9 })
    assert.isBelow(bomb.length, 128 * 1024)
    const before = process.memoryUsage().rss
    const r = await read(
      await fetch(s.base + path, {
        method: "POST",
        headers: {
          authorization: s.A.basic,
          "content-type": "application/x-www-form-urlencoded",
          "content-encoding": "gzip"
        },
        body: bomb
      })
    )
    expectError(r, 415, "invalid_request")
    assert.isBelow(process.memoryUsage().rss - before, 48 * 1024 * 1024)
    for (const encoding of ["deflate", "br", "GZIP"]) {
      const other = await read(
        await post(s, path, "grant_type=client_credentials", {
          authorization: s.A.basic,
          "content-encoding": encoding
        })
      )
      expectError(other, 415, "invalid_request")
    }
  })

  it("T9: slowloris (headers or body 1 byte at a time) is cut off by headersTimeout/requestTimeout; other clients are served meanwhile", async () => {
    const { dir, cleanup } = tempDir()
    // LATCHKEY_HEADERS_TIMEOUT_MS / LATCHKEY_REQUEST_TIMEOUT_MS shortened so the test stays short,
    // and long enough that serving one other request never outlasts them
    const server = await spawnServer(
      {
        PORT: "0",
        LATCHKEY_DB: join(dir, "t9.sqlite"),
        LATCHKEY_HEADERS_TIMEOUT_MS: "3000",
        LATCHKEY_REQUEST_TIMEOUT_MS: "5000"
      },
      undefined,
      { timeoutMs: 60_000 }
    )
    try {
      // `closed` ends when the server closes the connection, or (failing the test) when the test's own wait ends
      const slow = (head: string, drip: string) => {
        const socket = connect({ host: "127.0.0.1", port: server.port })
        const connected = new Promise<void>((resolve) => socket.once("connect", () => resolve()))
        const closed = new Promise<{ closedBy: "server" | "the test's wait"; text: string }>((resolve) => {
          let text = ""
          let i = 0
          const dripper = setInterval(() => {
            if (!socket.destroyed) socket.write(drip[i++ % drip.length] as string)
          }, 100)
          const done = (closedBy: "server" | "the test's wait") => () => {
            clearInterval(dripper)
            clearTimeout(deadline)
            socket.destroy()
            resolve({ closedBy, text })
          }
          const deadline = setTimeout(done("the test's wait"), 12_000)
          socket.setEncoding("latin1")
          socket.on("data", (d: string) => {
            text += d
          })
          socket.on("close", done("server"))
          socket.on("error", done("server"))
          socket.on("connect", () => socket.write(head))
        })
        let open = true
        void closed.finally(() => {
          open = false
        })
        return { connected, closed, isOpen: () => open }
      }
      const headers = slow(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`, "X-Slow: aaaaaaaaaaaaaaaa\r\n")
      const body = slow(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\n`,
        "a"
      )
      await Promise.all([headers.connected, body.connected])
      // while both dribble, another client is served
      const meanwhile = await fetch(`http://127.0.0.1:${server.port}/healthz`)
      assert.strictEqual(meanwhile.status, 200)
      assert.isTrue(
        headers.isOpen() && body.isOpen(),
        "the other client was served only once a slow one was cut off"
      )
      const [h, b] = await Promise.all([headers.closed, body.closed])
      assert.strictEqual(h.closedBy, "server", "slow headers were not cut off")
      assert.strictEqual(b.closedBy, "server", "a slow body was not cut off")
      for (const r of [h, b]) assert.strictEqual(rawStatus(r.text), 408)
    } finally {
      await server.stop()
      cleanup()
    }
  }, 90_000)

  it("T10: Transfer-Encoding: chunked with a conflicting Content-Length is 400 from Node's parser; nothing is smuggled", async () => {
    const smuggled = "0\r\n\r\nGET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    for (const framing of [
      ["Content-Length: 4", "Transfer-Encoding: chunked"],
      ["Transfer-Encoding: chunked", "Content-Length: 40"],
      ["Content-Length: 4", "Content-Length: 40"]
    ]) {
      const r = await rawExchange(
        portOf(s.base),
        rawPost(["Content-Type: application/x-www-form-urlencoded", ...framing], smuggled)
      )
      assert.strictEqual(rawStatus(r.text), 400, r.text.slice(0, 200))
      assert.strictEqual(r.text.split("HTTP/1.1 ").length - 1, 1, "a second, smuggled response was sent")
      assert.notInclude(r.text, "access_token")
    }
  })

  it("T11: path variants (trailing slash, case, double slash, %2f) are 404 JSON and issue nothing", async () => {
    for (const variant of [
      "/oauth2/oauth2/token/",
      "/OAUTH2/oauth2/token",
      "/oauth2/OAuth2/Token",
      "/oauth2//oauth2/token",
      "/oauth2/oauth2/token%2f",
      "/oauth2/oauth2/token;x=1",
      "/oauth2/oauth2/./token"
    ]) {
      const r = await rawExchange(
        portOf(s.base),
        [
          `POST ${variant} HTTP/1.1`,
          "Host: 127.0.0.1",
          `Authorization: ${s.A.basic}`,
          "Content-Type: application/x-www-form-urlencoded",
          "Content-Length: 29",
          "Connection: close",
          "",
          "grant_type=client_credentials"
        ].join("\r\n")
      )
      assert.strictEqual(rawStatus(r.text), 404, `${variant}: ${r.text.slice(0, 200)}`)
      assert.match(r.text, /content-type: application\/json/i)
      assert.notInclude(r.text, "access_token")
    }
  })

  it("T12: invalid percent-encoding (%E0%A4%A) or raw %FF%FE bytes is 400 invalid_request (not valid form-urlencoded UTF-8, RFC 6749 Appendix B), never 500 nor a sign-in", async () => {
    for (const username of ["%E0%A4%A", "%FF%FE", "alice%FF", "%C3%28"]) {
      const r = await read(
        await token(
          s,
          `grant_type=password&username=${username}&password=${encodeURIComponent(s.alice.password)}`
        )
      )
      expectError(r, 400, "invalid_request")
    }
    // a decoded U+FFFD matches no user
    const replacement = await read(
      await token(s, { grant_type: "password", username: "alice\uFFFD", password: s.alice.password })
    )
    expectError(replacement, 400, "invalid_grant")
  })

  it("T13: a NUL byte (code=abc%00def, username=alice%00) is 400 invalid_request before storage is asked (SQLite)", async () => {
    await nulBytesRefused(s, alice)
  })
})

/** docs/security.md T13: NUL bytes in a code, a username and a refresh token are refused before the store sees them. */
const nulBytesRefused = async (s: Stack, alice: SignedIn) => {
  const code = await alice.code()
  const nul = await read(await redeem(s, `${code}\u0000`))
  expectError(nul, 400, "invalid_request")
  expectError(
    await read(await token(s, `grant_type=authorization_code&code=abc%00def&redirect_uri=${cb}`)),
    400,
    "invalid_request"
  )
  expectError(
    await read(
      await token(s, `grant_type=password&username=alice%00&password=${encodeURIComponent(s.alice.password)}`)
    ),
    400,
    "invalid_request"
  )
  expectError(
    await read(await token(s, "grant_type=refresh_token&refresh_token=abc%00def")),
    400,
    "invalid_request"
  )
  // the code itself was not touched by the refused request
  assert.strictEqual((await redeem(s, code)).status, 200)
}

describe.skipIf(serverUrl === undefined)("T13 on PostgreSQL (which refuses NUL in text)", () => {
  let database: Database | undefined
  let pg: Stack | undefined
  let pgAlice: SignedIn | undefined
  beforeAll(async () => {
    database = await createDatabase()
    pg = await startStack({ env: { DATABASE_URL: database.url } })
    pgAlice = await signIn(pg)
  })
  afterAll(async () => {
    await pg?.close()
    await database?.drop()
  })
  it("T13: a NUL byte (code=abc%00def, username=alice%00) is 400 invalid_request before storage is asked (PostgreSQL)", async () => {
    await nulBytesRefused(pg as Stack, pgAlice as SignedIn)
  })
})

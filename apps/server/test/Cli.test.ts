import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Commands from "../src/Commands.js"
import { repoRoot, runProcess, cli as spawnCli, tempDir } from "./helpers.js"

const tmp = tempDir()
const db = join(tmp.dir, "cli.sqlite")
afterAll(() => tmp.cleanup())

/** The CLI in this process: same code as the spawned one, without paying a process start per call. */
const cli = async (dbPath: string, args: ReadonlyArray<string>, input?: string) => {
  let stdout = ""
  let stderr = ""
  const code = await Commands.run(args, {
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    },
    env: { LATCHKEY_DB: dbPath },
    readStdin: async () => input ?? ""
  })
  return { code, stdout, stderr }
}

describe("app create", () => {
  it("prints exactly the JSON documented in the README (spawned)", async () => {
    const r = await spawnCli(db, [
      "app",
      "create",
      "--name",
      "Acme",
      "--redirect-uri",
      "https://acme.example/cb",
      "--redirect-uri",
      "http://127.0.0.1:8123/cb",
      "--scope",
      "read,write",
      "--json"
    ])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(r.stderr, "")
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    assert.deepStrictEqual(Object.keys(out), [
      "app_key",
      "app_secret",
      "name",
      "redirect_uris",
      "scopes",
      "grant_types"
    ])
    assert.strictEqual(out.name, "Acme")
    assert.deepStrictEqual(out.redirect_uris, ["https://acme.example/cb", "http://127.0.0.1:8123/cb"])
    assert.deepStrictEqual(out.scopes, ["read", "write"])
    assert.deepStrictEqual(out.grant_types, ["authorization_code", "refresh_token", "client_credentials"])
    assert.match(out.app_secret as string, /^[A-Za-z0-9_-]{43}$/)
  })

  it("takes grant types, PKCE and imported credentials", async () => {
    const r = await cli(db, [
      "app",
      "create",
      "--name",
      "Imported",
      "--redirect-uri",
      "https://imp.example/cb",
      "--grant-types",
      "password,implicit",
      "--require-pkce",
      "--app-key",
      "legacy-key-1",
      "--app-secret",
      "0123456789abcdef0123456789abcdef",
      "--json"
    ])
    assert.strictEqual(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    assert.strictEqual(out.app_key, "legacy-key-1")
    assert.strictEqual(out.app_secret, "0123456789abcdef0123456789abcdef")
    assert.deepStrictEqual(out.grant_types, ["password", "implicit"])
    const show = await cli(db, ["app", "show", "legacy-key-1", "--json"])
    assert.strictEqual((JSON.parse(show.stdout) as { require_pkce: boolean }).require_pkce, true)
  })

  it("refuses forbidden redirect URIs with exit code 1 and nothing on stdout (spawned)", async () => {
    const spawned = await Promise.all(
      ["http://evil.example/cb", "javascript:alert(1)"].map((uri) =>
        spawnCli(db, ["app", "create", "--name", "Bad", "--redirect-uri", uri, "--json"])
      )
    )
    for (const r of spawned) {
      assert.strictEqual(r.code, 1)
      assert.strictEqual(r.stdout, "")
      assert.match(r.stderr, /^latchkey: error: redirect URI /)
    }
    for (const uri of [
      "http://evil.example/cb",
      "javascript:alert(1)",
      "data:text/html,hi",
      "file:///etc/passwd",
      "https://app.example/cb#frag",
      "/relative/cb"
    ]) {
      const r = await cli(db, ["app", "create", "--name", "Bad", "--redirect-uri", uri, "--json"])
      assert.strictEqual(r.code, 1, uri)
      assert.strictEqual(r.stdout, "", uri)
      assert.match(r.stderr, /^latchkey: error: redirect URI /, uri)
    }
  })

  it("refuses a redirect URI that is not printable ASCII (`…/cb/€`, a space, a control character) with exit code 1 and an invalid_request message (docs/security.md, catalogue A24)", async () => {
    const spawned = await spawnCli(db, [
      "app",
      "create",
      "--name",
      "Euro",
      "--redirect-uri",
      "http://127.0.0.1:9000/cb/\u20ac",
      "--json"
    ])
    assert.strictEqual(spawned.code, 1)
    assert.strictEqual(spawned.stdout, "")
    assert.match(spawned.stderr, /^latchkey: error: redirect URI must be printable ASCII; percent-encode/)
    for (const uri of [
      "http://127.0.0.1:9000/cb/\u20ac",
      "https://app.example/caf\u00e9",
      "https://app.example/cb\u2028",
      "https://app.example/c b",
      "https://app.example/cb\u001b[2J"
    ]) {
      const r = await cli(db, ["app", "create", "--name", "Euro", "--redirect-uri", uri])
      assert.strictEqual(r.code, 1, JSON.stringify(uri))
      assert.strictEqual(r.stdout, "", JSON.stringify(uri))
      assert.match(
        r.stderr,
        /^latchkey: error: redirect URI (must be printable ASCII|contains whitespace, control characters)/,
        JSON.stringify(uri)
      )
    }
    const list = JSON.parse((await cli(db, ["app", "list", "--json"])).stdout) as Array<{ name: string }>
    assert.isFalse(list.some((a) => a.name === "Euro"))
    const encoded = await cli(db, [
      "app",
      "create",
      "--name",
      "Euro encoded",
      "--redirect-uri",
      "http://127.0.0.1:9000/cb/%E2%82%AC",
      "--json"
    ])
    assert.strictEqual(encoded.code, 0, encoded.stderr)
  })

  it("refuses a short imported secret, an unknown grant type and a taken App Key", async () => {
    const short = await cli(db, [
      "app",
      "create",
      "--name",
      "S",
      "--redirect-uri",
      "https://s.example/cb",
      "--app-key",
      "k1",
      "--app-secret",
      "short",
      "--json"
    ])
    assert.strictEqual(short.code, 1)
    assert.include(short.stderr, "32")
    const grant = await cli(db, [
      "app",
      "create",
      "--name",
      "G",
      "--redirect-uri",
      "https://g.example/cb",
      "--grant-types",
      "magic"
    ])
    assert.strictEqual(grant.code, 1)
    assert.include(grant.stderr, "magic")
    const taken = await cli(db, [
      "app",
      "create",
      "--name",
      "T",
      "--redirect-uri",
      "https://t.example/cb",
      "--app-key",
      "legacy-key-1",
      "--app-secret",
      "0123456789abcdef0123456789abcdef"
    ])
    assert.strictEqual(taken.code, 1)
    assert.include(taken.stderr, "exists already")
  })

  it("answers usage errors with exit code 2", async () => {
    const spawned = await spawnCli(db, [
      "app",
      "create",
      "--name",
      "X",
      "--redirect-uri",
      "https://x.example/cb",
      "--bogus"
    ])
    assert.strictEqual(spawned.code, 2)
    assert.include(spawned.stderr, "--bogus")
    for (const args of [
      ["app", "create", "--redirect-uri", "https://x.example/cb"],
      ["app", "create", "--name", "X"],
      ["app", "create", "--name", "X", "--redirect-uri", "https://x.example/cb", "--bogus"],
      ["app", "frobnicate"],
      ["app", "show"],
      []
    ]) {
      const r = await cli(db, args)
      assert.strictEqual(r.code, 2, args.join(" "))
    }
  })
})

describe("app list, show, rotate-secret, delete", () => {
  it("manages applications", async () => {
    const created = JSON.parse(
      (
        await cli(db, [
          "app",
          "create",
          "--name",
          "Managed",
          "--redirect-uri",
          "https://m.example/cb",
          "--json"
        ])
      ).stdout
    ) as { app_key: string; app_secret: string }
    const list = await cli(db, ["app", "list", "--json"])
    assert.strictEqual(list.code, 0)
    const apps = JSON.parse(list.stdout) as Array<{ app_key: string; name: string }>
    assert.isTrue(apps.some((a) => a.app_key === created.app_key && a.name === "Managed"))
    assert.notInclude(list.stdout, created.app_secret)
    const human = await cli(db, ["app", "list"])
    assert.include(human.stdout, "APP KEY")
    assert.include(human.stdout, created.app_key)
    const show = await cli(db, ["app", "show", created.app_key])
    assert.include(show.stdout, "https://m.example/cb")
    const rotated = await cli(db, ["app", "rotate-secret", created.app_key, "--json"])
    const r = JSON.parse(rotated.stdout) as { app_key: string; app_secret: string }
    assert.strictEqual(r.app_key, created.app_key)
    assert.notStrictEqual(r.app_secret, created.app_secret)
    const deleted = await cli(db, ["app", "delete", created.app_key, "--json"])
    assert.deepStrictEqual(JSON.parse(deleted.stdout), { app_key: created.app_key, deleted: true })
    const gone = await cli(db, ["app", "show", created.app_key])
    assert.strictEqual(gone.code, 1)
    assert.include(gone.stderr, "no application")
    assert.strictEqual((await cli(db, ["app", "delete", created.app_key])).code, 1)
    assert.strictEqual((await cli(db, ["app", "rotate-secret", "nope"])).code, 1)
  })

  it("rotate-secret --grace says until when the old secret works; app show tells it too", async () => {
    const created = JSON.parse(
      (
        await cli(db, [
          "app",
          "create",
          "--name",
          "Graced",
          "--redirect-uri",
          "https://g.example/cb",
          "--json"
        ])
      ).stdout
    ) as { app_key: string; app_secret: string }
    const before = Date.now()
    const human = await cli(db, ["app", "rotate-secret", created.app_key, "--grace", "1h"])
    assert.strictEqual(human.code, 0, human.stderr)
    const until = /The old secret keeps working until (\S+) \(grace 1h\), then stops\./.exec(
      human.stdout
    )?.[1]
    assert.isDefined(until, human.stdout)
    const untilMs = Date.parse(until ?? "")
    assert.isAtLeast(untilMs, before + 3600_000)
    assert.isBelow(untilMs, Date.now() + 3601_000)
    assert.match(human.stdout, /^New App Secret for \S+: [A-Za-z0-9_-]{43}\n/)
    const shown = JSON.parse((await cli(db, ["app", "show", created.app_key, "--json"])).stdout) as Record<
      string,
      unknown
    >
    assert.strictEqual(shown.previous_secret_expires_at, until)
    assert.isNull(shown.previous_secret_first_used_at)
    const text = await cli(db, ["app", "show", created.app_key])
    assert.include(text.stdout, `  Old secret:    works until ${until}; not used since the rotation`)
    const listed = JSON.parse((await cli(db, ["app", "list", "--json"])).stdout) as Array<
      Record<string, unknown>
    >
    assert.strictEqual(listed.find((a) => a.app_key === created.app_key)?.previous_secret_expires_at, until)
    // a rotation without grace ends the old secret and the previous one at once
    const json = await cli(db, ["app", "rotate-secret", created.app_key, "--json"])
    assert.deepStrictEqual(Object.keys(JSON.parse(json.stdout)), [
      "app_key",
      "app_secret",
      "previous_secret_expires_at"
    ])
    assert.isNull((JSON.parse(json.stdout) as Record<string, unknown>).previous_secret_expires_at)
    const after = await cli(db, ["app", "show", created.app_key])
    assert.notInclude(after.stdout, "Old secret")
    assert.isNull(
      (
        JSON.parse((await cli(db, ["app", "show", created.app_key, "--json"])).stdout) as Record<
          string,
          unknown
        >
      ).previous_secret_expires_at
    )
    const plain = await cli(db, ["app", "rotate-secret", created.app_key])
    assert.include(plain.stdout, "The old secret no longer works.")
    const longest = await cli(db, ["app", "rotate-secret", created.app_key, "--grace", "30d", "--json"])
    assert.strictEqual(longest.code, 0, longest.stderr)
    assert.strictEqual((await cli(db, ["app", "rotate-secret", "nope", "--grace", "1h"])).code, 1)
  })

  it("--grace takes <n>s|m|h|d up to 30 days; anything else is a usage error (exit 2)", async () => {
    assert.strictEqual(Commands.parseGrace(undefined), 0)
    assert.strictEqual(Commands.parseGrace("0"), 0)
    assert.strictEqual(Commands.parseGrace("0s"), 0)
    assert.strictEqual(Commands.parseGrace("45s"), 45)
    assert.strictEqual(Commands.parseGrace("90m"), 5400)
    assert.strictEqual(Commands.parseGrace("1h"), 3600)
    assert.strictEqual(Commands.parseGrace("720h"), 30 * 86400)
    assert.strictEqual(Commands.parseGrace("30d"), 30 * 86400)
    for (const grace of ["31d", "721h", "1w", "-1h", "1.5h", "", "60", "h", "1 h", "1H", "99999999s"]) {
      const r = await cli(db, ["app", "rotate-secret", "nope", "--grace", grace])
      assert.strictEqual(r.code, 2, JSON.stringify(grace))
      assert.include(r.stderr, "--grace")
      assert.strictEqual(r.stdout, "")
    }
    assert.strictEqual((await cli(db, ["app", "rotate-secret", "nope", "--grace"])).code, 2)
    assert.include(Commands.usage, "app rotate-secret <app-key> [--grace <n>s|m|h|d] [--json]")
  })
})

describe("users", () => {
  it("creates, lists and deletes users", async () => {
    const r = await cli(db, [
      "user",
      "create",
      "--username",
      "alice",
      "--password",
      "correct horse",
      "--json"
    ])
    assert.strictEqual(r.code, 0, r.stderr)
    const user = JSON.parse(r.stdout) as Record<string, string>
    assert.deepStrictEqual(Object.keys(user), ["user_id", "username"])
    assert.strictEqual(user.username, "alice")
    const dup = await cli(db, [
      "user",
      "create",
      "--username",
      "alice",
      "--password",
      "another one",
      "--json"
    ])
    assert.strictEqual(dup.code, 1)
    assert.include(dup.stderr, "exists already")
    const weak = await cli(db, ["user", "create", "--username", "bob", "--password", "short", "--json"])
    assert.strictEqual(weak.code, 1)
    const stdin = await cli(
      db,
      ["user", "create", "--username", "carol", "--password-stdin", "--json"],
      "from stdin pw\n"
    )
    assert.strictEqual(stdin.code, 0, stdin.stderr)
    const list = JSON.parse((await cli(db, ["user", "list", "--json"])).stdout) as Array<{ username: string }>
    assert.deepStrictEqual(
      list.map((u) => u.username),
      ["alice", "carol"]
    )
    assert.notInclude(JSON.stringify(list), "scrypt")
    const byName = await cli(db, ["user", "delete", "alice", "--json"])
    assert.strictEqual(byName.code, 0)
    const listed = JSON.parse((await cli(db, ["user", "list", "--json"])).stdout) as Array<{
      user_id: string
    }>
    const byId = await cli(db, ["user", "delete", listed[0]?.user_id as string])
    assert.strictEqual(byId.code, 0)
    assert.include(byId.stdout, "carol")
    assert.strictEqual((await cli(db, ["user", "delete", "nobody"])).code, 1)
  })
})

describe("through pnpm at the repository root", () => {
  it("prints only the JSON on stdout with pnpm --silent cli", async () => {
    const r = await runProcess(
      "pnpm",
      [
        "--silent",
        "cli",
        "app",
        "create",
        "--name",
        "Via pnpm",
        "--redirect-uri",
        "https://p.example/cb",
        "--json"
      ],
      {
        cwd: repoRoot,
        env: { LATCHKEY_DB: db },
        timeoutMs: 60_000
      }
    )
    assert.strictEqual(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout) as { name: string }
    assert.strictEqual(out.name, "Via pnpm")
    assert.strictEqual(r.stdout.trim().split("\n").length, 1)
  })

  it("exits non-zero through pnpm on bad input", async () => {
    const r = await runProcess(
      "pnpm",
      [
        "--silent",
        "cli",
        "app",
        "create",
        "--name",
        "Bad",
        "--redirect-uri",
        "javascript:alert(1)",
        "--json"
      ],
      {
        cwd: repoRoot,
        env: { LATCHKEY_DB: db },
        timeoutMs: 60_000
      }
    )
    assert.notStrictEqual(r.code, 0)
    assert.strictEqual(r.stdout, "")
  })
})

import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ConsentStore, Scope } from "@latchkey/core"
import { Effect, Either } from "effect"
import * as Commands from "../src/Commands.js"
import { repoRoot, runProcess, cli as spawnCli, tempDir } from "./helpers.js"
import { assertRedirect, authorizeUrl, consentedBrowser } from "./security/browse.js"
import { post, read, type Stack, startStack, token } from "./security/harness.js"

const tmp = tempDir()
const db = join(tmp.dir, "cli.sqlite")
afterAll(() => tmp.cleanup())

/** The CLI in this process: same code as the spawned one, without paying a process start per call. */
const cli = async (
  dbPath: string,
  args: ReadonlyArray<string>,
  input?: string,
  env: Record<string, string> = {}
) => {
  let stdout = ""
  let stderr = ""
  const code = await Commands.run(args, {
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    },
    env: { LATCHKEY_DB: dbPath, ...env },
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
    // stderr only names the database (created by this first command)
    assert.strictEqual(
      r.stderr,
      `latchkey: warning: ${db} does not exist; creating a new database there\nlatchkey: database ${db}\n`
    )
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
      assert.match(r.stderr, /^latchkey: error: redirect URI /m)
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
      assert.match(r.stderr, /^latchkey: error: redirect URI /m, uri)
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
    assert.match(spawned.stderr, /^latchkey: error: redirect URI must be printable ASCII; percent-encode/m)
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
        /^latchkey: error: redirect URI (must be printable ASCII|contains whitespace, control characters)/m,
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

/** The JSON a successful `--json` command printed. */
const json = <A = Record<string, unknown>>(r: { code: number; stdout: string; stderr: string }): A => {
  assert.strictEqual(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as A
}

describe("the database the CLI opens", () => {
  it("names it on stderr, one line: the SQLite path, or the PostgreSQL URL without credentials", async () => {
    const named = join(tmp.dir, "named.sqlite")
    await cli(named, ["user", "create", "--username", "named", "--password", "long enough"])
    const r = await cli(named, ["app", "list", "--json"])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(r.stderr, `latchkey: database ${named}\n`)
    const pg = await cli(db, ["app", "list"], undefined, {
      DATABASE_URL: "postgres://admin:pg-SECRET-pw@127.0.0.1:1/latchkey?sslmode=disable"
    })
    assert.strictEqual(pg.stderr.split("\n")[0], "latchkey: database postgres://127.0.0.1:1/latchkey")
    assert.notInclude(pg.stderr, "pg-SECRET-pw")
    assert.notInclude(pg.stderr, "admin:")
    assert.strictEqual(pg.code, 1)
  }, 60_000)

  it("read-only commands refuse a SQLite file that does not exist, naming it, and create nothing", async () => {
    const missing = join(tmp.dir, "nowhere", "missing.sqlite")
    for (const args of [
      ["app", "list"],
      ["app", "show", "k1"],
      ["user", "list", "--json"],
      ["audit", "tail"],
      ["consent", "list", "--user", "alice"]
    ]) {
      const r = await cli(missing, args)
      assert.strictEqual(r.code, 1, args.join(" "))
      assert.strictEqual(r.stdout, "")
      assert.include(r.stderr, `there is no database at ${missing}`)
      assert.notInclude(r.stderr, "latchkey: database")
      assert.isFalse(existsSync(missing))
    }
  })

  it("warns about a misspelt LATCHKEY_ setting, naming the nearest one, before it opens the database", async () => {
    const r = await cli(db, ["user", "list", "--json"], undefined, { LATCHKEY_DBB: "/elsewhere.sqlite" })
    assert.strictEqual(r.code, 0, r.stderr)
    const lines = r.stderr.split("\n")
    assert.match(lines[0] ?? "", /^latchkey: warning: LATCHKEY_DBB is not a Latchkey setting.*LATCHKEY_DB\?$/)
    assert.strictEqual(lines[1], `latchkey: database ${db}`)
    const clean = await cli(db, ["user", "list", "--json"])
    assert.notInclude(clean.stderr, "warning")
  })

  it("write commands warn that they create a new database, then create it", async () => {
    const fresh = join(tmp.dir, "fresh", "new.sqlite")
    const r = await cli(fresh, [
      "user",
      "create",
      "--username",
      "first",
      "--password",
      "long enough",
      "--json"
    ])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(
      r.stderr,
      `latchkey: warning: ${fresh} does not exist; creating a new database there\nlatchkey: database ${fresh}\n`
    )
    assert.isTrue(existsSync(fresh))
    assert.strictEqual((await cli(fresh, ["user", "list"])).stderr, `latchkey: database ${fresh}\n`)
  })

  it("usage errors open no database", async () => {
    const missing = join(tmp.dir, "untouched.sqlite")
    const r = await cli(missing, ["app", "update", "k1"])
    assert.strictEqual(r.code, 2)
    assert.notInclude(r.stderr, "database")
    assert.isFalse(existsSync(missing))
  })
})

describe("app update", () => {
  it("changes what it is given and keeps the rest; lifetimes take a number or default", async () => {
    const created = json<{ app_key: string }>(
      await cli(db, [
        "app",
        "create",
        "--name",
        "Updatable",
        "--redirect-uri",
        "https://u.example/cb",
        "--scope",
        "read",
        "--json"
      ])
    )
    const key = created.app_key
    const updated = json(
      await cli(db, [
        "app",
        "update",
        key,
        "--name",
        "Updated",
        "--redirect-uri",
        "https://u.example/one",
        "--redirect-uri",
        "http://127.0.0.1:9000/two",
        "--scope",
        "read,write",
        "--grant-types",
        "authorization_code,refresh_token",
        "--require-pkce",
        "--access-token-ttl",
        "600",
        "--refresh-token-ttl",
        "86400",
        "--json"
      ])
    )
    assert.deepInclude(updated, {
      app_key: key,
      name: "Updated",
      redirect_uris: ["https://u.example/one", "http://127.0.0.1:9000/two"],
      scopes: ["read", "write"],
      grant_types: ["authorization_code", "refresh_token"],
      require_pkce: true,
      access_token_ttl: 600,
      refresh_token_ttl: 86400
    })
    const reset = json(
      await cli(db, ["app", "update", key, "--no-require-pkce", "--access-token-ttl", "default", "--json"])
    )
    assert.deepInclude(reset, {
      name: "Updated",
      require_pkce: false,
      access_token_ttl: null,
      refresh_token_ttl: 86400
    })
    const text = await cli(db, ["app", "update", key, "--name", "Text"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.match(text.stdout, /^Updated application "Text"\n {2}App Key: {7}/)
    assert.include(text.stdout, "  Lifetimes:     access server default, refresh 86400s")
    const shown = json(await cli(db, ["app", "show", key, "--json"]))
    assert.deepStrictEqual(shown, { ...reset, name: "Text" })
    const audit = json<Array<{ type: string; detail: string; actor: string }>>(
      await cli(db, ["audit", "tail", "--app", key, "--type", "application_updated", "--json"])
    )
    assert.deepStrictEqual(
      audit.map((e) => [e.detail, e.actor]),
      [
        [
          "changed name, redirect_uris, scopes, grant_types, require_pkce, access_token_ttl, refresh_token_ttl",
          "cli"
        ],
        ["changed require_pkce, access_token_ttl", "cli"],
        ["changed name", "cli"]
      ]
    )
  })

  it("refuses bad values with exit 1 and bad usage with exit 2, changing nothing", async () => {
    const { app_key: key } = json<{ app_key: string }>(
      await cli(db, [
        "app",
        "create",
        "--name",
        "Guarded",
        "--redirect-uri",
        "https://g.example/cb",
        "--json"
      ])
    )
    const before = (await cli(db, ["app", "show", key, "--json"])).stdout
    for (const [args, reason] of [
      [["--redirect-uri", "http://evil.example/cb"], "redirect URI"],
      [["--grant-types", "magic"], "magic"],
      [["--scope", "bad\u0001"], "scope"],
      [["--access-token-ttl", "0"], "access_token_ttl"],
      [["--name", " "], "name"]
    ] as const) {
      const r = await cli(db, ["app", "update", key, ...args])
      assert.strictEqual(r.code, 1, args.join(" "))
      assert.include(r.stderr, reason)
      assert.strictEqual(r.stdout, "")
    }
    for (const args of [
      [key],
      [key, "--require-pkce", "--no-require-pkce"],
      [key, "--access-token-ttl", "ten"],
      [key, "--refresh-token-ttl", "-1"],
      [key, "--bogus"],
      ["--name", "x"]
    ]) {
      assert.strictEqual((await cli(db, ["app", "update", ...args])).code, 2, args.join(" "))
    }
    assert.strictEqual((await cli(db, ["app", "show", key, "--json"])).stdout, before)
    const unknown = await cli(db, ["app", "update", "no-such-app", "--name", "x"])
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, "no application")
  })
})

describe("commands on a running server's database", () => {
  let s: Stack
  beforeAll(async () => {
    s = await startStack()
  }, 60_000)
  afterAll(() => s.close())

  const introspect = async (t: string) =>
    (await read(await post(s, "/oauth2/oauth2/introspect", { token: t }, { authorization: s.A.basic }))).body
      .active
  const signIn = async (password: string) =>
    read(await token(s, { grant_type: "password", username: s.alice.username, password }))

  it("user disable revokes alice's tokens and refuses her sign-in; user enable lets her in again", async () => {
    const before = await signIn(s.alice.password)
    assert.strictEqual(before.status, 200)
    const disabled = json<{ user_id: string; disabled_at: string | null }>(
      await cli(s.dbPath, ["user", "disable", "alice", "--json"])
    )
    assert.strictEqual(disabled.user_id, s.alice.userId)
    assert.isString(disabled.disabled_at)
    assert.isFalse(await introspect(before.body.access_token as string))
    assert.isFalse(await introspect(before.body.refresh_token as string))
    const refused = await signIn(s.alice.password)
    assert.strictEqual(refused.body.error, "invalid_grant")
    const listed = await cli(s.dbPath, ["user", "list"])
    assert.match(listed.stdout, /^USER ID\s+USERNAME\s+CREATED\s+DISABLED\n/)
    assert.include(listed.stdout, disabled.disabled_at as string)
    const enabled = await cli(s.dbPath, ["user", "enable", s.alice.userId])
    assert.strictEqual(enabled.code, 0, enabled.stderr)
    assert.include(enabled.stdout, 'Enabled user "alice"')
    assert.strictEqual((await signIn(s.alice.password)).status, 200)
    assert.strictEqual((await cli(s.dbPath, ["user", "disable", "nobody"])).code, 1)
    assert.strictEqual((await cli(s.dbPath, ["user", "enable"])).code, 2)
  })

  it("user set-password reads the password from stdin, and only from there", async () => {
    const r = await cli(
      s.dbPath,
      ["user", "set-password", "alice", "--password-stdin"],
      "a whole new password\n"
    )
    assert.strictEqual(r.code, 0, r.stderr)
    assert.include(r.stdout, 'Set the password of user "alice"')
    assert.notInclude(r.stdout + r.stderr, "a whole new password")
    assert.strictEqual((await signIn(s.alice.password)).body.error, "invalid_grant")
    assert.strictEqual((await signIn("a whole new password")).status, 200)
    assert.strictEqual((await cli(s.dbPath, ["user", "set-password", "alice"], "x".repeat(20))).code, 2)
    assert.strictEqual(
      (await cli(s.dbPath, ["user", "set-password", "alice", "--password", "on the command line"])).code,
      2
    )
    const short = await cli(s.dbPath, ["user", "set-password", "alice", "--password-stdin"], "short\n")
    assert.strictEqual(short.code, 1)
    assert.include(short.stderr, "password must be")
    const back = await cli(
      s.dbPath,
      ["user", "set-password", "alice", "--password-stdin", "--json"],
      s.alice.password
    )
    assert.strictEqual(json<{ username: string }>(back).username, "alice")
    assert.strictEqual((await signIn(s.alice.password)).status, 200)
    const events = json<Array<{ detail: string; actor: string; user_id: string }>>(
      await cli(s.dbPath, ["audit", "tail", "--type", "user_updated", "--json"])
    )
    const set = events.filter((e) => e.detail === "password set; sessions ended")
    assert.strictEqual(set.length, 2)
    assert.isTrue(set.every((e) => e.actor === "cli" && e.user_id === s.alice.userId))
    assert.notInclude(JSON.stringify(events), "a whole new password")
  })

  it("user set-password ends alice's browser session, or with --keep-sessions keeps it", async () => {
    // An application of its own, its consent withdrawn at the end: alice's consents belong to the tests after this one
    const client = await s.client({ name: "Sessions App" })
    const browser = await consentedBrowser(s, client)
    const url = authorizeUrl(s, { response_type: "code", scope: "read,write" }, client)
    assertRedirect(await browser.fetch(url))
    const kept = await cli(
      s.dbPath,
      ["user", "set-password", "alice", "--password-stdin", "--keep-sessions"],
      "a kept-sessions password\n"
    )
    assert.strictEqual(kept.code, 0, kept.stderr)
    assert.include(kept.stdout, "sessions were kept")
    assert.isNotNull(assertRedirect(await browser.fetch(url)).get("code"), "still signed in: a code")
    const ended = await cli(s.dbPath, ["user", "set-password", "alice", "--password-stdin"], s.alice.password)
    assert.strictEqual(ended.code, 0, ended.stderr)
    assert.include(ended.stdout, "sessions were ended")
    const page = await browser.fetch(url)
    assert.strictEqual(page.status, 200, "signed out: the sign-in page, no code")
    assert.include(await page.text(), 'name="password"')
    const events = json<Array<{ detail: string }>>(
      await cli(s.dbPath, ["audit", "tail", "--type", "user_updated", "--limit", "2", "--json"])
    )
    assert.deepStrictEqual(
      events.map((e) => e.detail),
      ["password set; sessions kept", "password set; sessions ended"]
    )
    const withdrawn = await cli(s.dbPath, ["consent", "revoke", "--user", "alice", "--app", client.appKey])
    assert.strictEqual(withdrawn.code, 0, withdrawn.stderr)
  })

  it("user create refuses a username that is another user's id, so an id names one user in every command", async () => {
    const r = await cli(s.dbPath, [
      "user",
      "create",
      "--username",
      s.alice.userId,
      "--password",
      "long enough password"
    ])
    assert.strictEqual(r.code, 1)
    assert.include(r.stderr, "username must not be the user id of another user")
    const byId = json<Array<unknown>>(
      await cli(s.dbPath, ["consent", "list", "--user", s.alice.userId, "--json"])
    )
    const byName = json<Array<unknown>>(await cli(s.dbPath, ["consent", "list", "--user", "alice", "--json"]))
    assert.deepStrictEqual(byId, byName)
    const unknown = await cli(s.dbPath, ["user", "disable", "nobody-at-all"])
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, 'no user with id or username "nobody-at-all"')
  })

  it("token revoke revokes every token of one open_id of an application and says how many", async () => {
    const issued = await read(await token(s, { grant_type: "client_credentials", open_id: "device-77" }))
    const other = await read(await token(s, { grant_type: "client_credentials", open_id: "device-78" }))
    const r = json(
      await cli(s.dbPath, ["token", "revoke", "--app", s.A.appKey, "--open-id", "device-77", "--json"])
    )
    assert.deepStrictEqual(r, {
      app_key: s.A.appKey,
      app_name: "Acme Notes",
      open_id: "device-77",
      revoked: 2
    })
    assert.isFalse(await introspect(issued.body.access_token as string))
    assert.isTrue(await introspect(other.body.access_token as string))
    const text = await cli(s.dbPath, ["token", "revoke", "--app", s.A.appKey, "--open-id", "device-77"])
    assert.strictEqual(
      text.stdout,
      `Revoked 0 tokens of open_id "device-77" of ${s.A.appKey} ("Acme Notes").\n`
    )
    const unknown = await cli(s.dbPath, ["token", "revoke", "--app", "no-such-app", "--open-id", "device-77"])
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, "no application")
    assert.strictEqual((await cli(s.dbPath, ["token", "revoke", "--app", s.A.appKey])).code, 2)
    const events = json<Array<{ open_id: string; detail: string; actor: string }>>(
      await cli(s.dbPath, ["audit", "tail", "--type", "subject_tokens_revoked", "--json"])
    )
    assert.deepStrictEqual(
      events.map((e) => [e.open_id, e.detail, e.actor]),
      [
        ["device-77", "2 tokens", "cli"],
        ["device-77", "0 tokens", "cli"]
      ]
    )
  })

  it("consent list and consent revoke: withdrawing revokes that application's tokens of the user", async () => {
    await s.runtime.runPromise(
      Effect.flatMap(ConsentStore.ConsentStore, (c) =>
        Effect.flatMap(
          Either.match(Scope.parse("read"), { onLeft: Effect.die, onRight: Effect.succeed }),
          (scope) => c.grant(s.alice.userId, s.A.appKey, scope, Math.floor(Date.now() / 1000))
        )
      )
    )
    const issued = await signIn(s.alice.password)
    const listed = json<Array<{ app_key: string; scopes: Array<string> }>>(
      await cli(s.dbPath, ["consent", "list", "--user", "alice", "--json"])
    )
    assert.deepStrictEqual(
      listed.map((c) => [c.app_key, c.scopes]),
      [[s.A.appKey, ["read"]]]
    )
    const table = await cli(s.dbPath, ["consent", "list", "--user", s.alice.userId])
    assert.match(table.stdout, /^APP KEY\s+APPLICATION\s+UPDATED\s+SCOPES\n/)
    assert.include(table.stdout, `${s.A.appKey}  Acme Notes`)
    const r = json(
      await cli(s.dbPath, ["consent", "revoke", "--user", "alice", "--app", s.A.appKey, "--json"])
    )
    assert.deepStrictEqual(r, {
      user_id: s.alice.userId,
      username: "alice",
      app_key: s.A.appKey,
      withdrawn: true
    })
    assert.isFalse(await introspect(issued.body.access_token as string))
    assert.strictEqual((await cli(s.dbPath, ["consent", "list", "--user", "alice"])).stdout, "No consents.\n")
    const again = await cli(s.dbPath, ["consent", "revoke", "--user", "alice", "--app", s.A.appKey])
    assert.strictEqual(again.code, 1)
    assert.include(again.stderr, "has no consent")
    assert.strictEqual(
      (await cli(s.dbPath, ["consent", "revoke", "--user", "nobody", "--app", s.A.appKey])).code,
      1
    )
    assert.strictEqual((await cli(s.dbPath, ["consent", "revoke", "--user", "alice"])).code, 2)
    assert.strictEqual((await cli(s.dbPath, ["consent", "list"])).code, 2)
  })

  it("audit tail --type and --since filter; the actor is shown; bad values are usage errors", async () => {
    await cli(s.dbPath, ["app", "rotate-secret", s.B.appKey])
    const rotated = json<Array<{ type: string; app_key: string; actor: string | null }>>(
      await cli(s.dbPath, ["audit", "tail", "--type", "secret_rotated", "--json"])
    )
    assert.isAbove(rotated.length, 0)
    assert.isTrue(rotated.every((e) => e.type === "secret_rotated" && e.actor === "cli"))
    const recent = json<Array<{ at: string }>>(
      await cli(s.dbPath, ["audit", "tail", "--since", "1h", "--json"])
    )
    assert.isAbove(recent.length, 0)
    const iso = new Date(Date.now() - 3600_000).toISOString()
    assert.deepStrictEqual(
      json(await cli(s.dbPath, ["audit", "tail", "--since", iso, "--json"])),
      json(
        await cli(s.dbPath, [
          "audit",
          "tail",
          "--since",
          String(Math.floor(Date.now() / 1000) - 3600),
          "--json"
        ])
      )
    )
    assert.deepStrictEqual(
      json<Array<unknown>>(await cli(s.dbPath, ["audit", "tail", "--since", "2999-01-01", "--json"])),
      []
    )
    const table = await cli(s.dbPath, ["audit", "tail", "--type", "secret_rotated"])
    assert.match(
      table.stdout,
      /^TIME\s+EVENT\s+APP KEY\s+USER\s+OPEN ID\s+ADDRESS\s+REQUEST\s+ACTOR\s+DETAIL\n/
    )
    assert.match(table.stdout, /secret_rotated .* cli +grace 0s/)
    for (const args of [
      ["--type", "made_up"],
      ["--since", "yesterday"],
      ["--since", "2026-01-01T00:00:00"],
      ["--limit", "10001"]
    ] as const) {
      const r = await cli(s.dbPath, ["audit", "tail", ...args])
      assert.strictEqual(r.code, 2, args.join(" "))
      assert.include(r.stderr, args[0])
    }
    assert.strictEqual(Commands.parseSince("15m", 10_000), 10_000 - 900)
    assert.strictEqual(Commands.parseSince("2026-01-01"), 1767225600)
  })

  it("backup copies the SQLite database to a new file, refusing an existing one", async () => {
    const file = join(tmp.dir, "backups", "latchkey-backup.sqlite")
    const r = json<{ database: string; backup: string }>(await cli(s.dbPath, ["backup", file, "--json"]))
    assert.deepStrictEqual(r, { database: s.dbPath, backup: file })
    assert.isTrue(existsSync(file))
    const copied = json<Array<{ user_id: string }>>(await cli(file, ["user", "list", "--json"]))
    assert.include(
      copied.map((u) => u.user_id),
      s.alice.userId
    )
    const again = await cli(s.dbPath, ["backup", file])
    assert.strictEqual(again.code, 1)
    assert.strictEqual(again.stdout, "")
    const text = await cli(s.dbPath, ["backup", join(tmp.dir, "backups", "second.sqlite")])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.match(text.stdout, /^Backed up .* to .*second\.sqlite\.\n$/)
  })
})

describe("backup", () => {
  it("on PostgreSQL points to pg_dump and exits 1; without a database or a file it refuses", async () => {
    const pg = await cli(db, ["backup", join(tmp.dir, "pg.dump")], undefined, {
      DATABASE_URL: "postgres://admin:pg-SECRET-pw@127.0.0.1:1/latchkey"
    })
    assert.strictEqual(pg.code, 1)
    assert.include(pg.stderr, "pg_dump")
    assert.notInclude(pg.stderr, "pg-SECRET-pw")
    const missing = await cli(join(tmp.dir, "absent.sqlite"), ["backup", join(tmp.dir, "absent-copy.sqlite")])
    assert.strictEqual(missing.code, 1)
    assert.include(missing.stderr, "absent.sqlite")
    assert.isFalse(existsSync(join(tmp.dir, "absent.sqlite")))
    assert.strictEqual((await cli(db, ["backup"])).code, 2)
    assert.strictEqual((await cli(db, ["backup", "a", "b"])).code, 2)
  })
})

describe("usage", () => {
  it("lists every command", () => {
    for (const command of [
      "app update <app-key>",
      "--no-require-pkce",
      "--access-token-ttl <seconds>|default",
      "user disable <username-or-user-id>",
      "user enable <username-or-user-id>",
      "user set-password <username-or-user-id> --password-stdin",
      "token revoke --app <app-key> --open-id <open_id>",
      "consent list --user <username-or-user-id>",
      "consent revoke --user <username-or-user-id> --app <app-key>",
      "audit tail [--app <app-key>] [--type <event-type>] [--since <time>] [--limit <n>] [--json]",
      "backup <file> [--json]"
    ])
      assert.include(Commands.usage, command)
  })
})

/**
 * How Latchkey is run and seeded: the server and CLI commands (configurable), and the
 * stores the scenarios need: one application and one user made with the CLI, then
 * single-use codes and refresh tokens, or millions of live access tokens, written
 * straight into the SQLite file in big transactions before the server starts; and the
 * same application and user made with the CLI in a PostgreSQL database (latchkey-postgres).
 */
import { createHash, randomBytes } from "node:crypto"
import { closeSync, copyFileSync, existsSync, openSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import BetterSqlite3 from "better-sqlite3"
import { benchRoot, repoRoot } from "./paths.js"
import * as Postgres from "./postgres.js"
import { collect, spawnGroup, stopGroup, waitExit } from "./proc.js"

/**
 * Variables of the bench's own environment no Latchkey process inherits: DATABASE_URL names
 * the PostgreSQL server latchkey-postgres makes its databases on (every other row and every
 * CLI run stays on its SQLite file), and LATCHKEY_WORKERS belongs to latchkey-workers alone
 * (the WORKERS knob). Each row sets what it needs itself.
 */
const notInherited = ["DATABASE_URL", "LATCHKEY_WORKERS"] as const

/** The environment of a Latchkey process: the bench's, without `notInherited`, plus `extra`. */
export const latchkeyEnv = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of notInherited) delete env[name]
  return { ...env, ...extra }
}

/** A command line and where it runs. */
interface Command {
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
}

/** How the Latchkey processes are started, and why. */
export interface Commands {
  readonly server: Command
  readonly cli: Command
  /** Node arguments before servers/latchkey-express.mjs (empty: plain node on the packages' dist). */
  readonly embeddedNodeArgs: ReadonlyArray<string>
  /** What was chosen, for the report. */
  readonly notes: ReadonlyArray<string>
}

/** The reference server as users run it: compiled JS under plain node. */
const defaultServer: Command = { argv: [process.execPath, "apps/server/dist/main.js"], cwd: repoRoot }
/** The CLI as users run it. */
const defaultCli: Command = { argv: [process.execPath, "apps/server/dist/cli.js"], cwd: repoRoot }
/** The fallback while dist does not run under plain node: the sources through tsx. */
const sourceNodeArgs = ["--conditions=@latchkey/source", "--import", "tsx"]
const tsxServer: Command = {
  argv: [process.execPath, ...sourceNodeArgs, "src/main.ts"],
  cwd: join(repoRoot, "apps/server")
}
const tsxCli: Command = {
  argv: [process.execPath, ...sourceNodeArgs, "src/cli.ts"],
  cwd: join(repoRoot, "apps/server")
}

const fromEnv = (value: string | undefined): Command | undefined =>
  value === undefined || value.trim() === ""
    ? undefined
    : { argv: value.trim().split(/\s+/), cwd: process.env.LATCHKEY_CWD ?? repoRoot }

/** Run a command to completion (bounded). */
const runCommand = async (
  command: Command,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000
) => {
  const child = spawnGroup({
    command: [...command.argv, ...args],
    cwd: command.cwd,
    env: { ...latchkeyEnv(), ...env },
    cpu: null,
    stdout: "pipe",
    stderr: "pipe"
  })
  return collect(child, timeoutMs)
}

/**
 * The commands: LATCHKEY_CMD / LATCHKEY_CLI_CMD when set (split on spaces, run from
 * LATCHKEY_CWD or the repository root); else compiled JS under plain node when that
 * works, else the sources through tsx (noted in the report: not how users run it).
 */
export const resolveCommands = async (probeDir: string): Promise<Commands> => {
  const notes: Array<string> = []
  let server = fromEnv(process.env.LATCHKEY_CMD)
  let cli = fromEnv(process.env.LATCHKEY_CLI_CMD)
  if (server === undefined || cli === undefined) {
    // A write command: a read on a database that does not exist is refused by the CLI
    const probe = await runCommand(
      defaultCli,
      ["user", "create", "--username", "probe", "--password", "probe-password", "--json"],
      {
        LATCHKEY_DB: join(probeDir, "probe.sqlite")
      }
    ).catch((e: unknown) => ({ code: -1, stderr: String(e), stdout: "", timedOut: false }))
    const plain = existsSync(join(repoRoot, "apps/server/dist/main.js")) && probe.code === 0
    if (!plain) {
      notes.push(
        `apps/server/dist does not run under plain node (${probe.stderr.trim().split("\n").slice(-1)[0] ?? `exit ${probe.code}`}): ` +
          "latchkey runs from its sources through tsx (node --import tsx), not as users run it"
      )
    }
    server ??= plain ? defaultServer : tsxServer
    cli ??= plain ? defaultCli : tsxCli
  }
  notes.push(`latchkey server: ${server.argv.join(" ")} (in ${server.cwd})`)
  notes.push(`latchkey CLI: ${cli.argv.join(" ")}`)
  const embedded = await runCommand(
    { argv: [process.execPath, "--input-type=module", "-e"], cwd: benchRoot },
    ["await import('@latchkey/express'); await import('@latchkey/storage-sqlite')"],
    {}
  )
  const embeddedNodeArgs = embedded.code === 0 ? [] : sourceNodeArgs
  if (embedded.code !== 0) {
    notes.push(
      "the built packages do not load under plain node: latchkey-express runs with node --import tsx on their sources"
    )
  }
  return { server, cli, embeddedNodeArgs, notes }
}

/** The application and user every Latchkey scenario uses, and where they are. */
export interface BaseSeed {
  /** The store with just them (and one access token to introspect). */
  readonly db: string
  readonly appKey: string
  readonly appSecret: string
  readonly username: string
  readonly password: string
  readonly userId: string
  readonly openId: string
  readonly redirectUri: string
  readonly scope: string
  /** A live access token of the application, for introspection. */
  readonly introspectToken: string
}

/** Single-use values seeded into a copy of the base store. */
export interface SingleUseSeed {
  readonly db: string
  /** The values, one per fixed-length line. */
  readonly file: string
  readonly count: number
  /** Bytes per line. */
  readonly recordLength: number
}

const sha256 = (value: string): string => createHash("sha256").update(value).digest("base64url")
const nowSeconds = () => Math.floor(Date.now() / 1000)
const farFuture = () => nowSeconds() + 30 * 86400

const parseJson = (text: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** Which store a CLI run acts on: `{ LATCHKEY_DB }` or `{ DATABASE_URL }`. */
export type StoreEnv = { readonly LATCHKEY_DB: string } | { readonly DATABASE_URL: string }

/**
 * Run a CLI command with --json and return its output. A CLI that printed its JSON but
 * does not exit within 5 s is stopped and reported through `warn` (the run goes on).
 */
const cliJson = async (
  commands: Commands,
  store: StoreEnv,
  args: ReadonlyArray<string>,
  warn: (line: string) => void
): Promise<Record<string, unknown>> => {
  const what = `latchkey CLI ${args.slice(0, 2).join(" ")}`
  const child = spawnGroup({
    command: [...commands.cli.argv, ...args, "--json"],
    cwd: commands.cli.cwd,
    env: latchkeyEnv(store),
    cpu: null,
    stdout: "pipe",
    stderr: "pipe"
  })
  let stdout = ""
  let stderr = ""
  let printed: (() => void) | undefined
  const printedJson = new Promise<void>((resolve) => {
    printed = resolve
  })
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d
    if (stdout.endsWith("\n") && parseJson(stdout) !== undefined) printed?.()
  })
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d
  })
  const exited = waitExit(child, 60_000)
  const lingered = printedJson.then(async () => !(await waitExit(child, 5_000)))
  const stuck = await Promise.race([exited.then((done) => !done), lingered])
  if (stuck) {
    await stopGroup(child, 2_000)
    const out = parseJson(stdout)
    if (out === undefined) throw new Error(`${what} did not finish within 60 s: ${stderr.trim()}`)
    warn(
      `${what} printed its result but did not exit within 5 s: stopped (a bug of the CLI, not of this run)`
    )
    return out
  }
  const out = parseJson(stdout)
  if (child.exitCode !== 0 || out === undefined) {
    throw new Error(`${what} failed (exit ${child.exitCode}): ${stderr.trim() || stdout.trim()}`)
  }
  return out
}

const redirectUri = "http://127.0.0.1:9/cb"
const scope = "api:read"

/**
 * A random password that cannot start with `-` (a letter, then base64url), so no CLI reads it
 * as an option even where it is passed as a separate argument.
 */
export const generatedPassword = (): string => `p${randomBytes(12).toString("base64url")}`

/**
 * Create user `username` with the CLI (`user create`), its password passed as `--password=value`:
 * one argument, so a password starting with `-` is a value, never an option.
 */
export const createUser = (
  commands: Commands,
  store: StoreEnv,
  username: string,
  password: string,
  warn: (line: string) => void
): Promise<Record<string, unknown>> =>
  cliJson(commands, store, ["user", "create", `--username=${username}`, `--password=${password}`], warn)

/** The application and user every store holds, made with the CLI (app create, user create). */
const createAppAndUser = async (commands: Commands, store: StoreEnv, warn: (line: string) => void) => {
  const password = generatedPassword()
  const app = await cliJson(
    commands,
    store,
    [
      "app",
      "create",
      "--name",
      "bench",
      "--redirect-uri",
      redirectUri,
      "--scope",
      scope,
      "--grant-types",
      "authorization_code,password,client_credentials,refresh_token"
    ],
    warn
  )
  const user = await createUser(commands, store, "bench", password, warn)
  return { app, user, password }
}

/** Create the base store with the CLI (app create, user create), as an operator would. */
export const seedBase = async (
  commands: Commands,
  dir: string,
  warn: (line: string) => void
): Promise<BaseSeed> => {
  const db = join(dir, "base.sqlite")
  const { app, user, password } = await createAppAndUser(commands, { LATCHKEY_DB: db }, warn)
  const appKey = String(app.app_key)
  const userId = String(user.user_id)
  const introspectToken = randomBytes(32).toString("base64url")
  const sqlite = new BetterSqlite3(db)
  let openId: string
  try {
    sqlite
      .prepare("INSERT INTO open_ids (app_key, user_id, open_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
      .run(appKey, userId, randomBytes(24).toString("base64url").slice(0, 32))
    openId = sqlite
      .prepare("SELECT open_id FROM open_ids WHERE app_key = ? AND user_id = ?")
      .pluck()
      .get(appKey, userId) as string
    sqlite
      .prepare(`INSERT INTO tokens (kind, token_hash, app_key, user_id, open_id, scope, family_id, parent_hash,
        issued_at, expires_at, revoked_at, rotated_at) VALUES ('access', ?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL, NULL)`)
      .run(
        sha256(introspectToken),
        appKey,
        userId,
        openId,
        JSON.stringify([scope]),
        randomBytes(16).toString("base64url"),
        nowSeconds(),
        farFuture()
      )
  } finally {
    sqlite.close()
  }
  return {
    db,
    appKey,
    appSecret: String(app.app_secret),
    username: "bench",
    password,
    userId,
    openId,
    redirectUri,
    scope,
    introspectToken
  }
}

/** latchkey-postgres' seeded database, which every run copies (CREATE DATABASE … TEMPLATE). */
export interface PostgresSeed {
  /** The administrative URI (DATABASE_URL of the bench), on whose server the databases are made. */
  readonly adminUrl: string
  /** The seeded database: the application and user, made with the CLI. */
  readonly database: string
  readonly appKey: string
  readonly appSecret: string
  /** `PostgreSQL 15.x (fsync=…, synchronous_commit=…)`, for the report. */
  readonly server: string
}

/**
 * Create a fresh database `latchkey_bench_<random>` on the server of `adminUrl` and seed it with
 * the CLI under DATABASE_URL of that database (which migrates it), as an operator would. The
 * database is dropped by `Postgres.dropAll` (the harness calls it at the end, also on failure).
 */
export const seedPostgres = async (
  commands: Commands,
  adminUrl: string,
  warn: (line: string) => void
): Promise<PostgresSeed> => {
  const server = await Postgres.describeServer(adminUrl)
  const database = Postgres.databaseName()
  await Postgres.createDatabase(adminUrl, database)
  const { app } = await createAppAndUser(
    commands,
    { DATABASE_URL: Postgres.databaseUrl(adminUrl, database) },
    warn
  )
  return { adminUrl, database, appKey: String(app.app_key), appSecret: String(app.app_secret), server }
}

/** Copy a closed store (its WAL was checkpointed at close). */
export const copyStore = (from: string, to: string): void => {
  removeStore(to)
  copyFileSync(from, to)
}

/** Delete a store and its WAL files. */
export const removeStore = (file: string): void => {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) rmSync(f, { force: true })
}

const recordLength = 44 // 43 base64url characters (32 random bytes) and a newline
const batch = 50_000

/**
 * A copy of the base store with `count` fresh authorization codes (redirect URI and user
 * of the base, expiring in 30 days, with the user's consent to the base scope) or refresh tokens, each stored only as the base64url
 * SHA-256 of its value; the values go to a file, one per line.
 */
export const seedSingleUse = (
  base: BaseSeed,
  what: "code" | "refresh",
  count: number,
  dir: string
): SingleUseSeed => {
  const db = join(dir, `${what}.sqlite`)
  const file = join(dir, `${what}.txt`)
  copyStore(base.db, db)
  const sqlite = new BetterSqlite3(db)
  const fd = openSync(file, "w")
  try {
    sqlite.pragma("synchronous = OFF")
    const insert =
      what === "code"
        ? sqlite.prepare(`INSERT INTO authorization_codes (code_hash, app_key, redirect_uri, user_id, open_id,
            scope, code_challenge, code_challenge_method, family_id, issued_at, expires_at, used_at)
            VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, NULL)`)
        : sqlite.prepare(`INSERT INTO tokens (kind, token_hash, app_key, user_id, open_id, scope, family_id,
            parent_hash, issued_at, expires_at, revoked_at, rotated_at)
            VALUES ('refresh', ?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL, NULL)`)
    const scope = JSON.stringify([base.scope])
    const issued = nowSeconds()
    // A code is only ever issued under the user's consent, which its exchange reads again
    if (what === "code")
      sqlite
        .prepare("INSERT OR REPLACE INTO consents (user_id, app_key, scope, updated_at) VALUES (?, ?, ?, ?)")
        .run(base.userId, base.appKey, scope, issued)
    const expires = farFuture()
    const insertBatch = sqlite.transaction((n: number) => {
      const values: Array<string> = []
      for (let i = 0; i < n; i++) {
        const value = randomBytes(32).toString("base64url")
        const family = randomBytes(16).toString("base64url")
        if (what === "code")
          insert.run(
            sha256(value),
            base.appKey,
            base.redirectUri,
            base.userId,
            base.openId,
            scope,
            family,
            issued,
            expires
          )
        else insert.run(sha256(value), base.appKey, base.userId, base.openId, scope, family, issued, expires)
        values.push(value)
      }
      return values
    })
    for (let done = 0; done < count; done += batch) {
      const values = insertBatch(Math.min(batch, count - done))
      writeSync(fd, `${values.join("\n")}\n`)
    }
  } finally {
    closeSync(fd)
    sqlite.close()
  }
  return { db, file, count, recordLength }
}

/**
 * A copy of the base store with `count` more live access tokens of the application
 * (random digests: their values are never presented), written in big transactions with
 * the journal off and synchronous=OFF (seeding only), then put back in WAL mode.
 */
export const seedBig = (
  base: BaseSeed,
  count: number,
  dir: string,
  progress: (done: number) => void
): string => {
  const db = join(dir, "big.sqlite")
  copyStore(base.db, db)
  const sqlite = new BetterSqlite3(db)
  try {
    sqlite.pragma("journal_mode = DELETE")
    sqlite.pragma("synchronous = OFF")
    sqlite.pragma("cache_size = -1048576") // 1 GiB of page cache while the indexes grow
    const insert = sqlite.prepare(`INSERT INTO tokens (kind, token_hash, app_key, user_id, open_id, scope,
      family_id, parent_hash, issued_at, expires_at, revoked_at, rotated_at)
      VALUES ('access', ?, ?, NULL, NULL, ?, ?, NULL, ?, ?, NULL, NULL)`)
    const scope = JSON.stringify([base.scope])
    const now = nowSeconds()
    const big = 100_000
    const insertBatch = sqlite.transaction((n: number) => {
      const hashes = randomBytes(33 * n).toString("base64url")
      const families = randomBytes(18 * n).toString("base64url")
      for (let i = 0; i < n; i++) {
        insert.run(
          hashes.slice(44 * i, 44 * i + 43),
          base.appKey,
          scope,
          families.slice(24 * i, 24 * i + 22),
          now - (i % 3600),
          now + 86400 + (i % 86400)
        )
      }
    })
    for (let done = 0; done < count; ) {
      const n = Math.min(big, count - done)
      insertBatch(n)
      done += n
      progress(done)
    }
    sqlite.pragma("journal_mode = WAL")
  } finally {
    sqlite.close()
  }
  return db
}

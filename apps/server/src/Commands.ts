/**
 * The management CLI (apps/server/README.md): applications, users, tokens, consents and the audit
 * trail in the server's database, through the same `Admin` operations as the admin API (recorded
 * with the actor `cli`), and backups of a SQLite database. `run` takes the arguments and streams
 * so tests can drive it in-process too.
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { type ParseArgsConfig, parseArgs } from "node:util"
import {
  Admin,
  AdminJson,
  Application,
  type ApplicationStore,
  Audit,
  type StorageError,
  type User,
  type UserStore
} from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Effect, Either, ManagedRuntime } from "effect"
import * as Env from "./Env.js"
import * as Log from "./Log.js"
import * as Services from "./Services.js"

/** Where the CLI reads and writes. */
export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly env: NodeJS.ProcessEnv
  /** The whole of standard input (for `--password-stdin`). */
  readonly readStdin: () => Promise<string>
}

/** Exit codes. */
export const exitCodes = { ok: 0, failed: 1, usage: 2 } as const

/** A usage mistake: unknown command or option, missing argument (exit 2). */
class UsageError extends Error {}
/** A refused or failed operation (exit 1). */
class Failure extends Error {}

/** The usage text (`cli help`). */
export const usage = `Usage: pnpm --silent cli <command> [options]

Applications
  app create --name <name> --redirect-uri <uri> [--redirect-uri <uri2> ...]
             [--scope a,b] [--grant-types authorization_code,implicit,password,client_credentials,refresh_token]
             [--require-pkce] [--app-key <key> --app-secret <secret>] [--json]
  app update <app-key> [--name <name>] [--redirect-uri <uri> ...] [--scope a,b] [--grant-types a,b]
             [--require-pkce | --no-require-pkce] [--access-token-ttl <seconds>|default]
             [--refresh-token-ttl <seconds>|default] [--json]
  app list [--json]
  app show <app-key> [--json]
  app rotate-secret <app-key> [--grace <n>s|m|h|d] [--json]
  app delete <app-key> [--json]

Users
  user create --username <username> (--password <password> | --password-stdin) [--json]
  user list [--json]
  user disable <username-or-user-id> [--json]
  user enable <username-or-user-id> [--json]
  user set-password <username-or-user-id> --password-stdin [--keep-sessions] [--json]
  user delete <username-or-user-id> [--json]

Tokens and consents
  token revoke --app <app-key> --open-id <open_id> [--json]
  consent list --user <username-or-user-id> [--json]
  consent revoke --user <username-or-user-id> --app <app-key> [--json]

Audit trail
  audit tail [--app <app-key>] [--type <event-type>] [--since <time>] [--limit <n>] [--json]

Database
  backup <file> [--json]

--grace keeps the old App Secret working that long (at most 30d; default 0: it stops at once).
--since is ISO 8601 (2026-01-31, 2026-01-31T12:00:00Z), epoch seconds, or a time ago (15m, 24h, 7d).
app update --redirect-uri replaces every redirect URI; a lifetime of "default" returns to the server's.
user set-password ends the user's sign-in sessions (they sign in again) unless --keep-sessions.

The database is DATABASE_URL (PostgreSQL) or else LATCHKEY_DB (default ./data/latchkey.sqlite),
named on stderr; the server key is LATCHKEY_SECRET or the one kept in the database. Exit codes:
0 done, 1 refused or failed, 2 usage error.
`

const common = { json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const

const parse = <O extends NonNullable<ParseArgsConfig["options"]>>(
  args: ReadonlyArray<string>,
  options: O
) => {
  try {
    return parseArgs({
      args: [...args],
      options: { ...common, ...options },
      allowPositionals: true,
      strict: true
    })
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
}

const iso = AdminJson.time

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

const appJson = (a: Application.Application) => AdminJson.application(a, nowSeconds())

const units: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 }

/** A duration written `<n>s`, `<n>m`, `<n>h` or `<n>d` (`--grace`, `--since 15m`), in seconds; null otherwise. */
const duration = (value: string): number | null => {
  const match = /^(\d{1,7})([smhd])$/.exec(value)
  return match === null ? null : Number(match[1]) * (units[match[2] ?? ""] ?? Number.NaN)
}

/** `--grace`: `<n>s`, `<n>m`, `<n>h` or `<n>d` (or `0`), at most 30 days; in seconds. */
export const parseGrace = (value: string | undefined): number => {
  if (value === undefined || value === "0") return 0
  const seconds = duration(value) ?? Number.NaN
  if (!Number.isSafeInteger(seconds) || seconds > Application.maxSecretGrace) {
    throw new UsageError("--grace must be <n>s, <n>m, <n>h or <n>d, at most 30d (e.g. --grace 1h)")
  }
  return seconds
}

// Characters a terminal acts on or that reorder or break the line: C0, DEL, C1, the Arabic
// letter mark, LRM/RLM, the line and paragraph separators, bidi embeddings, overrides and isolates
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const unsafeChars = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const unsafeOrBackslash = /[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g
const named: Readonly<Record<string, string>> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" }
const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, "0")

/**
 * A recorded value for the audit table: every character of `unsafeChars` and the backslash
 * shown as a visible escape (`\n`, `\x1b`, `\u2028`, `\\`), so a value is one line of plain text.
 */
export const visible = (value: string): string =>
  value.replace(unsafeOrBackslash, (c) => named[c] ?? (c <= "\xff" ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`))

/**
 * JSON for the audit trail: JSON.stringify escapes C0 controls; DEL, C1, the line and paragraph
 * separators and the bidi controls become `\uXXXX` escapes too (the same string once parsed).
 */
export const auditJsonText = (value: unknown): string =>
  JSON.stringify(value).replace(unsafeChars, (c) => `\\u${hex(c, 4)}`)

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? []
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ")).join("\n")}\n`
}

const lifetime = (seconds: number | null): string => (seconds === null ? "server default" : `${seconds}s`)

const describeApp = (a: Application.Application): string =>
  [
    `  App Key:       ${a.appKey}`,
    `  Name:          ${a.name}`,
    `  Redirect URIs: ${a.redirectUris.join(", ")}`,
    `  Scopes:        ${a.scopes.length === 0 ? "(none)" : a.scopes.join(", ")}`,
    `  Grant types:   ${a.grantTypes.join(", ")}`,
    `  Require PKCE:  ${a.requirePkce ? "yes" : "no"}`,
    `  Lifetimes:     access ${lifetime(a.accessTokenTtl)}, refresh ${lifetime(a.refreshTokenTtl)}`,
    `  Created:       ${iso(a.createdAt)}`,
    ...oldSecretLine(a)
  ].join("\n")

const oldSecretLine = (a: Application.Application): Array<string> => {
  const shown = appJson(a)
  if (shown.previous_secret_expires_at === null) return []
  const use =
    shown.previous_secret_first_used_at === null
      ? "not used since the rotation"
      : `first used after the rotation at ${shown.previous_secret_first_used_at}`
  return [`  Old secret:    works until ${shown.previous_secret_expires_at}; ${use}`]
}

const one = (positionals: ReadonlyArray<string>, what: string): string => {
  if (positionals.length !== 1 || positionals[0] === "") throw new UsageError(`expected exactly one ${what}`)
  return positionals[0] as string
}

const none = (positionals: ReadonlyArray<string>, command: string): void => {
  if (positionals.length > 0) throw new UsageError(`${command} takes no positional arguments`)
}

const required = (value: string | undefined, flag: string): string => {
  if (value === undefined || value === "") throw new UsageError(`${flag} is required`)
  return value
}

const list = (value: string | undefined): Array<string> | undefined =>
  value === undefined ? undefined : value.split(/[\s,]+/).filter((s) => s.length > 0)

/** `--access-token-ttl` and `--refresh-token-ttl`: whole seconds, or `default` (null). */
const ttlOption = (value: string | undefined, flag: string): number | null | undefined => {
  if (value === undefined) return undefined
  if (value === "default") return null
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${flag} must be a whole number of seconds or "default"`)
  return Number(value)
}

/** `--since`: ISO 8601, epoch seconds, or a time ago (`<n>s`, `<n>m`, `<n>h`, `<n>d`); epoch seconds. */
export const parseSince = (value: string, now: number = nowSeconds()): number => {
  const ago = duration(value)
  const since = ago === null ? Admin.parseSince(value) : now - ago
  if (since === null) {
    throw new UsageError(
      "--since must be ISO 8601 (2026-01-31 or 2026-01-31T12:00:00Z), epoch seconds, or a time ago (15m, 24h, 7d)"
    )
  }
  return since
}

/** The password of `--password-stdin`: standard input without its final line break. */
const stdinPassword = async (io: Io): Promise<string> => (await io.readStdin()).replace(/\r?\n$/, "")

type Runtime = ManagedRuntime.ManagedRuntime<Services.Services, unknown>

/** Every failure a command can meet, each with its message. */
type CommandError =
  | ApplicationStore.AppKeyTaken
  | UserStore.UsernameTaken
  | StorageError.StorageError
  | Admin.InvalidField
  | Admin.NotFound

const message = (e: CommandError): string => {
  switch (e._tag) {
    case "AppKeyTaken":
      return `an application with App Key ${JSON.stringify(e.appKey)} exists already`
    case "UsernameTaken":
      return `a user named ${JSON.stringify(e.username)} exists already`
    case "StorageError":
      return `the database failed: ${e.message}`
    case "InvalidField":
    case "NotFound":
      return e.description
  }
}

/** Run a command's effect as the actor `cli`; its failure becomes a `Failure` with its message (exit 1). */
const exec = async <A>(
  runtime: Runtime,
  effect: Effect.Effect<A, CommandError, Services.Services>
): Promise<A> => {
  const result = await runtime.runPromise(
    Effect.either(effect).pipe(
      Effect.provideService(Audit.RequestInfo, { requestId: null, address: null, actor: "cli" })
    )
  )
  if (Either.isLeft(result)) throw new Failure(message(result.left))
  return result.right
}

const userLine = (u: User.User): string => `${JSON.stringify(u.username)} (id ${u.userId})`

type Command = (args: ReadonlyArray<string>, runtime: () => Runtime, io: Io) => Promise<void>

const commands: Record<string, Command> = {
  "app create": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {
      name: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      scope: { type: "string" },
      "grant-types": { type: "string" },
      "require-pkce": { type: "boolean" },
      "app-key": { type: "string" },
      "app-secret": { type: "string" }
    })
    none(positionals, "app create")
    const grantTypes = list(values["grant-types"])
    const input: Admin.NewApplication = {
      name: required(values.name, "--name"),
      redirectUris: values["redirect-uri"] ?? [],
      ...(values.scope !== undefined ? { scope: values.scope } : {}),
      ...(grantTypes !== undefined ? { grantTypes } : {}),
      requirePkce: values["require-pkce"] ?? false,
      ...(values["app-key"] !== undefined ? { appKey: values["app-key"] } : {}),
      ...(values["app-secret"] !== undefined ? { appSecret: values["app-secret"] } : {})
    }
    if (input.redirectUris.length === 0)
      throw new UsageError("--redirect-uri is required (repeat it for several)")
    const { app, appSecret } = await exec(runtime(), Admin.createApplication(input))
    if (values.json === true) {
      const { require_pkce: _, ...created } = AdminJson.createdApplication(app, appSecret)
      io.stdout(`${JSON.stringify(created)}\n`)
    } else {
      io.stdout(
        `Created application ${JSON.stringify(app.name)}\n${describeApp(app)}\n  App Secret:    ${appSecret}\n\nThe App Secret is shown only this once: store it now.\n`
      )
    }
  },
  "app update": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {
      name: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      scope: { type: "string" },
      "grant-types": { type: "string" },
      "require-pkce": { type: "boolean" },
      "no-require-pkce": { type: "boolean" },
      "access-token-ttl": { type: "string" },
      "refresh-token-ttl": { type: "string" }
    })
    const appKey = one(positionals, "App Key")
    if (values["require-pkce"] === true && values["no-require-pkce"] === true) {
      throw new UsageError("give either --require-pkce or --no-require-pkce")
    }
    const grantTypes = list(values["grant-types"])
    const accessTokenTtl = ttlOption(values["access-token-ttl"], "--access-token-ttl")
    const refreshTokenTtl = ttlOption(values["refresh-token-ttl"], "--refresh-token-ttl")
    const requirePkce =
      values["require-pkce"] === true ? true : values["no-require-pkce"] === true ? false : undefined
    const patch: Admin.ApplicationPatch = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values["redirect-uri"] !== undefined ? { redirectUris: values["redirect-uri"] } : {}),
      ...(values.scope !== undefined ? { scope: values.scope } : {}),
      ...(grantTypes !== undefined ? { grantTypes } : {}),
      ...(requirePkce !== undefined ? { requirePkce } : {}),
      ...(accessTokenTtl !== undefined ? { accessTokenTtl } : {}),
      ...(refreshTokenTtl !== undefined ? { refreshTokenTtl } : {})
    }
    if (Object.keys(patch).length === 0) {
      throw new UsageError(
        "app update needs something to change: --name, --redirect-uri, --scope, --grant-types, --require-pkce, --no-require-pkce, --access-token-ttl or --refresh-token-ttl"
      )
    }
    const app = await exec(runtime(), Admin.updateApplication(appKey, patch))
    io.stdout(
      values.json === true
        ? `${JSON.stringify(appJson(app))}\n`
        : `Updated application ${JSON.stringify(app.name)}\n${describeApp(app)}\n`
    )
  },
  "app list": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    none(positionals, "app list")
    const apps = await exec(runtime(), Admin.listApplications)
    if (values.json === true) io.stdout(`${JSON.stringify(apps.map(appJson))}\n`)
    else if (apps.length === 0) io.stdout("No applications.\n")
    else
      io.stdout(
        table([
          ["APP KEY", "NAME", "GRANT TYPES", "REDIRECT URIS"],
          ...apps.map((a) => [a.appKey, a.name, a.grantTypes.join(","), a.redirectUris.join(" ")])
        ])
      )
  },
  "app show": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    const app = await exec(runtime(), Admin.findApplication(one(positionals, "App Key")))
    io.stdout(values.json === true ? `${JSON.stringify(appJson(app))}\n` : `${describeApp(app)}\n`)
  },
  "app rotate-secret": async (args, runtime, io) => {
    const { values, positionals } = parse(args, { grace: { type: "string" } })
    const appKey = one(positionals, "App Key")
    const grace = parseGrace(values.grace)
    const { appSecret, previousSecretExpiresAt } = await exec(runtime(), Admin.rotateSecret(appKey, grace))
    const old =
      previousSecretExpiresAt === null
        ? "The old secret no longer works."
        : `The old secret keeps working until ${iso(previousSecretExpiresAt)} (grace ${values.grace}), then stops.`
    io.stdout(
      values.json === true
        ? `${JSON.stringify(AdminJson.rotatedSecret(appKey, appSecret, previousSecretExpiresAt))}\n`
        : `New App Secret for ${appKey}: ${appSecret}\n${old} The new one is shown only this once.\n`
    )
  },
  "app delete": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    const appKey = one(positionals, "App Key")
    await exec(runtime(), Admin.deleteApplication(appKey))
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ app_key: appKey, deleted: true })}\n`
        : `Deleted application ${appKey}; its tokens are revoked.\n`
    )
  },
  "user create": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {
      username: { type: "string" },
      password: { type: "string" },
      "password-stdin": { type: "boolean" }
    })
    none(positionals, "user create")
    const username = required(values.username, "--username")
    if (values.password !== undefined && values["password-stdin"] === true) {
      throw new UsageError("give either --password or --password-stdin")
    }
    const password =
      values["password-stdin"] === true
        ? await stdinPassword(io)
        : required(values.password, "--password (or --password-stdin)")
    const user = await exec(runtime(), Admin.createUser(username, password))
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ user_id: user.userId, username: user.username })}\n`
        : `Created user ${JSON.stringify(user.username)} (id ${user.userId}).\n`
    )
  },
  "user list": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    none(positionals, "user list")
    const users = await exec(runtime(), Admin.listUsers)
    if (values.json === true) io.stdout(`${JSON.stringify(users.map(AdminJson.user))}\n`)
    else if (users.length === 0) io.stdout("No users.\n")
    else
      io.stdout(
        table([
          ["USER ID", "USERNAME", "CREATED", "DISABLED"],
          ...users.map((u) => [
            u.userId,
            u.username,
            iso(u.createdAt),
            u.disabledAt === null || u.disabledAt === undefined ? "-" : iso(u.disabledAt)
          ])
        ])
      )
  },
  "user disable": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    const user = await exec(runtime(), Admin.disableUser(one(positionals, "username or user id")))
    io.stdout(
      values.json === true
        ? `${JSON.stringify(AdminJson.user(user))}\n`
        : `Disabled user ${userLine(user)}: they cannot sign in, their tokens are revoked and their sessions ended.\n`
    )
  },
  "user enable": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    const user = await exec(runtime(), Admin.enableUser(one(positionals, "username or user id")))
    io.stdout(
      values.json === true
        ? `${JSON.stringify(AdminJson.user(user))}\n`
        : `Enabled user ${userLine(user)}: they can sign in again.\n`
    )
  },
  "user set-password": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {
      "password-stdin": { type: "boolean" },
      "keep-sessions": { type: "boolean" }
    })
    const who = one(positionals, "username or user id")
    // never on the command line, where the process list shows it
    if (values["password-stdin"] !== true) throw new UsageError("--password-stdin is required")
    const password = await stdinPassword(io)
    const keepSessions = values["keep-sessions"] === true
    const user = await exec(runtime(), Admin.setPassword(who, password, { keepSessions }))
    io.stdout(
      values.json === true
        ? `${JSON.stringify(AdminJson.user(user))}\n`
        : `Set the password of user ${userLine(user)}; their sign-in sessions were ${keepSessions ? "kept" : "ended"}.\n`
    )
  },
  "user delete": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    const who = one(positionals, "username or user id")
    const user = await exec(runtime(), Admin.deleteUser(who))
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ user_id: user.userId, username: user.username, deleted: true })}\n`
        : `Deleted user ${JSON.stringify(user.username)}; their tokens and consents are gone.\n`
    )
  },
  "token revoke": async (args, runtime, io) => {
    const { values, positionals } = parse(args, { app: { type: "string" }, "open-id": { type: "string" } })
    none(positionals, "token revoke")
    const appKey = required(values.app, "--app")
    const openId = required(values["open-id"], "--open-id")
    const revoked = await exec(runtime(), Admin.revokeSubjectTokens(appKey, openId))
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ app_key: appKey, open_id: openId, revoked })}\n`
        : `Revoked ${revoked} token${revoked === 1 ? "" : "s"} of open_id ${JSON.stringify(openId)} of ${appKey}.\n`
    )
  },
  "consent list": async (args, runtime, io) => {
    const { values, positionals } = parse(args, { user: { type: "string" } })
    none(positionals, "consent list")
    const { consents } = await exec(runtime(), Admin.listConsents(required(values.user, "--user")))
    if (values.json === true) io.stdout(`${JSON.stringify(consents.map(AdminJson.consent))}\n`)
    else if (consents.length === 0) io.stdout("No consents.\n")
    else
      io.stdout(
        table([
          ["APP KEY", "UPDATED", "SCOPES"],
          ...consents.map((c) => [c.appKey, iso(c.updatedAt), c.scope.length === 0 ? "-" : c.scope.join(",")])
        ])
      )
  },
  "consent revoke": async (args, runtime, io) => {
    const { values, positionals } = parse(args, { user: { type: "string" }, app: { type: "string" } })
    none(positionals, "consent revoke")
    const who = required(values.user, "--user")
    const appKey = required(values.app, "--app")
    const user = await exec(runtime(), Admin.withdrawConsent(who, appKey))
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ user_id: user.userId, app_key: appKey, withdrawn: true })}\n`
        : `Withdrew the consent of user ${userLine(user)} to ${appKey}; that application's tokens of theirs are revoked.\n`
    )
  },
  "audit tail": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {
      app: { type: "string" },
      limit: { type: "string" },
      type: { type: "string" },
      since: { type: "string" }
    })
    none(positionals, "audit tail")
    const limit = values.limit === undefined ? 50 : Number(values.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > Admin.maxAuditLimit) {
      throw new UsageError(`--limit must be a whole number from 1 to ${Admin.maxAuditLimit}`)
    }
    if (
      values.type !== undefined &&
      !(Audit.EventType.literals as ReadonlyArray<string>).includes(values.type)
    ) {
      throw new UsageError(`--type must be one of ${Audit.EventType.literals.join(", ")}`)
    }
    const since = values.since === undefined ? undefined : parseSince(values.since)
    const newest = await exec(
      runtime(),
      Admin.queryAudit({ limit, appKey: values.app, type: values.type, since })
    )
    const events = [...newest].reverse()
    if (values.json === true) io.stdout(`${auditJsonText(events.map(AdminJson.auditEvent))}\n`)
    else if (events.length === 0) io.stdout("No audit events.\n")
    else
      io.stdout(
        table([
          ["TIME", "EVENT", "APP KEY", "USER", "OPEN ID", "ADDRESS", "REQUEST", "ACTOR", "DETAIL"],
          ...events.map((e) => [
            iso(e.at),
            e.type,
            ...[e.appKey, e.userId, e.openId, e.address, e.requestId, e.actor ?? null, e.detail].map((v) =>
              v === null ? "-" : visible(v)
            )
          ])
        ])
      )
  },
  backup: async (args, _runtime, io) => {
    const { values, positionals } = parse(args, {})
    const file = one(positionals, "backup file")
    const env = Env.read(io.env)
    if (env.databaseUrl !== null) {
      throw new Failure(
        `the database is PostgreSQL (${Env.describeStore(env)}): take backups with pg_dump, e.g. pg_dump --format=custom --file=latchkey.dump "$DATABASE_URL"`
      )
    }
    if (env.dbPath === ":memory:") throw new Failure("LATCHKEY_DB is :memory:; there is nothing to back up")
    if (!existsSync(env.dbPath)) throw new Failure(`there is no database at ${env.dbPath} (LATCHKEY_DB)`)
    io.stderr(`latchkey: database ${env.dbPath}\n`)
    const destination = resolve(Env.baseDirectory(io.env), file)
    const done = await Effect.runPromise(
      Effect.either(SqliteStorage.backup({ filename: env.dbPath }, destination))
    )
    if (Either.isLeft(done)) throw new Failure(`the backup failed: ${done.left.message}`)
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ database: env.dbPath, backup: destination })}\n`
        : `Backed up ${env.dbPath} to ${destination}.\n`
    )
  }
}

/** Commands that only read: on a SQLite file that does not exist they fail instead of creating it. */
const readOnly: ReadonlySet<string> = new Set([
  "app list",
  "app show",
  "user list",
  "consent list",
  "audit tail"
])

/** Commands of one word (`backup <file>`); the others are `<group> <action>`. */
const single: ReadonlySet<string> = new Set(["backup"])

/** Run the CLI with `argv` (without node and script); returns the exit code. */
export const run = async (argv: ReadonlyArray<string>, io: Io): Promise<number> => {
  const [group, action, ...rest] = argv
  if (group === undefined || group === "help" || group === "--help" || group === "-h") {
    io.stdout(usage)
    return group === undefined ? exitCodes.usage : exitCodes.ok
  }
  const name = single.has(group) ? group : `${group} ${action ?? ""}`
  const args = single.has(group) ? [...(action === undefined ? [] : [action]), ...rest] : rest
  const command = commands[name]
  if (command === undefined) {
    io.stderr(`latchkey: unknown command ${JSON.stringify(name.trim())}\n\n${usage}`)
    return exitCodes.usage
  }
  if (args.includes("--help") || args.includes("-h")) {
    io.stdout(usage)
    return exitCodes.ok
  }
  // A misspelt setting (LATCHKEY_DBB) would silently leave the default in place: say so first
  for (const warning of Env.warnings(io.env)) io.stderr(`latchkey: warning: ${warning}\n`)
  let runtime: Runtime | undefined
  try {
    const getRuntime = (): Runtime => {
      if (runtime === undefined) {
        const env = Env.read(io.env)
        if (env.databaseUrl === null && env.dbPath !== ":memory:" && !existsSync(env.dbPath)) {
          if (readOnly.has(name)) {
            throw new Failure(
              `there is no database at ${env.dbPath} (LATCHKEY_DB); nothing to show. Point LATCHKEY_DB at the server's database`
            )
          }
          io.stderr(`latchkey: warning: ${env.dbPath} does not exist; creating a new database there\n`)
        }
        io.stderr(`latchkey: database ${Env.describeStore(env)}\n`)
        const log = Log.make(env.logLevel === "info" ? "warn" : env.logLevel, 2)
        runtime = ManagedRuntime.make(Services.layer(env, env.issuer ?? `http://localhost:${env.port}`, log))
      }
      return runtime
    }
    await command(args, getRuntime, io)
    return exitCodes.ok
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`latchkey: ${e.message}\nRun "pnpm --silent cli help" for usage.\n`)
      return exitCodes.usage
    }
    io.stderr(`latchkey: error: ${e instanceof Error ? e.message : String(e)}\n`)
    return exitCodes.failed
  } finally {
    if (runtime !== undefined) await runtime.dispose()
  }
}

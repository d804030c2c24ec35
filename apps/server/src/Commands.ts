/**
 * The management CLI (apps/server/README.md): applications and users in the server's database.
 * `run` takes the arguments and streams so tests can drive it in-process too.
 */
import { type ParseArgsConfig, parseArgs } from "node:util"
import {
  Accounts,
  Admin,
  Application,
  ApplicationStore,
  type Audit,
  AuditStore,
  type OAuthError,
  type StorageError,
  type User,
  UserStore
} from "@latchkey/core"
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

export const usage = `Usage: pnpm --silent cli <command> [options]

Applications
  app create --name <name> --redirect-uri <uri> [--redirect-uri <uri2> ...]
             [--scope a,b] [--grant-types authorization_code,implicit,password,client_credentials,refresh_token]
             [--require-pkce] [--app-key <key> --app-secret <secret>] [--json]
  app list [--json]
  app show <app-key> [--json]
  app rotate-secret <app-key> [--grace <n>s|m|h|d] [--json]
  app delete <app-key> [--json]

Users
  user create --username <username> (--password <password> | --password-stdin) [--json]
  user list [--json]
  user delete <username-or-user-id> [--json]

Audit trail
  audit tail [--app <app-key>] [--limit <n>] [--json]

--grace keeps the old App Secret working that long (at most 30d; default 0: it stops at once).

The database is LATCHKEY_DB (default ./data/latchkey.sqlite); the server key is
LATCHKEY_SECRET or the one kept in the database. Exit codes: 0 done, 1 refused
or failed, 2 usage error.
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

const iso = (seconds: number) => new Date(seconds * 1000).toISOString()
const isoOrNull = (seconds: number | null) => (seconds === null ? null : iso(seconds))

/** The previous App Secret if it still works now: until when, and its first use since the rotation. */
const previousSecret = (
  a: Application.Application
): { readonly expiresAt: number; readonly usedAt: number | null } | null =>
  Application.livePreviousSecret(a, Math.floor(Date.now() / 1000)) === null
    ? null
    : { expiresAt: a.previousSecretExpiresAt ?? 0, usedAt: a.previousSecretUsedAt ?? null }

const appJson = (a: Application.Application) => {
  const previous = previousSecret(a)
  return {
    app_key: a.appKey,
    name: a.name,
    redirect_uris: [...a.redirectUris],
    scopes: [...a.scopes],
    grant_types: [...a.grantTypes],
    require_pkce: a.requirePkce,
    created_at: iso(a.createdAt),
    previous_secret_expires_at: isoOrNull(previous?.expiresAt ?? null),
    previous_secret_first_used_at: isoOrNull(previous?.usedAt ?? null)
  }
}

const graceUnits: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 }

/** `--grace`: `<n>s`, `<n>m`, `<n>h` or `<n>d` (or `0`), at most 30 days; in seconds. */
export const parseGrace = (value: string | undefined): number => {
  if (value === undefined || value === "0") return 0
  const match = /^(\d{1,7})([smhd])$/.exec(value)
  const seconds = match === null ? Number.NaN : Number(match[1]) * (graceUnits[match[2] ?? ""] ?? Number.NaN)
  if (!Number.isSafeInteger(seconds) || seconds > Application.maxSecretGrace) {
    throw new UsageError("--grace must be <n>s, <n>m, <n>h or <n>d, at most 30d (e.g. --grace 1h)")
  }
  return seconds
}

const auditJson = (e: Audit.AuditEvent) => ({
  at: iso(e.at),
  type: e.type,
  app_key: e.appKey,
  user_id: e.userId,
  open_id: e.openId,
  address: e.address,
  request_id: e.requestId,
  detail: e.detail
})

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

const userJson = (u: User.User) => ({ user_id: u.userId, username: u.username, created_at: iso(u.createdAt) })

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? []
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ")).join("\n")}\n`
}

const describeApp = (a: Application.Application): string =>
  [
    `  App Key:       ${a.appKey}`,
    `  Name:          ${a.name}`,
    `  Redirect URIs: ${a.redirectUris.join(", ")}`,
    `  Scopes:        ${a.scopes.length === 0 ? "(none)" : a.scopes.join(", ")}`,
    `  Grant types:   ${a.grantTypes.join(", ")}`,
    `  Require PKCE:  ${a.requirePkce ? "yes" : "no"}`,
    `  Created:       ${iso(a.createdAt)}`,
    ...oldSecretLine(a)
  ].join("\n")

const oldSecretLine = (a: Application.Application): Array<string> => {
  const previous = previousSecret(a)
  if (previous === null) return []
  const use =
    previous.usedAt === null
      ? "not used since the rotation"
      : `first used after the rotation at ${iso(previous.usedAt)}`
  return [`  Old secret:    works until ${iso(previous.expiresAt)}; ${use}`]
}

const one = (positionals: ReadonlyArray<string>, what: string): string => {
  if (positionals.length !== 1 || positionals[0] === "") throw new UsageError(`expected exactly one ${what}`)
  return positionals[0] as string
}

const required = (value: string | undefined, flag: string): string => {
  if (value === undefined || value === "") throw new UsageError(`${flag} is required`)
  return value
}

const list = (value: string | undefined): Array<string> | undefined =>
  value === undefined ? undefined : value.split(/[\s,]+/).filter((s) => s.length > 0)

type Runtime = ManagedRuntime.ManagedRuntime<Services.Services, unknown>

/** Every failure a command can meet, each with its message. */
type CommandError =
  | ApplicationStore.AppKeyTaken
  | UserStore.UsernameTaken
  | StorageError.StorageError
  | OAuthError.InvalidRequest

const message = (e: CommandError): string => {
  switch (e._tag) {
    case "AppKeyTaken":
      return `an application with App Key ${JSON.stringify(e.appKey)} exists already`
    case "UsernameTaken":
      return `a user named ${JSON.stringify(e.username)} exists already`
    case "StorageError":
      return `the database failed: ${e.message}`
    case "InvalidRequest":
      return e.description
  }
}

/** Run a command's effect; its failure becomes a `Failure` with its message (exit 1). */
const exec = async <A>(
  runtime: Runtime,
  effect: Effect.Effect<A, CommandError, Services.Services>
): Promise<A> => {
  const result = await runtime.runPromise(Effect.either(effect))
  if (Either.isLeft(result)) throw new Failure(message(result.left))
  return result.right
}

const commands: Record<
  string,
  (args: ReadonlyArray<string>, runtime: () => Runtime, io: Io) => Promise<void>
> = {
  "app create": async (args, runtime, io) => {
    const { values } = parse(args, {
      name: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      scope: { type: "string" },
      "grant-types": { type: "string" },
      "require-pkce": { type: "boolean" },
      "app-key": { type: "string" },
      "app-secret": { type: "string" }
    })
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
      io.stdout(
        `${JSON.stringify({
          app_key: app.appKey,
          app_secret: appSecret,
          name: app.name,
          redirect_uris: [...app.redirectUris],
          scopes: [...app.scopes],
          grant_types: [...app.grantTypes]
        })}\n`
      )
    } else {
      io.stdout(
        `Created application ${JSON.stringify(app.name)}\n${describeApp(app)}\n  App Secret:    ${appSecret}\n\nThe App Secret is shown only this once: store it now.\n`
      )
    }
  },
  "app list": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    if (positionals.length > 0) throw new UsageError("app list takes no arguments")
    const apps = await exec(
      runtime(),
      Effect.flatMap(ApplicationStore.ApplicationStore, (s) => s.list())
    )
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
        ? `${JSON.stringify({
            app_key: appKey,
            app_secret: appSecret,
            previous_secret_expires_at: isoOrNull(previousSecretExpiresAt)
          })}\n`
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
    if (positionals.length > 0) throw new UsageError("user create takes no positional arguments")
    const username = required(values.username, "--username")
    if (values.password !== undefined && values["password-stdin"] === true) {
      throw new UsageError("give either --password or --password-stdin")
    }
    const password =
      values["password-stdin"] === true
        ? (await io.readStdin()).replace(/\r?\n$/, "")
        : required(values.password, "--password (or --password-stdin)")
    const user = await exec(runtime(), Accounts.createUser(username, password))
    io.stdout(
      values.json === true
        ? `${JSON.stringify({ user_id: user.userId, username: user.username })}\n`
        : `Created user ${JSON.stringify(user.username)} (id ${user.userId}).\n`
    )
  },
  "user list": async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    if (positionals.length > 0) throw new UsageError("user list takes no arguments")
    const users = await exec(
      runtime(),
      Effect.flatMap(UserStore.UserStore, (s) => s.list())
    )
    if (values.json === true) io.stdout(`${JSON.stringify(users.map(userJson))}\n`)
    else if (users.length === 0) io.stdout("No users.\n")
    else
      io.stdout(
        table([
          ["USER ID", "USERNAME", "CREATED"],
          ...users.map((u) => [u.userId, u.username, iso(u.createdAt)])
        ])
      )
  },
  "audit tail": async (args, runtime, io) => {
    const { values, positionals } = parse(args, { app: { type: "string" }, limit: { type: "string" } })
    if (positionals.length > 0) throw new UsageError("audit tail takes no arguments")
    const limit = values.limit === undefined ? 50 : Number(values.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new UsageError("--limit must be a whole number from 1 to 10000")
    }
    const events = await exec(
      runtime(),
      Effect.flatMap(AuditStore.AuditStore, (s) => s.tail({ limit, appKey: values.app }))
    )
    if (values.json === true) io.stdout(`${auditJsonText(events.map(auditJson))}\n`)
    else if (events.length === 0) io.stdout("No audit events.\n")
    else
      io.stdout(
        table([
          ["TIME", "EVENT", "APP KEY", "USER", "OPEN ID", "ADDRESS", "REQUEST", "DETAIL"],
          ...events.map((e) => [
            iso(e.at),
            e.type,
            ...[e.appKey, e.userId, e.openId, e.address, e.requestId, e.detail].map((v) =>
              v === null ? "-" : visible(v)
            )
          ])
        ])
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
  }
}

/** Run the CLI with `argv` (without node and script); returns the exit code. */
export const run = async (argv: ReadonlyArray<string>, io: Io): Promise<number> => {
  const [group, action, ...rest] = argv
  if (group === undefined || group === "help" || group === "--help" || group === "-h") {
    io.stdout(usage)
    return group === undefined ? exitCodes.usage : exitCodes.ok
  }
  const command = commands[`${group} ${action ?? ""}`]
  if (command === undefined) {
    io.stderr(`latchkey: unknown command ${JSON.stringify(`${group} ${action ?? ""}`.trim())}\n\n${usage}`)
    return exitCodes.usage
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(usage)
    return exitCodes.ok
  }
  let runtime: Runtime | undefined
  try {
    const getRuntime = (): Runtime => {
      if (runtime === undefined) {
        const env = Env.read(io.env)
        const log = Log.make(env.logLevel === "info" ? "warn" : env.logLevel, 2)
        runtime = ManagedRuntime.make(Services.layer(env, env.issuer ?? `http://localhost:${env.port}`, log))
      }
      return runtime
    }
    await command(rest, getRuntime, io)
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

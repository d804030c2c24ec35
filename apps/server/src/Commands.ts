/**
 * The management CLI (apps/server/README.md): applications, users, tokens, consents and the audit
 * trail in the server's database, through the same `Admin` operations as the admin API (recorded
 * with the actor `cli`), and backups of a SQLite database. `run` takes the arguments and streams
 * so tests can drive it in-process too. The commands are in `commands/`, one file per subject.
 */
import { existsSync } from "node:fs"
import { ManagedRuntime } from "effect"
import * as Apps from "./commands/apps.js"
import * as AuditCommands from "./commands/audit.js"
import * as Backup from "./commands/backup.js"
import { type Command, exitCodes, Failure, type Io, type Runtime, UsageError } from "./commands/common.js"
import * as Consents from "./commands/consents.js"
import * as KeyCommands from "./commands/keys.js"
import * as Operators from "./commands/operators.js"
import * as Registration from "./commands/registration.js"
import * as ReviewCommands from "./commands/review.js"
import * as Scopes from "./commands/scopes.js"
import * as Users from "./commands/users.js"
import * as Env from "./Env.js"
import * as Log from "./Log.js"
import * as Services from "./Services.js"
import * as StartError from "./StartError.js"

/** The `--grace` option of `app rotate-secret`. */
export { parseGrace } from "./commands/apps.js"
/** How `audit tail` shows recorded values, and its `--since`. */
export { auditJsonText, parseSince, visible } from "./commands/audit.js"
/** The CLI's streams and exit codes. */
export type { Io } from "./commands/common.js"

/** The usage text (`cli help`). */
export const usage = `Usage: latchkey <command> [options]   (in a checkout of the repository: pnpm --silent cli <command>)
       latchkey [serve]                starts the server

Applications
  app create --name <name> --redirect-uri <uri> [--redirect-uri <uri2> ...]
             [--scope a,b] [--grant-types authorization_code,implicit,password,client_credentials,refresh_token]
             [--require-pkce] [--require-mfa] [--public] [--access-token-format opaque|jwt]
             [--access-token-audience <uri>] [--web-origin <origin> ...]
             [--post-logout-redirect-uri <uri> ...]
             [--backchannel-logout-uri <uri> [--backchannel-logout-session-required]]
             [--token-endpoint-auth-method client_secret_basic|client_secret_post]
             [--scope-delimiter comma|space] [--app-key <key> --app-secret <secret>] [--json]
  app update <app-key> [--name <name>] [--redirect-uri <uri> ...] [--scope a,b] [--grant-types a,b]
             [--require-pkce | --no-require-pkce] [--require-mfa | --no-require-mfa]
             [--public | --confidential]
             [--access-token-format opaque|jwt] [--access-token-audience <uri>|default]
             [--web-origin <origin> ... | --no-web-origins]
             [--post-logout-redirect-uri <uri> ... | --no-post-logout-redirect-uris]
             [--backchannel-logout-uri <uri> [--backchannel-logout-session-required] | --no-backchannel-logout-uri]
             [--token-endpoint-auth-method client_secret_basic|client_secret_post]
             [--scope-delimiter comma|space]
             [--access-token-ttl <seconds>|default] [--refresh-token-ttl <seconds>|default] [--json]
  app list [--json]
  app show <app-key> [--json]
  app rotate-secret <app-key> [--grace <n>s|m|h|d] [--json]
  app delete <app-key> [--json]
  app approve <app-key> [--json]
  app reject <app-key> --reason=<text> [--json]
  app suspend <app-key> --reason=<text> [--json]
  app reinstate <app-key> [--json]
  app owner add|remove <app-key> <username-or-user-id> [--json]
  app owner list <app-key> [--json]

Users
  user create --username <username> (--password <password> | --password-stdin) [--json]
  user list [--json]
  user disable <username-or-user-id> [--json]
  user enable <username-or-user-id> [--json]
  user set-password <username-or-user-id> --password-stdin [--keep-sessions] [--json]
  user delete <username-or-user-id> [--json]
  user mfa-reset <username-or-user-id> [--json]

Tokens and consents
  token revoke --app <app-key> --open-id <open_id> [--json]
  consent list --user <username-or-user-id> [--json]
  consent revoke --user <username-or-user-id> --app <app-key> [--json]

Scope catalogue
  scope create <name> --description <language>=<text> [--description <language>=<text> ...]
               [--developer-requestable] [--no-needs-review] [--json]
  scope update <name> [--description <language>=<text> ...]
               [--developer-requestable | --no-developer-requestable] [--needs-review | --no-needs-review] [--json]
  scope list [--json]
  scope delete <name> [--json]

Audit trail
  audit tail [--app <app-key>] [--type <event-type>] [--since <time>] [--limit <n>] [--json]

Signing keys
  keys list [--json]
  keys rotate [--algorithm ES256|RS256] [--json]

Dynamic client registration (with LATCHKEY_REGISTRATION=on)
  registration-token create --uses <n> --expires-in <seconds>|<n>s|m|h|d [--json]
  registration-token list [--json]
  registration-token revoke <id> [--json]

Console operators
  operator create <name> --role=admin|operator|viewer --password-stdin [--json]
  operator list [--json]
  operator set-role <name> --role=admin|operator|viewer [--json]
  operator passwd <name> --password-stdin [--json]
  operator delete <name> [--json]

Database
  backup <file> [--json]

--grace keeps the old App Secret working that long (at most 30d; default 0: it stops at once).
--since is ISO 8601 (2026-01-31, 2026-01-31T12:00:00Z), epoch seconds, or a time ago (15m, 24h, 7d).
app update --redirect-uri replaces every redirect URI; a lifetime of "default" returns to the server's.
--public registers a public client (no App Secret; authorization_code and refresh_token with PKCE S256);
app update --confidential gives a public application a new App Secret, shown once.
scope update --description replaces every description; a new scope needs review and is not
developer requestable unless told. Once the catalogue has scopes, an application's scopes must be in it.
app suspend revokes every token and code of the application; app reinstate brings none back.
operator passwd and operator delete end the operator's console sessions.
user set-password ends the user's sign-in sessions (they sign in again) unless --keep-sessions.
A user is named by id or by username (the id is tried first; no username is another user's id),
as in the admin API. audit tail prints the newest events oldest first, the newest last, in the
order of GET /admin/v1/audit; names are shown beside App Keys and user ids.

The database is DATABASE_URL (PostgreSQL) or else LATCHKEY_DB (default ./data/latchkey.sqlite),
named on stderr; the server key is LATCHKEY_SECRET or the one kept in the database. Exit codes:
0 done, 1 refused or failed, 2 usage error.
`

/** Every command by name: `<group> <action>`, or one word (`backup`). */
const commands: Readonly<Record<string, Command>> = {
  ...Apps.commands,
  ...ReviewCommands.commands,
  ...Users.commands,
  ...Consents.commands,
  ...AuditCommands.commands,
  ...KeyCommands.commands,
  ...Scopes.commands,
  ...Registration.commands,
  ...Operators.commands,
  ...Backup.commands
}

/** Commands of one word (`backup <file>`); the others are `<group> <action>`. */
const single: ReadonlySet<string> = new Set(Object.keys(commands).filter((name) => !name.includes(" ")))

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
  let env: Env.ServerEnv | undefined
  try {
    const getRuntime = (): Runtime => {
      if (runtime === undefined) {
        const read = Env.read(io.env)
        env = read
        if (read.databaseUrl === null && read.dbPath !== ":memory:" && !existsSync(read.dbPath)) {
          if (command.readOnly === true) {
            throw new Failure(
              `there is no database at ${read.dbPath} (LATCHKEY_DB); nothing to show. Point LATCHKEY_DB at the server's database`
            )
          }
          io.stderr(`latchkey: warning: ${read.dbPath} does not exist; creating a new database there\n`)
        }
        io.stderr(`latchkey: database ${Env.describeStore(read)}\n`)
        const log = Log.make(read.logLevel === "info" ? "warn" : read.logLevel, 2)
        runtime = ManagedRuntime.make(
          Services.layer(read, read.issuer ?? `http://localhost:${read.port}`, log)
        )
      }
      return runtime
    }
    await command.run(args, getRuntime, io)
    return exitCodes.ok
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`latchkey: ${e.message}\nRun "latchkey help" (pnpm --silent cli help) for usage.\n`)
      return exitCodes.usage
    }
    // A database the settings name wrongly: the setting, the path or database, and why
    const explained = env === undefined ? undefined : StartError.explain(env, e)
    io.stderr(`latchkey: error: ${explained ?? (e instanceof Error ? e.message : String(e))}\n`)
    return exitCodes.failed
  } finally {
    if (runtime !== undefined) await runtime.dispose()
  }
}

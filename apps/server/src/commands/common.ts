/**
 * What every command of the management CLI shares: its streams, its two kinds of refusal (a usage
 * mistake, exit 2; a refused or failed operation, exit 1), the parsing of its options and
 * positionals, the running of an `Admin` operation as the actor `cli`, and its table output.
 */
import { type ParseArgsConfig, parseArgs } from "node:util"
import {
  type Admin,
  AdminJson,
  type ApplicationStore,
  Audit,
  type Review,
  type ScopeStore,
  type StorageError,
  type User,
  type UserStore
} from "@latchkey/core"
import { Effect, Either, type ManagedRuntime } from "effect"
import type * as Services from "../Services.js"

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
export class UsageError extends Error {}
/** A refused or failed operation (exit 1). */
export class Failure extends Error {}

const common = { json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const

/** How a command's arguments are parsed: its `options` with `--json` and `--help`, strictly. */
type Config<O> = {
  args: Array<string>
  options: typeof common & O
  allowPositionals: true
  strict: true
}

/** `args` parsed with `options`, `--json` and `--help` included; a mistake is a `UsageError`. */
export const parse = <O extends NonNullable<ParseArgsConfig["options"]>>(
  args: ReadonlyArray<string>,
  options: O
): ReturnType<typeof parseArgs<Config<O>>> => {
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

/** Epoch seconds as ISO 8601 in UTC. */
export const iso = AdminJson.time

/** The time now in epoch seconds. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

const units: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 }

/** A duration written `<n>s`, `<n>m`, `<n>h` or `<n>d` (`--grace`, `--since 15m`), in seconds; null otherwise. */
export const duration = (value: string): number | null => {
  const match = /^(\d{1,7})([smhd])$/.exec(value)
  return match === null ? null : Number(match[1]) * (units[match[2] ?? ""] ?? Number.NaN)
}

/** Rows as columns padded to their widest cell, the first row the header. */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? []
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ")).join("\n")}\n`
}

/** The one positional argument, `what`; else a `UsageError`. */
export const one = (positionals: ReadonlyArray<string>, what: string): string => {
  if (positionals.length !== 1 || positionals[0] === "") throw new UsageError(`expected exactly one ${what}`)
  return positionals[0] as string
}

/** Refuse positional arguments to `command`. */
export const none = (positionals: ReadonlyArray<string>, command: string): void => {
  if (positionals.length > 0) throw new UsageError(`${command} takes no positional arguments`)
}

/** The value of a required option `flag`; else a `UsageError`. */
export const required = (value: string | undefined, flag: string): string => {
  if (value === undefined || value === "") throw new UsageError(`${flag} is required`)
  return value
}

/** A list option: items separated by commas or spaces. */
export const list = (value: string | undefined): Array<string> | undefined =>
  value === undefined ? undefined : value.split(/[\s,]+/).filter((s) => s.length > 0)

/** The password of `--password-stdin`: standard input without its final line break. */
export const stdinPassword = async (io: Io): Promise<string> => (await io.readStdin()).replace(/\r?\n$/, "")

/** The services a command runs its operations with, made on first use. */
export type Runtime = ManagedRuntime.ManagedRuntime<Services.Services, unknown>

/** Every failure a command can meet, each with its message. */
type CommandError =
  | ApplicationStore.AppKeyTaken
  | UserStore.UsernameTaken
  | ScopeStore.ScopeTaken
  | StorageError.StorageError
  | Admin.InvalidField
  | Admin.NotFound
  | Review.IllegalTransition
  | Review.NotEditable

const message = (e: CommandError): string => {
  switch (e._tag) {
    case "AppKeyTaken":
      return `an application with App Key ${JSON.stringify(e.appKey)} exists already`
    case "UsernameTaken":
      return `a user named ${JSON.stringify(e.username)} exists already`
    case "ScopeTaken":
      return `the scope catalogue has a scope ${JSON.stringify(e.name)} already`
    case "StorageError":
      return `the database failed: ${e.message}`
    case "InvalidField":
    case "NotFound":
    case "IllegalTransition":
    case "NotEditable":
      return e.description
  }
}

/** Run a command's effect as the actor `cli`; its failure becomes a `Failure` with its message (exit 1). */
export const exec = async <A>(
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

/** A user as a line of text: the username quoted and the id. */
export const userLine = (u: User.User): string => `${JSON.stringify(u.username)} (id ${u.userId})`

/** A command: what it runs, and whether it only reads (then it fails on a SQLite file that does not exist instead of creating it). */
export interface Command {
  readonly run: (args: ReadonlyArray<string>, runtime: () => Runtime, io: Io) => Promise<void>
  readonly readOnly?: boolean
}

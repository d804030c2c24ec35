/**
 * `audit tail`: the newest audit events, oldest first (`Admin.auditEventsJson`, as the admin API
 * answers them), with the application's name and the username beside their ids, as a
 * table of plain one-line text or as JSON, neither of which a recorded value can forge.
 */
import { Admin, type AdminJson, Audit } from "@latchkey/core"
import { Either } from "effect"
import { type Command, duration, exec, none, nowSeconds, parse, table, UsageError } from "./common.js"

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

const cell = (v: string | null): string => (v === null ? "-" : visible(v))

/** An id with its name beside it, when there is one: `k3J9 (Photo Printer)`. */
const withName = (id: string | null, name: string | null): string =>
  name === null ? cell(id) : `${cell(id)} (${visible(name)})`

/** The events as a table, one line each. */
const auditTable = (events: ReadonlyArray<typeof AdminJson.AuditEventJson.Type>): string =>
  table([
    ["TIME", "EVENT", "APP KEY", "USER", "OPEN ID", "ADDRESS", "REQUEST", "ACTOR", "DETAIL"],
    ...events.map((e) => [
      e.at,
      e.type,
      withName(e.app_key, e.app_name),
      withName(e.user_id, e.username),
      ...[e.open_id, e.address, e.request_id, e.actor, e.detail].map(cell)
    ])
  ])

/** Events `audit tail` shows when it names no `--limit`. */
const defaultLimit = 50

/** The commands on the audit trail. */
export const commands: Record<string, Command> = {
  "audit tail": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        app: { type: "string" },
        limit: { type: "string" },
        type: { type: "string" },
        since: { type: "string" }
      })
      none(positionals, "audit tail")
      const limit = Admin.auditLimit(values.limit === undefined ? defaultLimit : Number(values.limit))
      if (Either.isLeft(limit)) {
        throw new UsageError(`--limit must be a whole number from 1 to ${Admin.maxAuditLimit}`)
      }
      if (
        values.type !== undefined &&
        !(Audit.EventType.literals as ReadonlyArray<string>).includes(values.type)
      ) {
        throw new UsageError(`--type must be one of ${Audit.EventType.literals.join(", ")}`)
      }
      const since = values.since === undefined ? undefined : parseSince(values.since)
      const shown = await exec(
        runtime(),
        Admin.auditEventsJson({ limit: limit.right, appKey: values.app, type: values.type, since })
      )
      if (values.json === true) io.stdout(`${auditJsonText(shown)}\n`)
      else if (shown.length === 0) io.stdout("No audit events.\n")
      else io.stdout(auditTable(shown))
    }
  }
}

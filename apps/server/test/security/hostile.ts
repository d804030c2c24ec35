/**
 * Hostile text for docs/security.md T13 (HostileText.test.ts): the values, in the forms a
 * request carries them, and the stack on each store: SQLite, PostgreSQL over an embedded
 * PGlite, and the PostgreSQL server `DATABASE_URL` names when it is set.
 */
import { randomUUID } from "node:crypto"
import { assert } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { Admin, ConsentStore } from "@latchkey/core"
import { PgliteClient } from "@latchkey/storage-postgres"
import { Effect } from "effect"
import { createDatabase, serverUrl } from "../postgres/database.js"
import { type Stack, startStack } from "./harness.js"

/** A hostile value as a form or query carries it (percent-encoded), and what kind of hostile it is. */
export interface Encoded {
  readonly name: string
  readonly raw: string
  /** `control`: decodes to text with a control character; `encoding`: does not decode at all. */
  readonly kind: "control" | "encoding"
}

/** NUL, other C0 controls, DEL, C1, invalid percent-encoding, invalid UTF-8 and a lone surrogate. */
export const encoded: ReadonlyArray<Encoded> = [
  { name: "NUL", raw: "a%00b", kind: "control" },
  { name: "ESC", raw: "a%1Bb", kind: "control" },
  { name: "LF", raw: "a%0Ab", kind: "control" },
  { name: "DEL", raw: "a%7Fb", kind: "control" },
  { name: "C1 NEL", raw: "a%C2%85b", kind: "control" },
  { name: "invalid percent-encoding", raw: "a%E0%A4%A", kind: "encoding" },
  { name: "invalid UTF-8", raw: "a%FFb", kind: "encoding" },
  { name: "lone surrogate as UTF-8", raw: "a%ED%A0%80b", kind: "encoding" }
]

/** Bidirectional controls and invisible format characters (T18): fine in a protocol parameter, refused in a text a page shows. */
export const shownTexts: ReadonlyArray<readonly [string, string]> = [
  ["RLO", "Pay\u202ePal"],
  ["RLI", "Pay\u2067Pal"],
  ["RLM", "Pay\u200fPal"],
  ["ZWSP", "Pay\u200bPal"],
  ["BOM", "Pay\ufeffPal"],
  ["soft hyphen", "Pay\u00adPal"]
]

/** The same characters as JSON strings carry them (a lone surrogate included). */
export const texts: ReadonlyArray<readonly [string, string]> = [
  ["NUL", "abcd\u0000efgh"],
  ["ESC", "abcd\u001b[2Jefgh"],
  ["LF", "abcd\nefgh"],
  ["TAB", "abcd\tefgh"],
  ["DEL", "abcd\u007fefgh"],
  ["C1 NEL", "abcd\u0085efgh"],
  ["lone surrogate", "abcd\ud800efgh"],
  ["trailing LF", "abcdefgh\n"]
]

/** A form or query string of `fields`, each value percent-encoded, with `name` set to `raw` as it is. */
export const formWith = (fields: Record<string, string>, name: string, raw: string): string =>
  Object.entries({ ...fields, [name]: raw })
    .map(([k, v]) => `${encodeURIComponent(k)}=${k === name ? v : encodeURIComponent(v)}`)
    .join("&")

/** The admin listener's token of the hostile-text stacks. */
export const adminToken = "hostile-admin-token-0123456789abcdef"

// Every refused sign-in counts; the rows send more than a real budget allows
const options = {
  adminToken,
  throttle: { freeFailures: 1e6, addressFreeFailures: 1e6, slowFreeFailures: 1e6 }
}

/** A stack on one store, and what closing it takes. */
export interface Store {
  readonly name: string
  readonly start: () => Promise<{
    readonly stack: Stack
    readonly close: () => Promise<void>
    /** The environment that points the CLI at the same store; none for an embedded PGlite. */
    readonly cliEnv: Record<string, string> | undefined
  }>
}

let pglite: Promise<PGlite> | undefined

/** The stores every hostile-text test runs on; PostgreSQL proper only when `DATABASE_URL` is set. */
export const stores: ReadonlyArray<Store> = [
  {
    name: "SQLite",
    start: async () => {
      const stack = await startStack(options)
      return { stack, close: stack.close, cliEnv: { LATCHKEY_DB: stack.dbPath } }
    }
  },
  {
    name: "PostgreSQL (PGlite)",
    start: async () => {
      pglite ??= PGlite.create()
      const db = await pglite
      const schema = `s_${randomUUID().replaceAll("-", "")}`
      const stack = await startStack({ ...options, pool: PgliteClient.make(db, { schema }) })
      return {
        stack,
        close: async () => {
          await stack.close()
          await db.close()
        },
        cliEnv: undefined
      }
    }
  },
  ...(serverUrl === undefined
    ? []
    : [
        {
          name: "PostgreSQL (DATABASE_URL)",
          start: async () => {
            const database = await createDatabase()
            const stack = await startStack({ ...options, env: { DATABASE_URL: database.url } })
            return {
              stack,
              close: async () => {
                await stack.close()
                await database.drop()
              },
              cliEnv: { LATCHKEY_DB: stack.dbPath, DATABASE_URL: database.url }
            }
          }
        }
      ])
]

/** What the stores hold that a refused request must leave alone: applications, users, alice's consents. */
export const snapshot = (s: Stack): Promise<string> =>
  s.runtime.runPromise(
    Effect.gen(function* () {
      const apps = yield* Admin.listApplications
      const users = yield* Admin.listUsers
      const consents = yield* Effect.flatMap(ConsentStore.ConsentStore, (c) => c.list(s.alice.userId))
      return JSON.stringify({ apps, users, consents })
    })
  )

/**
 * No answer since `from` (an index into the stack's log lines) was a 5xx, and nothing was logged
 * as an error: no storage outage (503 `temporarily_unavailable`), no defect.
 */
export const assertNoOutage = (s: Stack, from: number): void => {
  const lines = s
    .logs()
    .split("\n")
    .slice(from)
    .filter((l) => l !== "")
  for (const line of lines) {
    const entry = JSON.parse(line) as { status?: number; level?: number; msg?: string }
    assert.isFalse((entry.status ?? 0) >= 500, `a 5xx was answered: ${line}`)
    assert.isFalse((entry.level ?? 0) >= 50, `an error was logged: ${line}`)
    assert.notInclude(line, "temporarily_unavailable")
  }
}

/** How many log lines the stack has written so far. */
export const logMark = (s: Stack): number => s.logs().split("\n").length - 1

/**
 * Throughput of the adapter (through Effect and the store interfaces) next to raw
 * better-sqlite3 running the same SQL on the same schema with the same pragmas, in
 * the same run. Usage: `pnpm --filter @latchkey/storage-sqlite bench [-- --ops N]`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  CodeStore,
  ConsentStore,
  type StorageError,
  type Stores,
  Tables,
  type Token,
  TokenStore
} from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import * as Fixtures from "@latchkey/storage-testkit/Fixtures"
import BetterSqlite3 from "better-sqlite3"
import { Duration, Effect, Layer } from "effect"

const target = 0.7
const rounds = 3
const opsArg = process.argv.indexOf("--ops")
const opsOverride = opsArg > 0 ? Number(process.argv[opsArg + 1]) : undefined
const modes: ReadonlyArray<{ readonly synchronous: "FULL" | "NORMAL"; readonly ops: number }> = [
  { synchronous: "FULL", ops: opsOverride ?? 1000 },
  { synchronous: "NORMAL", ops: opsOverride ?? 8000 }
]
const now = Fixtures.baseTime

const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-"))
process.on("exit", () => rmSync(dir, { recursive: true, force: true }))
let files = 0

/** A token's column values, in the order of the adapter's token insert (the core's `Tables`). */
const tokenRow = (t: Token.Token) => Tables.values(Tables.tokens, t)

/** A raw connection on a freshly migrated file, with the adapter's pragmas. */
const openRaw = (synchronous: "FULL" | "NORMAL") =>
  Effect.gen(function* () {
    const filename = join(dir, `raw-${files++}.sqlite`)
    yield* SqliteStorage.migrate({ filename, synchronous })
    const db = new BetterSqlite3(filename, { timeout: 5000 })
    db.pragma("busy_timeout = 5000")
    db.pragma("journal_mode = WAL")
    db.pragma(`synchronous = ${synchronous}`)
    db.pragma("foreign_keys = ON")
    const insertToken = db.prepare(Tables.insertSql(Tables.tokens, () => "?"))
    const insertCode = db.prepare(Tables.insertSql(Tables.codes, () => "?"))
    const consume = db.prepare(`UPDATE authorization_codes SET used_at = ?
      WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING family_id`)
    const select = db.prepare("SELECT * FROM tokens WHERE kind = ? AND token_hash = ?")
    const redeem = db.transaction((hash: string, tokens: ReadonlyArray<Token.Token>) => {
      if (consume.get(now, hash, now) === undefined) throw new Error("code not redeemable")
      for (const t of tokens) insertToken.run(tokenRow(t))
    })
    return { db, insertToken, insertCode, redeem, select }
  })

type Raw = Effect.Effect.Success<ReturnType<typeof openRaw>>

const timed = <E, R>(ops: number, run: Effect.Effect<void, E, R>) =>
  Effect.map(Effect.timed(run), ([d]) => ops / (Duration.toMillis(d) / 1000))

interface Workload {
  readonly raw: (raw: Raw, ops: number) => Effect.Effect<number, StorageError.StorageError>
  readonly adapter: (ops: number) => Effect.Effect<number, unknown, Stores.Stores>
}

const workloads: Record<string, Workload> = {
  "issue-token": {
    raw: (raw: Raw, ops: number) =>
      Effect.gen(function* () {
        const tokens = Array.from({ length: ops }, () => tokenRow(Fixtures.token()))
        return yield* timed(
          ops,
          Effect.sync(() => {
            for (const t of tokens) raw.insertToken.run(t)
          })
        )
      }),
    adapter: (ops: number) =>
      Effect.gen(function* () {
        const store = yield* TokenStore.TokenStore
        const tokens = Array.from({ length: ops }, () => Fixtures.token())
        return yield* timed(
          ops,
          Effect.gen(function* () {
            for (const t of tokens) yield* store.insert([t])
          })
        )
      })
  },
  "consume-code": {
    raw: (raw: Raw, ops: number) =>
      Effect.gen(function* () {
        const codes = Array.from({ length: ops }, () => Fixtures.code())
        raw.db.transaction(() => {
          for (const c of codes) raw.insertCode.run(Tables.values(Tables.codes, c))
        })()
        const issued = codes.map((c) => Fixtures.pair({ familyId: c.familyId }))
        return yield* timed(
          ops,
          Effect.sync(() => {
            for (const [i, c] of codes.entries()) raw.redeem.immediate(c.codeHash, issued[i]!)
          })
        )
      }),
    adapter: (ops: number) =>
      Effect.gen(function* () {
        const store = yield* CodeStore.CodeStore
        const codes = Array.from({ length: ops }, () => Fixtures.code())
        yield* Effect.forEach(codes, store.insert, { discard: true })
        // A code redeems only under a standing consent (the raw statements do not check it).
        const consents = yield* ConsentStore.ConsentStore
        yield* Effect.forEach(codes, (c) => consents.grant(c.userId, c.appKey, c.scope, now), {
          discard: true
        })
        const issued = codes.map((c) => Fixtures.pair({ familyId: c.familyId }))
        return yield* timed(
          ops,
          Effect.gen(function* () {
            for (const [i, c] of codes.entries()) yield* store.redeem(c.codeHash, now, issued[i]!)
          })
        )
      })
  },
  "find-token": {
    raw: (raw: Raw, ops: number) =>
      Effect.gen(function* () {
        const tokens = Array.from({ length: ops }, () => Fixtures.token())
        raw.db.transaction(() => {
          for (const t of tokens) raw.insertToken.run(tokenRow(t))
        })()
        return yield* timed(
          ops,
          Effect.sync(() => {
            for (const t of tokens)
              if (raw.select.get(t.kind, t.tokenHash) === undefined) throw new Error("missing")
          })
        )
      }),
    adapter: (ops: number) =>
      Effect.gen(function* () {
        const store = yield* TokenStore.TokenStore
        const tokens = Array.from({ length: ops }, () => Fixtures.token())
        for (let i = 0; i < tokens.length; i += 500) yield* store.insert(tokens.slice(i, i + 500))
        return yield* timed(
          ops,
          Effect.gen(function* () {
            for (const t of tokens) yield* store.find(t.kind, t.tokenHash)
          })
        )
      })
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US").padStart(10)

const main = Effect.gen(function* () {
  console.log(
    `node ${process.version}, SQLite ${new BetterSqlite3(":memory:").prepare("SELECT sqlite_version()").pluck().get()}`
  )
  console.log(`files in ${dir}; best of ${rounds} rounds, raw and adapter alternating\n`)
  console.log(
    `${"synchronous".padEnd(12)}${"operation".padEnd(14)}${"raw ops/s".padStart(10)}${"adapter ops/s".padStart(15)}  ratio`
  )
  let missed = 0
  for (const { synchronous, ops } of modes) {
    for (const [name, w] of Object.entries(workloads)) {
      let raw = 0
      let adapter = 0
      for (let round = 0; round < rounds; round++) {
        const r = yield* openRaw(synchronous)
        raw = Math.max(
          raw,
          yield* Effect.ensuring(
            w.raw(r, ops),
            Effect.sync(() => r.db.close())
          )
        )
        const filename = join(dir, `adapter-${files++}.sqlite`)
        adapter = Math.max(
          adapter,
          yield* Effect.scoped(
            Effect.flatMap(Layer.build(SqliteStorage.layer({ filename, synchronous })), (ctx) =>
              Effect.provide(w.adapter(ops), ctx)
            )
          )
        )
      }
      const ratio = adapter / raw
      if (ratio < target && name !== "find-token") missed++
      console.log(
        `${synchronous.padEnd(12)}${name.padEnd(14)}${fmt(raw)}${fmt(adapter).padStart(15)}  ${(ratio * 100).toFixed(0).padStart(4)}%`
      )
    }
  }
  console.log(
    missed === 0
      ? `\nissue-token and consume-code are at or above the ${target * 100}% target in every mode`
      : `\n${missed} write measurement(s) below the ${target * 100}% target`
  )
})

Effect.runPromise(main).catch((e) => {
  console.error(e)
  process.exitCode = 1
})

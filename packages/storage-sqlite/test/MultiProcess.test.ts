/**
 * Single use across OS processes sharing one file, and durability of what a
 * process reported before it was killed (docs/security.md, store invariants D1, D2, D9).
 */
import { type ChildProcess, fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, it } from "@effect/vitest"
import { AuditStore, CodeStore, TokenStore } from "@latchkey/core"
import { SqliteStorage } from "@latchkey/storage-sqlite"
import { Fixtures } from "@latchkey/storage-testkit"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"
import type { Request } from "./fixtures/worker.js"

const worker = fileURLToPath(new URL("./fixtures/worker.ts", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "latchkey-multiprocess-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const start = (args: ReadonlyArray<string>, pipeStdout: boolean): ChildProcess =>
  fork(worker, args, {
    execArgv: ["--conditions=@latchkey/source", "--import", "tsx"],
    stdio: ["ignore", pipeStdout ? "pipe" : "inherit", "inherit", "ipc"]
  })

const nextMessage = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`worker exited with ${code}`))
    child.once("exit", onExit)
    child.once("message", (m) => {
      child.off("exit", onExit)
      resolve(String(m))
    })
  })

const ask = (child: ChildProcess, req: Request): Promise<string> => {
  const answer = nextMessage(child)
  child.send(req)
  return answer
}

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })

const ROUNDS = 100

it.live(
  `two processes racing ${ROUNDS} times on one code and one refresh token: exactly one winner each time`,
  () =>
    Effect.gen(function* () {
      const filename = join(dir, "race.sqlite")
      // Open (and migrate) the file before the workers do.
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const stores = Effect.provide(context)
      const workers = [start(["race", filename], false), start(["race", filename], false)] as const
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const w of workers) w.kill("SIGKILL")
        })
      )
      assert.deepStrictEqual(yield* Effect.promise(() => Promise.all(workers.map(nextMessage))), [
        "ready",
        "ready"
      ])
      const now = Fixtures.baseTime + 1

      for (let round = 0; round < ROUNDS; round++) {
        const code = Fixtures.code()
        yield* stores(Fixtures.insertCode(code))
        const issued = workers.map(() => Fixtures.pair({ familyId: code.familyId }))
        const answers = yield* Effect.promise(() =>
          Promise.all(
            workers.map((w, i) => ask(w, { op: "redeem", hash: code.codeHash, now, tokens: issued[i]! }))
          )
        )
        assert.sameMembers(answers, ["ok", "CodeAlreadyUsed"], `round ${round}: ${answers.join(", ")}`)
        const found = yield* stores(
          Effect.gen(function* () {
            const tokens = yield* TokenStore.TokenStore
            return yield* Effect.forEach(issued, ([access, refresh]) =>
              Effect.zipWith(
                tokens.find("access", access.tokenHash),
                tokens.find("refresh", refresh.tokenHash),
                (a, r) =>
                  Option.isSome(a) && Option.isSome(r)
                    ? "both"
                    : Option.isNone(a) && Option.isNone(r)
                      ? "none"
                      : "partial"
              )
            )
          })
        )
        assert.deepStrictEqual(
          found,
          answers.map((a) => (a === "ok" ? "both" : "none"))
        )
      }

      for (let round = 0; round < ROUNDS; round++) {
        const [access, refresh] = Fixtures.pair()
        yield* stores(Effect.flatMap(TokenStore.TokenStore, (s) => s.insert([access, refresh])))
        const issued = workers.map(() =>
          Fixtures.pair({ familyId: refresh.familyId, parentHash: refresh.tokenHash })
        )
        const answers = yield* Effect.promise(() =>
          Promise.all(
            workers.map((w, i) => ask(w, { op: "rotate", hash: refresh.tokenHash, now, tokens: issued[i]! }))
          )
        )
        assert.sameMembers(answers, ["ok", "RefreshAlreadyRotated"], `round ${round}: ${answers.join(", ")}`)
        // Afterwards the family has exactly one live refresh token: the winner's successor.
        const live = yield* stores(
          Effect.gen(function* () {
            const tokens = yield* TokenStore.TokenStore
            const candidates = [refresh, ...issued.map(([, r]) => r)]
            const found = yield* Effect.forEach(candidates, (t) => tokens.find("refresh", t.tokenHash))
            return found.flatMap((o) =>
              Option.isSome(o) && o.value.rotatedAt === null ? [o.value.tokenHash] : []
            )
          })
        )
        assert.deepStrictEqual(live, [issued[answers.indexOf("ok")]![1].tokenHash])
      }

      for (const w of workers) w.send({ op: "exit" } satisfies Request)
      yield* Effect.promise(() => Promise.all(workers.map(exited)))
    }).pipe(Effect.scoped),
  120_000
)

const readLines = (child: ChildProcess, enough: number): Promise<ReadonlyArray<string>> =>
  new Promise((resolve) => {
    let buffer = ""
    let killed = false
    child.stdout?.setEncoding("utf8")
    child.stdout?.on("data", (chunk: string) => {
      buffer += chunk
      if (!killed && buffer.split("\n").length > enough) {
        killed = true
        child.kill("SIGKILL")
      }
    })
    // No clock cuts the burst short (a loaded machine may start the worker slowly): the worker writes
    // far more than `enough`, and a hung one is ended by the test's timeout and its finalizer.
    child.once("exit", () => {
      // Only complete lines were reported; a cut-off last line is dropped.
      resolve(buffer.split("\n").slice(0, -1))
    })
  })

const crashTests = [
  [
    "burst",
    "SIGKILL mid-burst: every token and code reported issued is there after reopening, integrity_check ok"
  ],
  [
    "grouped",
    "SIGKILL mid-burst of 16 writers sharing group commits: every reported token, its audit event and code are there"
  ]
] as const

for (const [mode, name] of crashTests)
  it.live(
    name,
    () =>
      Effect.gen(function* () {
        const filename = join(dir, `crash-${mode}.sqlite`)
        yield* Effect.provide(Effect.void, SqliteStorage.layer({ filename }))
        let reported = 0
        for (const enough of [40, 300, 700]) {
          const child = start([mode, filename, "5000"], true)
          yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
          const lines = yield* Effect.promise(() => readLines(child, enough))
          assert.isAtLeast(
            lines.length,
            Math.min(enough, 20),
            "the worker reported too little before it was killed"
          )
          reported += lines.length

          const raw = new BetterSqlite3(filename)
          try {
            assert.strictEqual(raw.pragma("integrity_check", { simple: true }), "ok")
          } finally {
            raw.close()
          }
          yield* Effect.provide(
            Effect.gen(function* () {
              const tokens = yield* TokenStore.TokenStore
              const codes = yield* CodeStore.CodeStore
              const audited = new Set(
                (yield* Effect.flatMap(AuditStore.AuditStore, (a) => a.tail({ limit: 1_000_000 }))).map(
                  (e) => e.requestId
                )
              )
              for (const line of lines) {
                const [kind, hash] = line.split(" ") as [string, string]
                if (kind === "T") {
                  assert.isTrue(Option.isSome(yield* tokens.find("access", hash)), `token ${hash} lost`)
                  assert.isTrue(audited.has(hash), `audit event of token ${hash} lost`)
                } else {
                  const code = yield* codes.find(hash)
                  assert.isTrue(
                    Option.isSome(code) && code.value.usedAt !== null,
                    `redeemed code ${hash} lost`
                  )
                }
              }
            }),
            SqliteStorage.layer({ filename })
          )
          // D2 (docs/security.md): no consumed code without its tokens, no issued tokens with an unconsumed code.
          const check = new BetterSqlite3(filename, { readonly: true })
          try {
            const orphans = check
              .prepare(`SELECT
              (SELECT count(*) FROM authorization_codes c WHERE used_at IS NOT NULL
                AND (SELECT count(*) FROM tokens t WHERE t.family_id = c.family_id) <> 2) +
              (SELECT count(*) FROM tokens t WHERE t.parent_hash IS NULL AND t.user_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM authorization_codes c
                  WHERE c.family_id = t.family_id AND c.used_at IS NOT NULL))`)
              .pluck()
              .get()
            assert.strictEqual(orphans, 0)
          } finally {
            check.close()
          }
        }
        assert.isAtLeast(reported, 100)
      }).pipe(Effect.scoped),
    120_000
  )

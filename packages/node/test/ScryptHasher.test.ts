import { readdirSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { PasswordHasher } from "@latchkey/core"
import { Effect } from "effect"
import { ScryptHasher } from "../src/index.js"

const cheap = { N: 1024, r: 8, p: 1 }

describe("ScryptHasher", () => {
  it("uses the self-describing format and verifies the right password only", async () => {
    const hash = await ScryptHasher.hash("correct horse", cheap)
    assert.match(hash, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    assert.isTrue(await ScryptHasher.verify("correct horse", hash))
    assert.isFalse(await ScryptHasher.verify("correct horsf", hash))
    assert.notStrictEqual(await ScryptHasher.hash("correct horse", cheap), hash)
  })

  it("hashes with the default cost", async () => {
    const hash = await ScryptHasher.hash("pw")
    assert.match(hash, /^scrypt\$32768\$8\$3\$/)
    assert.isTrue(await ScryptHasher.verify("pw", hash))
  })

  it("hashes off the event loop: a timer set before a default-cost hash fires before the hash is done", async () => {
    const order: Array<string> = []
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push("timer")
        resolve()
      }, 1)
    )
    // a synchronous hash would finish (and queue its continuation) before any timer could run
    await ScryptHasher.hash("pw").then(() => order.push("hash"))
    await timer
    assert.deepStrictEqual(order, ["timer", "hash"])
  })

  it("provides the core's PasswordHasher: a hash made through the layer verifies through it", async () => {
    const program = Effect.gen(function* () {
      const hasher = yield* PasswordHasher.PasswordHasher
      const stored = yield* hasher.hash("correct horse")
      return {
        stored,
        right: yield* hasher.verify("correct horse", stored),
        wrong: yield* hasher.verify("correct horsf", stored)
      }
    })
    const r = await Effect.runPromise(Effect.provide(program, ScryptHasher.layer(cheap)))
    assert.match(r.stored, /^scrypt\$1024\$8\$1\$/)
    assert.isTrue(r.right)
    assert.isFalse(r.wrong)
  })

  it("verifies a hash made with other parameters than its own (the parameters are in the hash)", async () => {
    const stored = await ScryptHasher.hash("pw", { N: 2048, r: 4, p: 2 })
    const verified = await Effect.runPromise(
      Effect.flatMap(PasswordHasher.PasswordHasher, (h) => h.verify("pw", stored)).pipe(
        Effect.provide(ScryptHasher.layer(cheap))
      )
    )
    assert.isTrue(verified)
  })

  it("treats malformed or absurd hashes as a mismatch", async () => {
    for (const bad of [
      "",
      "bcrypt$2b$10$abc",
      "scrypt$1000$8$1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA",
      "scrypt$2147483648$8$1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA",
      "scrypt$1024$8$1$$aGFzaGhhc2hoYXNoaGFzaA",
      "scrypt$1024$8$1$c2FsdA$aGk"
    ]) {
      assert.isFalse(await ScryptHasher.verify("pw", bad), bad)
    }
  })
})

describe("the hashing threads", () => {
  it("hashes on its own threads at the lowest CPU priority while the event loop keeps its own", async () => {
    await ScryptHasher.hash("pw", cheap)
    const nice = (task: string) =>
      Number(
        readFileSync(task, "utf8")
          .replace(/^.*\) /s, "")
          .split(" ")[16]
      )
    const tasks = readdirSync("/proc/self/task").map((t) => `/proc/self/task/${t}/stat`)
    const niceValues = tasks.map(nice)
    assert.strictEqual(nice(`/proc/self/task/${process.pid}/stat`), 0)
    assert.strictEqual(niceValues.filter((n) => n === 19).length, ScryptHasher.threads)
  })
})

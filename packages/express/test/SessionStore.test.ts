import { assert, describe, it } from "@effect/vitest"
import * as Session from "../src/Session.js"

describe("Session.memoryStore", () => {
  it("a flood of anonymous sessions evicts anonymous ones first, never a signed-in user", () => {
    const store = Session.memoryStore(100)
    const alice = Session.make(1800)
    alice.userId = "u-alice"
    alice.username = "alice"
    store.set(alice)
    const early = Session.make(1800)
    store.set(early)
    for (let i = 0; i < 1000; i++) store.set(Session.make(1800))
    assert.strictEqual(store.get(alice.id)?.userId, "u-alice")
    assert.isUndefined(store.get(early.id))
  })

  it("keeps at most maxSessions, dropping the oldest signed-in session when all are signed in", () => {
    const store = Session.memoryStore(3)
    const ids = Array.from({ length: 4 }, (_, i) => {
      const s = Session.make(1800)
      s.userId = `u${i}`
      store.set(s)
      return s.id
    })
    assert.isUndefined(store.get(ids[0] as string))
    for (const id of ids.slice(1)) assert.isDefined(store.get(id))
  })

  it("forgets an expired session", () => {
    const store = Session.memoryStore()
    const s = Session.make(1800)
    s.expiresAt = Date.now() - 1
    store.set(s)
    assert.isUndefined(store.get(s.id))
  })
})

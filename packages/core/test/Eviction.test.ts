import { assert, describe, it } from "@effect/vitest"
import * as Eviction from "../src/storage/Eviction.js"

const limits = { maxSessions: 3, maxPending: 2, maxPendingBytes: 100 }
const request = (sessionHash: string, txn: string, chars: number) => ({ sessionHash, txn, chars })

describe("Eviction.sessionExcess", () => {
  it("counts the sessions past maxSessions, never below zero", () => {
    assert.strictEqual(Eviction.sessionExcess(5, limits), 2)
    assert.strictEqual(Eviction.sessionExcess(3, limits), 0)
    assert.strictEqual(Eviction.sessionExcess(1, limits), 0)
  })
})

describe("Eviction.sessionsToEvict", () => {
  const others = { anonymous: ["a1", "a2"], signedIn: ["s1", "s2"] }

  it("takes the oldest anonymous sessions first", () => {
    assert.deepStrictEqual(Eviction.sessionsToEvict(1, { idHash: "new", userId: "u" }, others), ["a1"])
    assert.deepStrictEqual(Eviction.sessionsToEvict(2, { idHash: "new", userId: "u" }, others), ["a1", "a2"])
  })

  it("then the saved session if it is anonymous, before any signed-in one", () => {
    assert.deepStrictEqual(Eviction.sessionsToEvict(3, { idHash: "new", userId: null }, others), [
      "a1",
      "a2",
      "new"
    ])
    assert.deepStrictEqual(Eviction.sessionsToEvict(4, { idHash: "new", userId: null }, others), [
      "a1",
      "a2",
      "new",
      "s1"
    ])
  })

  it("signs a signed-in session out only when no anonymous one is left, never the one saved", () => {
    assert.deepStrictEqual(Eviction.sessionsToEvict(3, { idHash: "s1", userId: "u" }, others), [
      "a1",
      "a2",
      "s2"
    ])
  })

  it("never lists the saved session among the others", () => {
    assert.deepStrictEqual(
      Eviction.sessionsToEvict(2, { idHash: "a1", userId: null }, { anonymous: ["a1", "a2"], signedIn: [] }),
      ["a2", "a1"]
    )
  })

  it("evicts nothing without an excess", () => {
    assert.deepStrictEqual(Eviction.sessionsToEvict(0, { idHash: "new", userId: null }, others), [])
  })
})

describe("Eviction.signedInNeeded", () => {
  it("reads no signed-in session while the anonymous ones cover the excess", () => {
    assert.strictEqual(Eviction.signedInNeeded(2, { idHash: "new", userId: "u" }, ["a1", "a2"]), 0)
    assert.strictEqual(Eviction.signedInNeeded(3, { idHash: "new", userId: null }, ["a1", "a2"]), 0)
  })

  it("reads those the anonymous ones and an anonymous saved session leave", () => {
    assert.strictEqual(Eviction.signedInNeeded(4, { idHash: "new", userId: "u" }, ["a1"]), 3)
    assert.strictEqual(Eviction.signedInNeeded(4, { idHash: "new", userId: null }, ["a1"]), 2)
    assert.strictEqual(Eviction.signedInNeeded(2, { idHash: "a1", userId: null }, ["a1"]), 1)
  })
})

describe("Eviction.pendingToTrim", () => {
  it("drops all but the newest maxPending requests of a session", () => {
    assert.deepStrictEqual(Eviction.pendingToTrim(["t1", "t2", "t3", "t4"], limits), ["t1", "t2"])
    assert.deepStrictEqual(Eviction.pendingToTrim(["t1", "t2"], limits), [])
    assert.deepStrictEqual(Eviction.pendingToTrim([], limits), [])
  })
})

describe("Eviction of pending requests past maxPendingBytes", () => {
  it("starts only past the bound", () => {
    assert.isNull(Eviction.startPendingEviction(100, limits))
    assert.deepStrictEqual(Eviction.startPendingEviction(130, limits), { excess: 30, pass: "anonymous" })
  })

  it("takes the oldest requests until the excess is gone, then stops", () => {
    const step = Eviction.stepPendingEviction({ excess: 30, pass: "anonymous" }, [
      request("a", "1", 20),
      request("a", "2", 10),
      request("b", "1", 50)
    ])
    assert.deepStrictEqual(step.evict, [request("a", "1", 20), request("a", "2", 10)])
    assert.isNull(step.next)
  })

  it("moves from the anonymous pass to all requests when the anonymous ones run out", () => {
    const step = Eviction.stepPendingEviction({ excess: 30, pass: "anonymous" }, [request("a", "1", 20)])
    assert.deepStrictEqual(step.evict, [request("a", "1", 20)])
    assert.deepStrictEqual(step.next, { excess: 10, pass: "all" })
    const last = Eviction.stepPendingEviction({ excess: 10, pass: "all" }, [])
    assert.deepStrictEqual(last, { evict: [], next: null })
  })

  it("reads another batch of the same pass after a full one", () => {
    const batch = Array.from({ length: Eviction.candidateBatch }, (_, i) => request("a", `${i}`, 1))
    const step = Eviction.stepPendingEviction(
      { excess: Eviction.candidateBatch + 5, pass: "anonymous" },
      batch
    )
    assert.strictEqual(step.evict.length, Eviction.candidateBatch)
    assert.deepStrictEqual(step.next, { excess: 5, pass: "anonymous" })
  })
})

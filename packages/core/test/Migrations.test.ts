import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as Migrations from "../src/storage/Migrations.js"

const steps: ReadonlyArray<Migrations.Migration> = [
  { version: 1, name: "one", sql: "1" },
  { version: 2, name: "two", sql: "2" },
  { version: 3, name: "three", sql: "3" }
]

describe("Migrations.plan", () => {
  it("a new database (version 0) runs every step, in order", () => {
    expect(Migrations.plan(steps, 0)).toEqual(Either.right(steps))
  })

  it("a database at a version runs only the steps above it", () => {
    expect(Either.map(Migrations.plan(steps, 2), (s) => s.map((m) => m.version))).toEqual(Either.right([3]))
    expect(Migrations.plan(steps, 3)).toEqual(Either.right([]))
  })

  it("a database a newer build wrote is refused with the version found", () => {
    expect(Migrations.latestOf(steps)).toBe(3)
    expect(Migrations.plan(steps, 4)).toEqual(Either.left(4))
  })
})

import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import * as BasicAuth from "../src/oauth/requests/BasicAuth.js"
import * as Form from "../src/oauth/requests/Form.js"

describe("Form.parse", () => {
  it("decodes what URLSearchParams encodes, for any distinct names and values", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.string({ minLength: 1 })), (d) => {
        const parsed = Either.getOrThrow(Form.parse(new URLSearchParams(d).toString()))
        assert.deepStrictEqual({ ...parsed }, { ...d })
      })
    )
  })

  it("refuses a repeated name even when one value is empty", () => {
    assert.isTrue(Either.isLeft(Form.parse("a=1&a=")))
  })

  it("does not let __proto__ pollute the result", () => {
    const p = Either.getOrThrow(Form.parse("__proto__=x&constructor=y"))
    assert.strictEqual(Object.getOwnPropertyDescriptor(p, "__proto__")?.value, "x")
    assert.strictEqual(({} as Record<string, unknown>).x, undefined)
  })
})

describe("BasicAuth", () => {
  it("decode(encode(c)) is c for any key without control characters and any secret", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (appKey, appSecret) => {
        assert.deepStrictEqual(Either.getOrThrow(BasicAuth.decode(BasicAuth.encode({ appKey, appSecret }))), {
          appKey,
          appSecret
        })
      })
    )
  })

  it("splits at the first colon of the raw form", () => {
    const h = `Basic ${btoa("key:sec:ret")}`
    assert.deepStrictEqual(Either.getOrThrow(BasicAuth.decode(h)), { appKey: "key", appSecret: "sec:ret" })
  })

  it("refuses other schemes, bad base64, empty parts and invalid UTF-8", () => {
    for (const h of [
      undefined,
      "Bearer x",
      "Basic",
      "Basic ***",
      `Basic ${btoa(":x")}`,
      `Basic ${btoa("x:")}`,
      `Basic ${btoa("\xff\xfe:x")}`
    ]) {
      assert.isTrue(Either.isLeft(BasicAuth.decode(h)), String(h))
    }
  })
})

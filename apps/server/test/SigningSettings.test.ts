import { assert, describe, it } from "@effect/vitest"
import { Config } from "@latchkey/core"
import * as Env from "../src/Env.js"

describe("signing and JWT settings", () => {
  it("unset: the core's ID token and JWT access token lifetimes, and ES256", () => {
    const env = Env.read({})
    assert.isUndefined(env.idTokenTtl)
    assert.isUndefined(env.jwtAccessTokenTtl)
    assert.strictEqual(env.signingAlgorithm, "ES256")
    assert.strictEqual(Config.defaults.idTokenTtl, 3600)
    assert.strictEqual(Config.defaults.jwtAccessTokenTtl, 300)
  })

  it("reads LATCHKEY_ID_TOKEN_TTL (60 s to 1 day), LATCHKEY_JWT_ACCESS_TOKEN_TTL (1 s to 1 day), the algorithm in any case", () => {
    const env = Env.read({
      LATCHKEY_ID_TOKEN_TTL: "60",
      LATCHKEY_JWT_ACCESS_TOKEN_TTL: "86400",
      LATCHKEY_SIGNING_ALGORITHM: "rs256"
    })
    assert.strictEqual(env.idTokenTtl, 60)
    assert.strictEqual(env.jwtAccessTokenTtl, 86400)
    assert.strictEqual(env.signingAlgorithm, "RS256")
  })

  it("refuses values out of bounds or unknown algorithms, naming the variable", () => {
    const cases: Array<[string, string]> = [
      ["LATCHKEY_ID_TOKEN_TTL", "59"],
      ["LATCHKEY_ID_TOKEN_TTL", "86401"],
      ["LATCHKEY_JWT_ACCESS_TOKEN_TTL", "0"],
      ["LATCHKEY_JWT_ACCESS_TOKEN_TTL", "86401"],
      ["LATCHKEY_SIGNING_ALGORITHM", "HS256"],
      ["LATCHKEY_SIGNING_ALGORITHM", "none"]
    ]
    for (const [name, value] of cases) {
      assert.throws(() => Env.read({ [name]: value }), new RegExp(`^${name} `), `${name}=${value}`)
    }
  })
})

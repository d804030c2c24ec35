import { assert, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { encode } from "../../src/services/internal/base64url.js"

// The reference: btoa, then RFC 4648 §5's alphabet and no padding
const reference = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")

it.effect.prop(
  "base64url encoding equals btoa with the URL alphabet and no padding, for any bytes",
  [FastCheck.uint8Array({ maxLength: 100 })],
  ([bytes]) => Effect.sync(() => assert.strictEqual(encode(bytes), reference(bytes)))
)

/**
 * The signing keys as administrators see them (`Admin.listSigningKeys`, `Admin.rotateSigningKey`):
 * never a private part, every rotation in the audit trail.
 */
import { Effect, Schema } from "effect"
import { SigningAlgorithm } from "../../model/Config.js"
import * as Audit from "../../security/Audit.js"
import * as Keys from "../../signing/Keys.js"
import { invalid } from "./fields.js"

const isAlgorithm = Schema.is(SigningAlgorithm)

/** Every stored signing key, newest first (the first call on an empty store creates the first key). */
export const listSigningKeys = Keys.list

/**
 * Make a new signing key (of `algorithm`, else the configured `signingAlgorithm`) the one new
 * tokens are signed with; the one it replaces (made first on a store that has none) stays
 * published while tokens it signed may live.
 * Recorded as `signing_key_rotated` (detail: the new kid and algorithm). An algorithm other than
 * ES256 or RS256 is `InvalidField` for `algorithm`, and changes nothing.
 */
export const rotateSigningKey = Effect.fn("Admin.rotateSigningKey")(function* (algorithm?: string) {
  if (algorithm !== undefined && !isAlgorithm(algorithm)) {
    return yield* invalid("algorithm", `algorithm must be one of ${SigningAlgorithm.literals.join(", ")}`)
  }
  // The key being replaced exists first, so a rotation on a new store leaves the first key published
  yield* Keys.ensured
  const key = yield* Keys.rotate(algorithm)
  yield* Audit.record("signing_key_rotated", { detail: `kid ${key.kid}, ${key.alg}` })
  return key
})

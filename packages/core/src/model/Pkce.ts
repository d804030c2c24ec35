/**
 * PKCE (RFC 7636): challenge and verifier syntax, and verification.
 */
import { Effect, Schema } from "effect"
import { sha256, timingSafeEqual } from "../services/Digest.js"

/** RFC 7636 §4.1: 43–128 characters of `[A-Za-z0-9-._~]`. */
export const Verifier = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9\-._~]{43,128}$/))

/** Supported challenge methods. */
export const Method = Schema.Literal("S256", "plain")
/** A challenge method. */
export type Method = typeof Method.Type

/** The S256 challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))). */
export const s256 = (verifier: string): Effect.Effect<string> => sha256(verifier)

/** Whether `verifier` answers `challenge` under `method`. */
export const verify = (verifier: string, challenge: string, method: Method): Effect.Effect<boolean> =>
  method === "plain"
    ? Effect.succeed(timingSafeEqual(verifier, challenge))
    : Effect.map(s256(verifier), (c) => timingSafeEqual(c, challenge))

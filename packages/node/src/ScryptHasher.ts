/**
 * A production PasswordHasher over node:crypto scrypt (memory-hard), in a self-describing
 * format: `scrypt$N$r$p$salt$hash` (salt and hash base64url, a 16-byte salt and a 32-byte key),
 * so a hash made with other parameters still verifies after the defaults change. Every hash runs
 * on one of `threads` dedicated worker threads at the lowest CPU priority: never on the event
 * loop, nor in the libuv thread pool that file and DNS work share.
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import { PasswordHasher } from "@latchkey/core"
import { Effect, Layer } from "effect"
import * as HashPool from "./internal/HashPool.js"

/** scrypt cost parameters. */
export interface Params {
  /** CPU/memory cost, a power of two (at most 2^20 when verifying). */
  readonly N: number
  /** Block size (at most 32 when verifying). */
  readonly r: number
  /** Parallelisation (at most 16 when verifying). */
  readonly p: number
}

/**
 * The default cost: N=2^15, r=8, p=3, one of OWASP's equivalent minimums; each hash takes
 * 32 MiB of memory (128 * N * r bytes) and tens of milliseconds of one thread.
 */
export const defaultParams: Params = { N: 2 ** 15, r: 8, p: 3 }

/**
 * How many hashing threads there are: two, or one on a single-core machine. As many password
 * checks run at once; give it to `Throttle.layer`'s `concurrency` (`PasswordChecks`) so the
 * others wait in line instead of queueing on the threads.
 */
export const threads: number = HashPool.size

const keyLength = 32
const saltLength = 16
// Refuse absurd parameters read from a stored hash (a corrupted row must not exhaust memory)
const maxN = 2 ** 20
const maxR = 32
const maxP = 16

// On a low-priority hashing thread (HashPool), never on the event loop or in the libuv pool
const derive = (password: string, salt: Buffer, params: Params, length: number): Promise<Buffer> =>
  HashPool.scrypt(password.normalize("NFC"), salt, length, {
    N: params.N,
    r: params.r,
    p: params.p,
    maxmem: 256 * params.N * params.r + 1024 * 1024
  })

/** Hash a password with fresh salt. */
export const hash = async (password: string, params: Params = defaultParams): Promise<string> => {
  const salt = randomBytes(saltLength)
  const key = await derive(password, salt, params, keyLength)
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64url")}$${key.toString("base64url")}`
}

/** Whether `password` matches a hash made by `hash`; false for anything malformed. */
export const verify = async (password: string, stored: string): Promise<boolean> => {
  const parts = stored.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return false
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number]
  const valid =
    Number.isInteger(N) &&
    N > 1 &&
    N <= maxN &&
    (N & (N - 1)) === 0 &&
    Number.isInteger(r) &&
    r > 0 &&
    r <= maxR &&
    Number.isInteger(p) &&
    p > 0 &&
    p <= maxP
  if (!valid) return false
  const salt = Buffer.from(parts[4] as string, "base64url")
  const expected = Buffer.from(parts[5] as string, "base64url")
  if (salt.length === 0 || expected.length < 16 || expected.length > 64) return false
  const actual = await derive(password, salt, { N, r, p }, expected.length)
  return timingSafeEqual(actual, expected)
}

/**
 * The PasswordHasher service with the given cost (default `defaultParams`): what the sign-in
 * pages and the password grant check passwords with, and `Accounts` hashes new ones with.
 */
export const layer = (params: Params = defaultParams): Layer.Layer<PasswordHasher.PasswordHasher> =>
  Layer.succeed(PasswordHasher.PasswordHasher, {
    hash: (password) => Effect.promise(() => hash(password, params)),
    verify: (password, stored) => Effect.promise(() => verify(password, stored))
  })

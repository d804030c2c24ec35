/**
 * The signing keys as every process sees them: generated on first use, read from the KeyStore
 * and kept for a few seconds (so a rotation made by one process reaches every other within
 * `refreshSeconds`), reread at once (at most once a second) when a token names a key id not
 * seen yet. Private keys are sealed at rest with AES-GCM under a key derived (HKDF-SHA-256)
 * from the server key, and unsealed only in memory.
 */
import { Effect } from "effect"
import * as jose from "jose"
import { Config, type SigningAlgorithm } from "../model/Config.js"
import { isPublished, type SigningKey } from "../model/SigningKey.js"
import { encode, utf8 } from "../services/internal/base64url.js"
import { nowSeconds } from "../services/internal/time.js"
import { ApplicationStore } from "../storage/ApplicationStore.js"
import { KeyStore } from "../storage/KeyStore.js"
import { StorageError } from "../storage/StorageError.js"

/** Longest a process keeps the key set read from the store before reading it again, in seconds. */
export const refreshSeconds = 5

/** A key as loaded: its record and its imported public key (the private one is unsealed on first use). */
export interface LoadedKey {
  readonly record: SigningKey
  readonly publicKey: CryptoKey
}

/** The key set a process holds: every published key, the signing key first. */
export interface KeySet {
  readonly loadedAt: number
  readonly keys: ReadonlyArray<LoadedKey>
}

/** What `list` shows of a key: never its private part. */
export interface KeyInfo {
  readonly kid: string
  readonly alg: SigningAlgorithm
  readonly createdAt: number
  readonly retiredAt: number | null
  readonly publishUntil: number | null
  /** `signing` (signs every new token), `published` (retired, still verifies) or `expired`. */
  readonly status: "signing" | "published" | "expired"
}

const failure = (message: string) => (cause: unknown) =>
  new StorageError({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

// --- sealing ---

/**
 * What a sealed value is, bound into the key that seals it (HKDF's info): a value sealed for one
 * purpose does not open as another's.
 */
export type SealPurpose = "signing key" | "totp secret"

const sealKeys = new Map<string, Promise<CryptoKey>>()
const sealKey = (serverKey: string, purpose: SealPurpose): Promise<CryptoKey> => {
  const cached = `${purpose}\u0000${serverKey}`
  let k = sealKeys.get(cached)
  if (k === undefined) {
    k = crypto.subtle.importKey("raw", utf8(serverKey), "HKDF", false, ["deriveKey"]).then((base) =>
      crypto.subtle.deriveKey(
        {
          name: "HKDF",
          hash: "SHA-256",
          salt: new Uint8Array(0),
          info: utf8(`latchkey ${purpose} seal v1`)
        },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"]
      )
    )
    sealKeys.set(cached, k)
  }
  return k
}

/**
 * Seal `plain` under the server key for `purpose` (a signing key's unless given): base64url of a
 * 12-byte IV and the AES-GCM ciphertext.
 */
export const seal = (
  serverKey: string,
  plain: string,
  purpose: SealPurpose = "signing key"
): Promise<string> =>
  sealKey(serverKey, purpose).then(async (key) => {
    const iv = crypto.getRandomValues(new Uint8Array(12))
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, utf8(plain)))
    const out = new Uint8Array(iv.length + sealed.length)
    out.set(iv)
    out.set(sealed, iv.length)
    return encode(out)
  })

/**
 * Open what `seal` sealed under the same server key for the same purpose; rejects for another
 * key, another purpose or altered bytes.
 */
export const unseal = (
  serverKey: string,
  sealed: string,
  purpose: SealPurpose = "signing key"
): Promise<string> =>
  sealKey(serverKey, purpose).then(async (key) => {
    const bytes = jose.base64url.decode(sealed)
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, 12) },
      key,
      bytes.slice(12)
    )
    return new TextDecoder().decode(plain)
  })

// --- generation ---

/** A fresh key pair of `alg`, as a record to store (its private key sealed), created at `now`. */
export const generate = (
  alg: SigningAlgorithm,
  now: number
): Effect.Effect<SigningKey, StorageError, Config> =>
  Effect.flatMap(Config, ({ serverKey }) =>
    Effect.tryPromise({
      try: async () => {
        const pair = await jose.generateKeyPair(alg, { extractable: true })
        const publicJwk = await jose.exportJWK(pair.publicKey)
        const privateJwk = await jose.exportJWK(pair.privateKey)
        const kid = await jose.calculateJwkThumbprint(publicJwk, "sha256")
        const published = { ...publicJwk, kid, alg, use: "sig" }
        return {
          kid,
          alg,
          publicJwk: JSON.stringify(published),
          sealedPrivateJwk: await seal(serverKey, JSON.stringify({ ...privateJwk, kid, alg })),
          createdAt: now,
          retiredAt: null,
          publishUntil: null
        } satisfies SigningKey
      },
      catch: failure("could not generate a signing key")
    })
  )

// --- the cached key set ---

interface Cache {
  set: KeySet | null
  readonly privateKeys: Map<string, Promise<CryptoKey>>
}

// One cache per store instance: the processes sharing a database share its keys, and two
// stores in one process (two embedded servers, two tests) never see each other's.
const caches = new WeakMap<object, Cache>()
const cacheOf = (store: object): Cache => {
  let c = caches.get(store)
  if (c === undefined) {
    c = { set: null, privateKeys: new Map() }
    caches.set(store, c)
  }
  return c
}

const importPublic = (record: SigningKey) =>
  Effect.tryPromise({
    try: () => jose.importJWK(JSON.parse(record.publicJwk) as jose.JWK, record.alg) as Promise<CryptoKey>,
    catch: failure(`stored signing key ${record.kid} is unreadable`)
  })

/**
 * Read the key set from the store now; with `create`, first store a signing key when there is
 * none. Only signing, the JWKS and the server's start create one: a request naming a key id
 * never writes.
 */
const load = Effect.fnUntraced(function* (cache: Cache, create: boolean) {
  const store = yield* KeyStore
  const now = yield* nowSeconds
  let records = yield* store.list()
  if (create && !records.some((k) => k.retiredAt === null)) {
    const config = yield* Config
    yield* store.initialize(yield* generate(config.signingAlgorithm, now))
    records = yield* store.list()
  }
  const published = records
    .filter((k) => isPublished(k, now))
    .sort((a, b) => (a.retiredAt === null ? -1 : b.retiredAt === null ? 1 : b.createdAt - a.createdAt))
  const keys = yield* Effect.forEach(published, (record) =>
    Effect.map(importPublic(record), (publicKey) => ({ record, publicKey }))
  )
  const set: KeySet = { loadedAt: now, keys }
  cache.set = set
  return set
})

/**
 * The key set, from this process's copy while it is younger than `refreshSeconds`, else read
 * again (an empty set on a store no key was ever created in).
 */
export const current: Effect.Effect<KeySet, StorageError, KeyStore | Config> = Effect.gen(function* () {
  const cache = cacheOf(yield* KeyStore)
  const now = yield* nowSeconds
  if (cache.set !== null && now - cache.set.loadedAt < refreshSeconds) return cache.set
  return yield* load(cache, false)
})

/**
 * The key set with a signing key in it: `current`, creating and storing the first signing key
 * when the store has none (on the server's start, or the first token signed by an embedder).
 */
export const ensured: Effect.Effect<KeySet, StorageError, KeyStore | Config> = Effect.gen(function* () {
  const set = yield* current
  if (set.keys[0]?.record.retiredAt === null) return set
  return yield* load(cacheOf(yield* KeyStore), true)
})

/**
 * The published key with this `kid`: from the copy held, else (when the copy is at least a
 * second old) from the store read again, so a key another process just created is found while
 * a stream of made-up key ids costs at most one read a second.
 */
export const find = (kid: string): Effect.Effect<LoadedKey | undefined, StorageError, KeyStore | Config> =>
  Effect.gen(function* () {
    const cache = cacheOf(yield* KeyStore)
    const set = yield* current
    const held = set.keys.find((k) => k.record.kid === kid)
    if (held !== undefined) return held
    const now = yield* nowSeconds
    if (now <= set.loadedAt) return undefined
    return (yield* load(cache, false)).keys.find((k) => k.record.kid === kid)
  })

/** The signing key and its unsealed private key. */
export const signingKey: Effect.Effect<
  { readonly record: SigningKey; readonly privateKey: CryptoKey },
  StorageError,
  KeyStore | Config
> = Effect.gen(function* () {
  const cache = cacheOf(yield* KeyStore)
  const { serverKey } = yield* Config
  const set = yield* ensured
  const signer = set.keys[0]
  if (signer === undefined || signer.record.retiredAt !== null)
    return yield* Effect.fail(new StorageError({ message: "no signing key is stored" }))
  const record = signer.record
  let privateKey = cache.privateKeys.get(record.kid)
  if (privateKey === undefined) {
    privateKey = unseal(serverKey, record.sealedPrivateJwk).then(
      (jwk) => jose.importJWK(JSON.parse(jwk) as jose.JWK, record.alg) as Promise<CryptoKey>
    )
    // A failed unseal is not kept: the next request tries again
    privateKey.catch(() => cache.privateKeys.delete(record.kid))
    cache.privateKeys.set(record.kid, privateKey)
  }
  const pending = privateKey
  const key = yield* Effect.tryPromise({
    try: () => pending,
    catch: failure(`signing key ${record.kid} cannot be unsealed with this server key`)
  })
  return { record, privateKey: key }
})

/**
 * The JWK Set document (RFC 7517 §5) of the published keys: public parts only. It always holds
 * the signing key (made first if the store has none), so a relying party that fetches it before
 * any token was signed already has the key the first token names.
 */
export const jwks: Effect.Effect<JwkSet, StorageError, KeyStore | Config> = Effect.map(ensured, (set) =>
  documentOf(set)
)

/** The JWK Set document (RFC 7517 §5): the public parts of the published keys. */
export interface JwkSet {
  readonly keys: ReadonlyArray<jose.JWK>
}

// The document of a key set, made once per set loaded (a set is replaced, never changed)
const documents = new WeakMap<KeySet, JwkSet>()
const documentOf = (set: KeySet): JwkSet => {
  let document = documents.get(set)
  if (document === undefined) {
    document = { keys: set.keys.map((k) => JSON.parse(k.record.publicJwk) as jose.JWK) }
    documents.set(set, document)
  }
  return document
}

/**
 * The JWK Set (`jwks`) of the key set this process holds for `store`, as plain code: when that copy
 * is younger than `refreshSeconds` at `now` (epoch seconds) and has a signing key; null when `jwks`
 * must read the store.
 */
export const heldJwks = (store: KeyStore["Type"], now: number): JwkSet | null => {
  const set = cacheOf(store).set
  return set !== null && now - set.loadedAt < refreshSeconds && set.keys[0]?.record.retiredAt === null
    ? documentOf(set)
    : null
}

/**
 * The longest any token signed so far can still live, in seconds: the ID token lifetime, the
 * JWT access token default, and every application's access token override (whatever its format
 * now: it may have issued JWTs before). A retired key stays published this long.
 */
export const longestSignedLifetime: Effect.Effect<number, StorageError, Config | ApplicationStore> =
  Effect.gen(function* () {
    const config = yield* Config
    const apps = yield* Effect.flatMap(ApplicationStore, (s) => s.list())
    return Math.max(
      config.idTokenTtl,
      config.jwtAccessTokenTtl,
      config.accessTokenTtl,
      ...apps.map((a) => a.accessTokenTtl ?? 0)
    )
  })

/**
 * Rotate: a new key of `alg` (default: the configured algorithm) signs every token from now on;
 * the key it replaces stays published until every token it signed has expired. This process
 * uses the new key at once; every other within `refreshSeconds`.
 */
export const rotate = (
  alg?: SigningAlgorithm
): Effect.Effect<KeyInfo, StorageError, KeyStore | Config | ApplicationStore> =>
  Effect.gen(function* () {
    const store = yield* KeyStore
    const config = yield* Config
    const now = yield* nowSeconds
    const next = yield* generate(alg ?? config.signingAlgorithm, now)
    const keep = yield* longestSignedLifetime
    yield* store.rotate(next, now, now + keep)
    yield* load(cacheOf(store), false)
    return info(next, now)
  })

/** What `list` shows of a stored key at `now`. */
export const info = (key: SigningKey, now: number): KeyInfo => ({
  kid: key.kid,
  alg: key.alg,
  createdAt: key.createdAt,
  retiredAt: key.retiredAt,
  publishUntil: key.publishUntil,
  status: key.retiredAt === null ? "signing" : isPublished(key, now) ? "published" : "expired"
})

/** Every stored key, newest first, without private parts (the first call on an empty store creates the first). */
export const list: Effect.Effect<ReadonlyArray<KeyInfo>, StorageError, KeyStore | Config> = Effect.gen(
  function* () {
    yield* ensured
    const now = yield* nowSeconds
    const records = yield* Effect.flatMap(KeyStore, (s) => s.list())
    return records.map((k) => info(k, now))
  }
)

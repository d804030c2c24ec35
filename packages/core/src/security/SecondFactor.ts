/**
 * The authenticator-app second factor (docs/sign-in.md, "Authenticator app"): enrolment, pending
 * until a valid code confirms it; codes at sign-in, each time step once; ten single-use recovery
 * codes, shown once and stored only as keyed digests; wrong codes throttled per user in a key
 * space of their own (`Throttle.factorKeys`). Each change is one store write with its audit event.
 */
import { Effect, Option, Schema } from "effect"
import { Config } from "../model/Config.js"
import type { RateLimited } from "../model/OAuthError.js"
import { isConfirmed, type TotpFactor } from "../model/TotpFactor.js"
import { hmac } from "../services/Digest.js"
import { Entropy } from "../services/Entropy.js"
import { nowSeconds } from "../services/internal/time.js"
import { seal, unseal } from "../signing/Keys.js"
import { FactorStore } from "../storage/FactorStore.js"
import { StorageError } from "../storage/StorageError.js"
import * as Audit from "./Audit.js"
import * as Throttle from "./Throttle.js"
import * as Totp from "./Totp.js"

/** A code or recovery code that is not valid (wrong, used already, or no factor to check it): one answer for all. */
export class WrongCode extends Schema.TaggedError<WrongCode>()("WrongCode", { description: Schema.String }) {
  readonly error = "invalid_grant"
  readonly status = 400
}

/** There is no pending enrolment to confirm (none, confirmed already, replaced or reset). */
export class NoPendingFactor extends Schema.TaggedError<NoPendingFactor>()("NoPendingFactor", {
  description: Schema.String
}) {
  readonly error = "invalid_request"
  readonly status = 400
}

const wrong = () => new WrongCode({ description: "the code is not valid" })

/** Recovery codes given at confirmation. */
export const recoveryCodeCount = 10

/** Characters of a recovery code (base32: 50 bits), shown as two groups of five. */
export const recoveryCodeLength = 10

/** What an enrolment shows the user once: the secret as text and as an `otpauth://` URI. */
export interface Enrolment {
  readonly secret: string
  readonly uri: string
}

/** What the account page shows of a user's second factor. */
export interface Status {
  readonly state: "none" | "pending" | "confirmed"
  readonly recoveryCodesLeft: number
}

/** A checked code at sign-in: the accepted step, or how many recovery codes are left. */
export type Checked = Effect.Effect<
  number,
  WrongCode | RateLimited | StorageError,
  FactorStore | Config | Throttle.ThrottleStore | Throttle.ThrottlePolicy
>

/** Where a code comes from: a browser trusted for the user (its own budget) or not. */
export interface Attempt {
  readonly device?: string | null
}

const failure = (message: string) => (cause: unknown) =>
  new StorageError({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** The secret's bytes, unsealed in memory only. */
const secretOf = (factor: TotpFactor) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    Effect.tryPromise({
      try: () => unseal(serverKey, factor.sealedSecret, "totp secret"),
      catch: failure("stored authenticator secret is unreadable")
    })
  ).pipe(Effect.map((secret) => Totp.fromBase32(secret) ?? new Uint8Array()))

/** A recovery code as typed, normalized: upper case, without spaces or dashes. */
export const normalizeRecoveryCode = (code: string): string => code.toUpperCase().replace(/[\s-]/g, "")

/** The keyed digest a recovery code of `userId` is stored as: HMAC-SHA-256 under the server key. */
export const recoveryDigest = (userId: string, code: string) =>
  Effect.flatMap(Config, ({ serverKey }) =>
    hmac(serverKey, `recovery code\u0000${userId}\u0000${normalizeRecoveryCode(code)}`)
  )

/** A fresh recovery code, `XXXXX-XXXXX`. */
const recoveryCode = Effect.flatMap(Entropy, (e) =>
  Effect.map(e.bytes(7), (bytes) => {
    const text = Totp.base32(bytes).slice(0, recoveryCodeLength)
    return `${text.slice(0, 5)}-${text.slice(5)}`
  })
)

/** The issuer shown in the app: the host of the issuer URL. */
const issuerLabel = (issuer: string): string => {
  try {
    return new URL(issuer).host
  } catch {
    return issuer
  }
}

/**
 * Enrol an authenticator app for the user: a fresh 160-bit secret, stored sealed as their pending
 * enrolment (replacing a pending one), recorded as `mfa_enrolled`. `FactorActive` when theirs is
 * confirmed already (an operator resets it first). `account` is the label the app shows
 * (the username); `issuer` defaults to the host of the issuer URL.
 */
export const enrol = Effect.fn("SecondFactor.enrol")(function* (
  userId: string,
  account: string,
  issuer?: string
) {
  const config = yield* Config
  const secret = Totp.base32(yield* Effect.flatMap(Entropy, (e) => e.bytes(Totp.secretBytes)))
  const sealedSecret = yield* Effect.tryPromise({
    try: () => seal(config.serverKey, secret, "totp secret"),
    catch: failure("could not seal the authenticator secret")
  })
  const factor: TotpFactor = {
    userId,
    sealedSecret,
    createdAt: yield* nowSeconds,
    confirmedAt: null,
    lastStep: null
  }
  const store = yield* FactorStore
  yield* Audit.recordWith(store.enrol(factor), [["mfa_enrolled", { userId }]])
  const uri = Totp.otpauthUri(issuer ?? issuerLabel(config.issuer), account, secret)
  return { secret, uri } satisfies Enrolment
})

/** `check` of a reserved attempt on the user's keys: the keys settled when it succeeds. */
const throttled = <A, E, R>(userId: string, attempt: Attempt, check: Effect.Effect<A, E, R>) => {
  const keys = Throttle.factorKeys(userId, attempt.device ?? null)
  return Effect.zipRight(
    Throttle.reserve(keys),
    Effect.tap(check, () => Throttle.succeeded(keys))
  )
}

/** The step of `code` around now for `factor`, or `WrongCode`. */
const stepOf = (factor: TotpFactor, code: string) =>
  Effect.gen(function* () {
    const step = yield* Totp.matchingStep(
      yield* secretOf(factor),
      code.trim(),
      Totp.stepAt(yield* nowSeconds)
    )
    return step === undefined ? yield* Effect.fail(wrong()) : step
  })

/** A confirmation whose code was right, prepared: the write that confirms, and the recovery codes it stores. */
export interface Confirming {
  /**
   * Store calls only (for `Transaction.atomically`): the factor confirmed, the code's step used and
   * the recovery codes' digests stored, with `mfa_confirmed` (its actor is the `RequestInfo` the
   * write runs with); `NoPendingFactor` when the enrolment was confirmed, replaced or reset since
   * it was read.
   */
  readonly write: Effect.Effect<void, NoPendingFactor | StorageError>
  /** The recovery codes, shown once. */
  readonly codes: ReadonlyArray<string>
}

/**
 * Check a code from the app against the user's pending enrolment (throttled like sign-in codes),
 * prepared: the write that confirms it, for a caller that commits it with a change of its own
 * (a session signed in anew). `confirm` is this, written.
 */
export const confirming = Effect.fn("SecondFactor.confirming")(function* (userId: string, code: string) {
  const store = yield* FactorStore
  const none = new NoPendingFactor({ description: "there is no pending authenticator enrolment" })
  return yield* throttled(
    userId,
    {},
    Effect.gen(function* () {
      const factor = yield* store.find(userId)
      if (Option.isNone(factor) || isConfirmed(factor.value)) return yield* Effect.fail(none)
      const step = yield* stepOf(factor.value, code)
      const codes = yield* Effect.all(Array.from({ length: recoveryCodeCount }, () => recoveryCode))
      const digests = yield* Effect.forEach(codes, (c) => recoveryDigest(userId, c))
      const now = yield* nowSeconds
      const write = Audit.recordWith(store.confirm(userId, factor.value.sealedSecret, step, digests, now), [
        ["mfa_confirmed", { userId }]
      ]).pipe(Effect.catchTag("NotPending", () => Effect.fail(none)))
      return { write, codes } satisfies Confirming
    })
  )
})

/**
 * Confirm the user's pending enrolment with a code from the app (throttled like sign-in codes):
 * in one write the factor is confirmed, the code's step used, and ten recovery codes stored as
 * digests, recorded as `mfa_confirmed`. Answers the recovery codes, shown once.
 */
export const confirm = (userId: string, code: string) =>
  Effect.flatMap(confirming(userId, code), (c) => Effect.as(c.write, c.codes))

/**
 * New recovery codes for the user's confirmed authenticator app: in one write every old one is
 * gone and ten new ones stored as digests, recorded as `mfa_recovery_codes_replaced`. Answers the
 * codes, shown once; `NoFactor` when the user has no confirmed app.
 */
export const newRecoveryCodes = (userId: string) =>
  Effect.gen(function* () {
    const store = yield* FactorStore
    const codes = yield* Effect.all(Array.from({ length: recoveryCodeCount }, () => recoveryCode))
    const digests = yield* Effect.forEach(codes, (c) => recoveryDigest(userId, c))
    yield* Audit.recordWith(store.replaceRecoveryCodes(userId, digests), [
      ["mfa_recovery_codes_replaced", { userId }]
    ])
    return codes
  })

/**
 * The user's pending enrolment as the account page shows it until a code confirms it: the secret
 * (unsealed) and its URI, labelled `account`. None when there is no pending enrolment.
 */
export const pendingEnrolment = (userId: string, account: string) =>
  Effect.gen(function* () {
    const factor = yield* Effect.flatMap(FactorStore, (store) => store.find(userId))
    if (Option.isNone(factor) || isConfirmed(factor.value)) return Option.none<Enrolment>()
    const { issuer } = yield* Config
    const secret = Totp.base32(yield* secretOf(factor.value))
    return Option.some<Enrolment>({ secret, uri: Totp.otpauthUri(issuerLabel(issuer), account, secret) })
  })

/**
 * Check a code at sign-in against the user's confirmed authenticator app: accepted at the
 * current step or one either side, and each step once (a code replayed, or one of a step at or
 * before the last accepted, is wrong). Throttled per user (`Throttle.factorKeys`), a trusted
 * browser on a budget of its own. Answers the accepted step.
 */
export const verify = (userId: string, code: string, attempt: Attempt = {}): Checked =>
  throttled(
    userId,
    attempt,
    Effect.gen(function* () {
      const store = yield* FactorStore
      const factor = yield* store.find(userId)
      if (Option.isNone(factor) || !isConfirmed(factor.value)) return yield* Effect.fail(wrong())
      const step = yield* stepOf(factor.value, code)
      if (!(yield* store.useStep(userId, step))) return yield* Effect.fail(wrong())
      return step
    })
  )

/**
 * Use a recovery code instead of a code at sign-in (throttled like codes): accepted once,
 * recorded as `mfa_recovery_code_used` in the write that uses it up. Answers how many are left.
 */
export const useRecoveryCode = (userId: string, code: string, attempt: Attempt = {}): Checked =>
  throttled(
    userId,
    attempt,
    Effect.gen(function* () {
      const store = yield* FactorStore
      const digest = yield* recoveryDigest(userId, code)
      yield* Audit.recordWith(store.useRecoveryCode(userId, digest), [
        ["mfa_recovery_code_used", { userId }]
      ]).pipe(Effect.catchTag("UnknownRecoveryCode", () => Effect.fail(wrong())))
      return yield* store.recoveryCodesLeft(userId)
    })
  )

/** Whether the user's sign-in asks for a second factor: a confirmed authenticator app. */
export const required = (userId: string): Effect.Effect<boolean, StorageError, FactorStore> =>
  Effect.flatMap(FactorStore, (store) =>
    Effect.map(store.find(userId), (f) => Option.isSome(f) && isConfirmed(f.value))
  )

/** The user's second factor as the account page shows it. */
export const status = (userId: string): Effect.Effect<Status, StorageError, FactorStore> =>
  Effect.flatMap(FactorStore, (store) =>
    Effect.zipWith(store.find(userId), store.recoveryCodesLeft(userId), (f, left) => ({
      state: Option.isNone(f) ? "none" : isConfirmed(f.value) ? "confirmed" : "pending",
      recoveryCodesLeft: left
    }))
  )

/**
 * Remove the user's authenticator app and recovery codes in one write, recorded as `mfa_reset`
 * (detail: whether there was anything to remove); answers whether there was.
 */
export const reset = (userId: string): Effect.Effect<boolean, StorageError, FactorStore> =>
  Effect.flatMap(FactorStore, (store) =>
    Effect.flatMap(store.find(userId), (before) =>
      Audit.recordWith(store.reset(userId), [
        [
          "mfa_reset",
          {
            userId,
            detail: Option.isSome(before) ? "authenticator and recovery codes removed" : "nothing to remove"
          }
        ]
      ])
    )
  )

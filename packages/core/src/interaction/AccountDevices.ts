/**
 * The account page's trusted devices: the user's recorded devices as the page lists them, and the
 * store calls of its two forms, forgetting one device (`forget_device`) or every other browser
 * (`forget_devices`). `AccountPage` runs them with the form's ticket and the session's renewal.
 */
import { Effect, Option } from "effect"
import * as Http from "../http/Http.js"
import { Config } from "../model/Config.js"
import * as Audit from "../security/Audit.js"
import * as Session from "../security/Session.js"
import { hmac } from "../services/Digest.js"
import { nowSeconds } from "../services/internal/time.js"
import { DeviceStore } from "../storage/DeviceStore.js"
import { UserStore } from "../storage/UserStore.js"
import { asUser, cookieOf } from "./Page.js"
import type { ListedDevice, PageRequest } from "./View.js"

/** The handle the page lists a device with: never its cookie's nonce nor the digest the store keys it by. */
export const deviceHandleOf = (idHash: string) =>
  Effect.flatMap(Config, ({ serverKey }) => hmac(`${serverKey}\u0000latchkey-device-handle`, idHash))

/** This browser's trusted device of the user, as its cookie and the account are now. */
export const deviceHere = (req: PageRequest, userId: string) =>
  Effect.gen(function* () {
    const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
    if (Option.isNone(user)) return Option.none<Session.Device>()
    return yield* Session.device(Http.header(req, "cookie") ?? undefined, user.value)
  })

/** The user's recorded devices, the latest sign-in first, this browser's marked. */
export const listedDevices = (userId: string, here: Option.Option<Session.Device>) =>
  Effect.gen(function* () {
    const now = yield* nowSeconds
    const stored = yield* Effect.flatMap(DeviceStore, (d) => d.listOf(userId, now))
    const hereHash = Option.isSome(here) ? here.value.idHash : null
    const listed: Array<ListedDevice> = []
    for (const d of stored) {
      listed.push({
        handle: yield* deviceHandleOf(d.idHash),
        browser: d.browser,
        system: d.system,
        trustedAt: d.trustedAt,
        lastSignInAt: d.lastSignInAt,
        current: d.idHash === hereHash
      })
    }
    return listed
  })

/**
 * The store calls forgetting one of the user's devices, by the handle the page listed it with:
 * its record deleted with `device_forgotten` (actor `user`); none when the handle names none of
 * the user's devices (nothing to change, nothing to record).
 */
export const forgettingOne = (req: PageRequest, userId: string, handle: string) =>
  Effect.gen(function* () {
    const here = yield* deviceHere(req, userId)
    const now = yield* nowSeconds
    const listed = yield* Effect.flatMap(DeviceStore, (d) => d.listOf(userId, now))
    let idHash: string | null = null
    for (const d of listed) if ((yield* deviceHandleOf(d.idHash)) === handle) idHash = d.idHash
    if (idHash === null) return Option.none()
    const detail = Option.isSome(here) && here.value.idHash === idHash ? "this browser" : "another browser"
    const target = idHash
    return Option.some(
      asUser(
        req,
        Audit.recordWith(
          Effect.flatMap(DeviceStore, (d) => d.forget(userId, target)),
          [["device_forgotten", { userId, detail }]]
        )
      )
    )
  })

/**
 * "Forget all other browsers", prepared: the write moves the user's device generation on (every
 * cookie from before records is trusted no longer) and deletes every record but this browser's,
 * with `devices_forgotten`; this browser, when it was trusted with a cookie from before records,
 * is recorded and gets a recorded cookie (the value), and with a recorded one keeps it.
 */
export const forgettingOthers = (req: PageRequest, userId: string) =>
  Effect.gen(function* () {
    const user = yield* Effect.flatMap(UserStore, (users) => users.findById(userId))
    const here = yield* deviceHere(req, userId)
    const keep = Option.isSome(here) ? here.value.idHash : null
    const renewed =
      Option.isSome(here) && keep === null && Option.isSome(user)
        ? Option.some(
            yield* Session.trusting(
              user.value,
              yield* cookieOf(req),
              Http.header(req, "user-agent") ?? undefined
            )
          )
        : Option.none()
    // The generation moved and the other records deleted together: a user gone since records nothing new
    const forget = Effect.zipLeft(
      Effect.flatMap(UserStore, (users) => users.forgetDevices(userId)),
      Effect.flatMap(DeviceStore, (d) => d.forgetOthers(userId, keep))
    )
    const detail = Option.isSome(here) ? "this browser kept" : null
    const write = Effect.flatMap(
      asUser(req, Audit.recordWith(forget, [["devices_forgotten", { userId, detail }]])),
      (generation) =>
        Option.isSome(generation) && Option.isSome(renewed) ? renewed.value.write : Effect.void
    )
    return { write, value: Option.map(renewed, (r) => r.value) }
  })

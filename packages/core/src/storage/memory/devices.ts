/** The memory store of trusted devices. */
import { Effect, Option } from "effect"
import type { DeviceStore, TrustedDevice } from "../DeviceStore.js"
import { StorageError } from "../StorageError.js"
import { forgetDevicesOf, purge, type State } from "./state.js"

/** The latest sign-in first, then by id digest in code unit order. */
export const byLastSignIn = (a: TrustedDevice, b: TrustedDevice): number =>
  b.lastSignInAt - a.lastSignInAt || (a.idHash < b.idHash ? -1 : a.idHash > b.idHash ? 1 : 0)

/** Trusted devices in `state.devices`, by id digest. */
export const deviceStore = (state: State): DeviceStore["Type"] => {
  const { devices } = state
  return {
    insert: (device) =>
      Effect.suspend(() => {
        if (devices.has(device.idHash))
          return Effect.fail(new StorageError({ message: "duplicate trusted device" }))
        devices.set(device.idHash, { ...device })
        return Effect.void
      }),
    find: (idHash, now) =>
      Effect.sync(() => Option.filter(Option.fromNullable(devices.get(idHash)), (d) => d.expiresAt > now)),
    listOf: (userId, now) =>
      Effect.sync(() =>
        [...devices.values()].filter((d) => d.userId === userId && d.expiresAt > now).sort(byLastSignIn)
      ),
    recordSignIn: (userId, idHash, at) =>
      Effect.sync(() => {
        const found = devices.get(idHash)
        if (found?.userId !== userId) return false
        devices.set(idHash, { ...found, lastSignInAt: at })
        return true
      }),
    forget: (userId, idHash) =>
      Effect.sync(() => devices.get(idHash)?.userId === userId && devices.delete(idHash)),
    forgetOthers: (userId, keep) => Effect.sync(() => forgetDevicesOf(state, userId, keep)),
    purgeExpired: (now, limit) => Effect.sync(() => purge(devices, (d) => d.expiresAt <= now, limit))
  }
}

/**
 * The storage contract for `ApplicationStore.webOriginRegistered`, the lookup a CORS preflight
 * makes: an origin some application registered, compared as the exact string, and no longer
 * once the application drops it or is deleted.
 */
import { assert, type Vitest } from "@effect/vitest"
import { ApplicationStore, type Stores } from "@latchkey/core"
import { Effect } from "effect"
import * as F from "../Fixtures.js"

const T = F.baseTime

// A fresh origin per test: the stores are shared by the contract's cases
const freshOrigin = (): string => `https://${F.id("spa").toLowerCase()}.example`

/** Register the cases of the web origin lookup on `it`. */
export const webOriginCases = (it: Vitest.MethodsNonLive<Stores.Stores>): void => {
  it.effect(
    "applications: webOriginRegistered is true only for an origin some application registered, as the exact string",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const origin = freshOrigin()
        const local = `http://127.0.0.1:${5000 + Math.floor(Math.random() * 1000)}`
        assert.isFalse(yield* apps.webOriginRegistered(origin))
        yield* apps.insert(F.application({ webOrigins: [local, origin] }))
        yield* apps.insert(F.application({ webOrigins: [] }))
        assert.isTrue(yield* apps.webOriginRegistered(origin))
        assert.isTrue(yield* apps.webOriginRegistered(local))
        const host = origin.slice("https://".length)
        const lookAlikes = [
          `http://${host}`,
          `${origin}:8443`,
          `${origin}:443`,
          `${origin}/`,
          origin.toUpperCase(),
          `https://${host.toUpperCase()}`,
          origin.slice(0, -1),
          `${origin}.evil`,
          ` ${origin}`,
          `${local}0`,
          local.replace("127.0.0.1", "localhost"),
          `["${origin}"]`,
          `%${origin.slice(1)}`,
          "null",
          ""
        ]
        for (const other of lookAlikes) assert.isFalse(yield* apps.webOriginRegistered(other), other)
      })
  )

  it.effect(
    "applications: an origin is no longer registered once its application drops it or is deleted, and stays while another keeps it",
    () =>
      Effect.gen(function* () {
        const apps = yield* ApplicationStore.ApplicationStore
        const [dropped, deleted, shared] = [freshOrigin(), freshOrigin(), freshOrigin()]
        const a = F.application({ webOrigins: [dropped, shared] })
        const b = F.application({ webOrigins: [deleted, shared] })
        yield* apps.insert(a)
        yield* apps.insert(b)
        yield* apps.update(a.appKey, { webOrigins: [shared] }, F.baseTime)
        assert.isFalse(yield* apps.webOriginRegistered(dropped))
        assert.isTrue(yield* apps.webOriginRegistered(shared))
        assert.isTrue(yield* apps.remove(b.appKey, T))
        assert.isFalse(yield* apps.webOriginRegistered(deleted))
        assert.isTrue(yield* apps.webOriginRegistered(shared), "a still registers it")
        yield* apps.update(a.appKey, { webOrigins: [] }, F.baseTime)
        assert.isFalse(yield* apps.webOriginRegistered(shared))
      })
  )
}

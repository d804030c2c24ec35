import { Effect } from "effect"
import * as jose from "jose"
import type * as Admin from "../../src/admin/Admin.js"
import type { Application } from "../../src/model/Application.js"
import { ApplicationStore } from "../../src/storage/ApplicationStore.js"
import { newApp } from "../fixtures.js"

/** A registered application whose access tokens are JWTs, for `audience` when given. */
export const jwtApp = (input: Partial<Admin.NewApplication> = {}, audience?: string) =>
  Effect.gen(function* () {
    const created = yield* newApp(input)
    const app: Application = {
      ...created.app,
      accessTokenFormat: "jwt",
      ...(audience === undefined ? {} : { accessTokenAudience: audience })
    }
    // Registered again with the format set (nothing was issued to it yet)
    const store = yield* ApplicationStore
    yield* store.remove(app.appKey, 0)
    yield* store.insert(app)
    return { ...created, app }
  })

/** The protected header and claims of a JWT, unverified. */
export const parts = (token: string) => ({
  header: jose.decodeProtectedHeader(token),
  claims: jose.decodeJwt(token)
})

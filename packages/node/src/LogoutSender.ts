/**
 * The core's `LogoutSender` over the global `fetch`: a back-channel logout token POSTed as
 * `application/x-www-form-urlencoded`, with a timeout, following no redirect (OpenID Connect
 * Back-Channel Logout 1.0 §2.5). Whatever happens, it answers a status or null; it never fails.
 */
import { LogoutSender } from "@latchkey/core"
import { Effect, Layer } from "effect"

/** How long one POST may take before it counts as no answer (default 10 seconds). */
export interface Options {
  readonly timeoutMs?: number
}

/** A sender over `fetch` with `options`. */
export const make = (options: Options = {}): LogoutSender.LogoutSender["Type"] => {
  const timeoutMs = options.timeoutMs ?? 10_000
  return {
    send: (uri, logoutToken) =>
      Effect.tryPromise({
        try: async (signal) => {
          const res = await fetch(uri, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
            body: new URLSearchParams({ logout_token: logoutToken }).toString(),
            redirect: "manual",
            signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
          })
          // The body is not read: drop it so the connection is released
          await res.body?.cancel().catch(() => {})
          return { status: res.status }
        },
        catch: () => null
      }).pipe(Effect.orElseSucceed(() => ({ status: null })))
  }
}

/** A layer providing the `fetch` sender. */
export const layer = (options: Options = {}): Layer.Layer<LogoutSender.LogoutSender> =>
  Layer.succeed(LogoutSender.LogoutSender, make(options))

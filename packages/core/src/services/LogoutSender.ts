/**
 * The I/O port of back-channel logout: POST a logout token to an application's back-channel
 * logout URI (OpenID Connect Back-Channel Logout 1.0 §2.5). The runtime provides it (`@latchkey/node`
 * over `fetch`, with a timeout); the core decides what to send, when, and what the answer means.
 */
import { Context, type Effect } from "effect"

/** What an application answered: its HTTP status, or null when there was no answer (network, timeout). */
export interface SendResult {
  readonly status: number | null
}

/** Sends logout tokens. */
export class LogoutSender extends Context.Tag("@latchkey/core/LogoutSender")<
  LogoutSender,
  {
    /**
     * POST `logout_token=<token>` as `application/x-www-form-urlencoded` to `uri`, following no
     * redirect; never fails (a failure to connect or a timeout is a `null` status).
     */
    readonly send: (uri: string, logoutToken: string) => Effect.Effect<SendResult>
  }
>() {}

/** §2.8: a 2xx answer is a delivered logout token; anything else is retried. */
export const delivered = (result: SendResult): boolean =>
  result.status !== null && result.status >= 200 && result.status < 300

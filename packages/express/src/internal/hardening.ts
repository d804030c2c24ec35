/**
 * helmet's work on a response, done once: the `setHeader` and `removeHeader` calls its middleware
 * makes with the given settings (none depends on the request), recorded on a stand-in response and
 * replayed in the same order on each response. Running helmet's middleware chain per response cost
 * about 5 µs; the replay is its dozen header calls.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { RequestHandler } from "express"
import helmet, { type HelmetOptions } from "helmet"

/** One recorded call: a header set to `value`, or removed when `value` is undefined. */
type Step = readonly [name: string, value: string | number | ReadonlyArray<string> | undefined]

/** The header calls helmet makes with `options`, in order. */
export const steps = (options: HelmetOptions): ReadonlyArray<Step> => {
  const recorded: Array<Step> = []
  const stand = {
    setHeader: (name: string, value: string | number | ReadonlyArray<string>) => {
      recorded.push([name, value])
    },
    removeHeader: (name: string) => {
      recorded.push([name, undefined])
    }
  }
  let failure: unknown
  helmet(options)({} as IncomingMessage, stand as unknown as ServerResponse, (e?: unknown) => {
    failure = e
  })
  if (failure !== undefined) throw failure
  return recorded
}

/** A middleware that makes helmet's header calls for `options` on each response. */
export const middleware = (options: HelmetOptions): RequestHandler => {
  const recorded = steps(options)
  return (_req, res, next) => {
    for (const [name, value] of recorded) {
      if (value === undefined) res.removeHeader(name)
      else res.setHeader(name, value)
    }
    next()
  }
}

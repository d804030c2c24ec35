/**
 * A browser for the flows the adapters' tests drive through the core's pages: it keeps the
 * session cookie the answers set and sends it back.
 */
import { Interaction } from "@latchkey/core"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { grantServices } from "./grants.js"

/** The services the pages need besides the stores: the grants' (a hasher that needs no CPU time), quiet logs. */
export const pageServices = Layer.merge(grantServices, Logger.minimumLogLevel(LogLevel.Warning))

/** A browser: sends page requests with its session cookie, keeps the cookie each answer sets. */
export const pageBrowser = () => {
  let cookie: string | undefined
  return (path: string, method: string, query: string, body = "") =>
    Effect.map(
      Interaction.handle({
        method,
        path,
        query,
        headers: {
          ...(cookie === undefined ? {} : { cookie }),
          ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {})
        },
        body,
        remoteAddress: "192.0.2.1",
        basePath: "",
        ownOrigin: "https://auth.example"
      } satisfies Interaction.PageRequest),
      (answer) => {
        if (answer.setCookie !== null) cookie = answer.setCookie.split(";")[0]
        return answer.view
      }
    )
}

/** A form's fields, URL-encoded. */
export const formOf = (fields: Record<string, string>): string => new URLSearchParams(fields).toString()

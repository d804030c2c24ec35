/** Reading raw request bodies with a byte cap, without any body parser. */
import type { IncomingMessage } from "node:http"

/**
 * A body read up to a cap: its text, or `tooLarge` (and no text) when the request declared or
 * carried more than `limit` bytes; the rest of such a body is never read.
 */
export type RawBody =
  | { readonly tooLarge: false; readonly text: string }
  | { readonly tooLarge: true; readonly text: "" }

const tooLarge: RawBody = { tooLarge: true, text: "" }

/** Thrown when a body parser mounted before the router has already consumed the request. */
export class BodyConsumed extends Error {
  constructor() {
    super("the request body was consumed before the Latchkey router (mount it before any body parser)")
  }
}

/**
 * Thrown when the client closed or reset its connection before its body was read: there is
 * nobody to answer and nothing went wrong on the server's side, so it is no error to report.
 */
export class ClientClosed extends Error {
  constructor(options?: ErrorOptions) {
    super("the client closed the connection before the body was read", options)
  }
}

/**
 * Read the body as UTF-8, up to `limit` bytes. Once past the limit the stream is paused and the
 * caller must answer with `Connection: close`. Rejects with `ClientClosed` when the client goes
 * away first, and `BodyConsumed` when a parser was first.
 */
export const readBody = (req: IncomingMessage, limit: number): Promise<RawBody> =>
  new Promise((resolve, reject) => {
    if (req.readableEnded || (req as { body?: unknown }).body !== undefined) {
      reject(new BodyConsumed())
      return
    }
    if (req.destroyed) {
      reject(new ClientClosed())
      return
    }
    const declared = Number(req.headers["content-length"])
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("close", onClose)
    }
    const onData = (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      if (size > limit) {
        cleanup()
        req.pause()
        resolve(tooLarge)
      }
    }
    const onEnd = () => {
      cleanup()
      resolve({ tooLarge: false, text: Buffer.concat(chunks).toString("utf8") })
    }
    // An error of the request stream is the client's connection failing (reset, aborted)
    const onError = (e: unknown) => {
      cleanup()
      reject(new ClientClosed({ cause: e }))
    }
    const onClose = () => {
      cleanup()
      reject(new ClientClosed())
    }
    // A declared length over the cap is refused without reading the body at all
    if (Number.isFinite(declared) && declared > limit) {
      req.pause()
      resolve(tooLarge)
      return
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("close", onClose)
  })

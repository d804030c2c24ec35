/** Reading raw request bodies with a byte cap, without any body parser. */
import type { IncomingMessage } from "node:http"

/** A body read up to a cap: `truncated` when the request carried more than `limit` bytes. */
export interface RawBody {
  readonly text: string
  readonly truncated: boolean
}

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
 * Read at most `limit + 1` bytes of the body as UTF-8. Once past the limit the
 * stream is paused and the caller must answer with `Connection: close`. Rejects with
 * `ClientClosed` when the client goes away first, and `BodyConsumed` when a parser was first.
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
        resolve({
          text: Buffer.concat(chunks)
            .subarray(0, limit + 1)
            .toString("utf8"),
          truncated: true
        })
      }
    }
    const onEnd = () => {
      cleanup()
      resolve({ text: Buffer.concat(chunks).toString("utf8"), truncated: false })
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
      resolve({ text: "\u0000".repeat(limit + 1), truncated: true })
      return
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("close", onClose)
  })

/** Whether a content type is `application/x-www-form-urlencoded` (optionally with charset UTF-8). */
export const isFormContentType = (type: string | undefined): boolean => {
  const [mime, ...rest] = (type ?? "")
    .toLowerCase()
    .split(";")
    .map((s) => s.trim())
  return (
    mime === "application/x-www-form-urlencoded" &&
    rest.every((p) => !p.startsWith("charset=") || p === "charset=utf-8" || p === 'charset="utf-8"')
  )
}

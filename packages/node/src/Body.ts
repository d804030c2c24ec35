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
 * Read at most `limit + 1` bytes of the body as UTF-8. Once past the limit the
 * stream is paused and the caller must answer with `Connection: close`.
 */
export const readBody = (req: IncomingMessage, limit: number): Promise<RawBody> =>
  new Promise((resolve, reject) => {
    if (req.readableEnded || (req as { body?: unknown }).body !== undefined) {
      reject(new BodyConsumed())
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
    const onError = (e: unknown) => {
      cleanup()
      reject(e)
    }
    const onClose = () => {
      cleanup()
      reject(new Error("the client closed the connection before the body was read"))
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

/**
 * Resource-server middleware: require a Bearer access token (RFC 6750) with the
 * given scopes, and expose who it speaks for. The core decides (`Bearer.admit`);
 * this only passes the header in and writes the refusal out.
 */
import { Bearer, Scope } from "@latchkey/core"
import { NodeHttp } from "@latchkey/node"
import type { ManagedRuntime } from "effect"
import type { Request, RequestHandler } from "express"

/** Options of `requireBearer`. */
export interface Options {
  /** Scopes the token must carry, comma- or space-separated or as a list (default: none). */
  readonly scope?: string | ReadonlyArray<string>
  /** The realm in `WWW-Authenticate` (default "latchkey"). */
  readonly realm?: string
  /**
   * The `aud` a JWT access token must carry to be accepted here (default: the issuer). An
   * opaque token is looked up in the TokenStore instead and carries no audience.
   */
  readonly audience?: string
}

/**
 * What the runtime must provide to check tokens: the TokenStore and ApplicationStore (opaque
 * tokens), the KeyStore and Config (JWT access tokens, verified locally with the published keys).
 */
export type Requirements = Bearer.Requirements

const principals = new WeakMap<Request, Bearer.Principal>()

/** The principal `requireBearer` accepted for this request. */
export const principal = (req: Request): Bearer.Principal => {
  const p = principals.get(req)
  if (p === undefined) throw new Error("principal(req) is only available after requireBearer")
  return p
}

/**
 * Middleware that lets a request through only with a valid Bearer token carrying
 * every scope in `options.scope`; `principal(req)` then tells who it speaks for. A JWT access
 * token is verified locally (signature, issuer, `typ`, `options.audience`, lifetime), as a
 * remote resource server would: its revocation takes effect at its `exp`.
 */
export const requireBearer = (
  runtime: ManagedRuntime.ManagedRuntime<Requirements, unknown>,
  options: Options = {}
): RequestHandler => {
  const realm = options.realm ?? "latchkey"
  const raw = typeof options.scope === "string" ? options.scope : (options.scope ?? []).join(",")
  const parsed = Scope.parse(raw)
  if (parsed._tag === "Left") throw new TypeError(`requireBearer: ${parsed.left.description}`)
  const required = parsed.right
  return (req, res, next) => {
    // Every value: Node keeps only the first of repeated headers in req.headers
    runtime
      .runPromise(Bearer.admit(req.headersDistinct.authorization ?? [], required, realm, options.audience))
      .then(
        (admitted) => {
          if (admitted._tag === "Right") {
            principals.set(req, admitted.right)
            next()
            return
          }
          NodeHttp.write(res, admitted.left)
        },
        (e: unknown) => next(e)
      )
  }
}

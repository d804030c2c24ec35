/**
 * The JSON endpoints (token, introspection, revocation, metadata) as a fetch-style
 * handler, `(request: Request) => Promise<Response>`, for Deno.serve, Bun.serve,
 * edge workers and Node's global Request/Response: read the body with a cap, hand a
 * plain request to the core's `Http.route`, answer its plain response; and `verifyBearer`, the
 * resource-server check of a Bearer access token. Every rule lives in the core; nothing here
 * needs Node.
 */
import { Bearer, Http, Paths, Scope } from "@latchkey/core"
import { Effect, type ManagedRuntime, Option } from "effect"

/** Options of `handler`. */
export interface Options {
  /** Path the endpoints are mounted under (the issuer URL's path), e.g. `/auth`; default none. */
  readonly prefix?: string
  /** The client's address: fetch has no socket, so take it from the platform or a trusted proxy. */
  readonly address?: (request: Request) => string | undefined
  /** The id of a request (e.g. set by a logger), copied into the core's audit events. */
  readonly requestId?: (request: Request) => string | undefined
  /** Called with unexpected failures; never sent to the client. */
  readonly onError?: (error: unknown) => void
  /** Headers sent with every response under the core's own (default: `hardeningHeaders`). */
  readonly headers?: Readonly<Record<string, string>>
  /** What to answer for a path that is not a JSON endpoint (default: a bare 404). */
  readonly fallback?: (request: Request) => Response | Promise<Response>
}

/**
 * The hardening headers `@latchkey/node` sends (helmet's, with the same settings),
 * written out since helmet needs Node's request and response objects.
 */
export const hardeningHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none';frame-ancestors 'none';form-action 'none';base-uri 'none'",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "origin-agent-cluster": "?1",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-dns-prefetch-control": "off",
  "x-download-options": "noopen",
  "x-frame-options": "DENY",
  "x-permitted-cross-domain-policies": "none",
  "x-xss-protection": "0"
}

/**
 * A body read up to a cap: its text, or `tooLarge` (and no text) when the request declared or
 * carried more than `limit` bytes; the rest of such a body is never read.
 */
export type RawBody =
  | { readonly tooLarge: false; readonly text: string }
  | { readonly tooLarge: true; readonly text: "" }

const tooLarge: RawBody = { tooLarge: true, text: "" }

/**
 * Read a request's body as UTF-8 from its stream, up to `limit` bytes; past them, cancel the
 * stream: a large body is never buffered whole. A declared length over the cap is refused
 * without reading at all.
 */
export const readBody = async (request: Request, limit: number): Promise<RawBody> => {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN)
  if (Number.isFinite(declared) && declared > limit) {
    await request.body?.cancel().catch(() => {})
    return tooLarge
  }
  if (request.body === null) return { tooLarge: false, text: "" }
  const reader = request.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.length
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return tooLarge
    }
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.length
  }
  return { tooLarge: false, text: new TextDecoder().decode(bytes) }
}

/** The headers of a request, lower-case (as fetch's `Headers` are); a repeated one is joined by `, `. */
const headersOf = (request: Request): Record<string, string> => {
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  return headers
}

/** A core response as a fetch `Response`, with `headers` under the core's own. */
export const toResponse = (
  response: Http.HttpResponse,
  headers: Readonly<Record<string, string>> = {},
  method = "GET"
): Response =>
  new Response(method === "HEAD" || response.body === "" ? null : response.body, {
    status: response.status,
    // Object.assign, not a spread: a spread adding names costs several µs per response on V8
    headers: Object.assign({}, headers, response.headers)
  })

const serverError = Http.errorResponse(Http.serverError)

/**
 * A fetch handler for the JSON endpoints. It answers a JSON endpoint path through
 * the core and every other path with `fallback` (a bare 404 by default), so it can be
 * served as it is or in front of another handler.
 */
export const handler = (
  runtime: ManagedRuntime.ManagedRuntime<Http.Requirements, unknown>,
  options: Options = {}
): ((request: Request) => Promise<Response>) => {
  const prefix = (options.prefix ?? "").replace(/\/+$/, "")
  const headers = options.headers ?? hardeningHeaders
  const onError = options.onError ?? (() => {})
  const fallback = options.fallback ?? (() => new Response(null, { status: 404 }))
  const endpoints = new Set(Paths.json.map((p) => `${prefix}${p}`))

  const serve = async (request: Request, path: string, query: string): Promise<Response> => {
    // Bounded and never inflated: the core refuses compressed (415) and oversized (413) bodies.
    const read = Http.carriesBody(request.method) ? await readBody(request, Http.maxBodyBytes) : undefined
    const route = Http.route({
      method: request.method,
      path,
      query,
      // fetch joins a repeated header: the core refuses the joined Authorization as malformed.
      headers: headersOf(request),
      body: read?.text ?? "",
      bodyTooLarge: read?.tooLarge,
      remoteAddress: options.address?.(request),
      requestId: options.requestId?.(request)
    })
    // The path was checked above, so the core has a route for it.
    const effect = Option.getOrElse(route, () => Effect.succeed(serverError))
    const response = await runtime.runPromise(effect)
    // The server closes or drains a connection whose body was left unread, not the handler.
    return toResponse(response, headers, request.method)
  }

  return async (request) => {
    const url = new URL(request.url)
    if (!endpoints.has(url.pathname)) return fallback(request)
    try {
      return await serve(request, url.pathname.slice(prefix.length), url.search.slice(1))
    } catch (e) {
      onError(e)
      return toResponse(serverError, headers)
    }
  }
}

/** Options of `verifyBearer`. */
export interface BearerOptions {
  /** Scopes the token must carry, comma- or space-separated or as a list (default: none). */
  readonly scope?: string | ReadonlyArray<string>
  /** The realm in `WWW-Authenticate` (default "latchkey"). */
  readonly realm?: string
  /**
   * The `aud` a JWT access token must carry to be accepted (default: the issuer). An opaque
   * token is looked up in the TokenStore instead and carries no audience.
   */
  readonly audience?: string
  /** Headers sent with a refusal under the core's own (default: none). */
  readonly headers?: Readonly<Record<string, string>>
  /** Called with unexpected failures (answered 500); never sent to the client. */
  readonly onError?: (error: unknown) => void
}

/**
 * Check a request's `Authorization: Bearer` token (RFC 6750) and that it carries every scope in
 * `options.scope`: who the token speaks for, or the refusal `Response` to send instead (401 with
 * a challenge, 400, 403 `insufficient_scope`, 503 with Retry-After). A JWT access token
 * (RFC 9068) is verified locally with the published keys (issuer, `typ`, `options.audience`,
 * lifetime) without reading the TokenStore, so its revocation takes effect at its `exp`; an
 * opaque one is looked up in the TokenStore. Throws a TypeError for a malformed `options.scope`.
 */
export const verifyBearer = async (
  runtime: ManagedRuntime.ManagedRuntime<Bearer.Requirements, unknown>,
  request: Request,
  options: BearerOptions = {}
): Promise<Bearer.Principal | Response> => {
  const raw = typeof options.scope === "string" ? options.scope : (options.scope ?? []).join(",")
  const required = Scope.parse(raw)
  if (required._tag === "Left") throw new TypeError(`verifyBearer: ${required.left.description}`)
  // fetch joins a repeated header: the core refuses the joined value as malformed
  const authorization = request.headers.get("authorization")
  try {
    const admitted = await runtime.runPromise(
      Bearer.admit(
        authorization === null ? [] : [authorization],
        required.right,
        options.realm,
        options.audience
      )
    )
    return admitted._tag === "Right"
      ? admitted.right
      : toResponse(admitted.left, options.headers, request.method)
  } catch (e) {
    options.onError?.(e)
    return toResponse(serverError, options.headers)
  }
}

/**
 * Response headers as the flat list `writeHead` takes: `[name, value, name, value, ...]`. The
 * headers every response of a handler carries are checked and laid out once (`base`); per response
 * the core's own are appended (`list`). node:http writes such a list as it is, where a merged
 * object (a spread that adds names) costs several µs per response on V8 before a byte is written.
 */

/** The constant headers under a handler's responses, laid out once. */
export interface Base {
  /** Their names and values, flat; the request id header first, its value a placeholder. */
  readonly pairs: ReadonlyArray<string>
  /** Their names, lower-case: a core header of one of these names replaces it. */
  readonly names: ReadonlySet<string>
  /** Whether `pairs` begins with the request id header. */
  readonly id: boolean
}

/** The length header, always the list's last: the body written decides it. */
const contentLength = "content-length"

/**
 * `headers` laid out once, after a request id header named `idHeader` if given (a header of
 * `headers` of the same name replaces it). As `setHeader` would: names are compared without
 * case, a later one replaces an earlier, and a `content-length` is dropped.
 */
export const base = (headers: Readonly<Record<string, string>>, idHeader?: string): Base => {
  const byName = new Map<string, readonly [string, string]>()
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase()
    if (lower === contentLength) continue
    byName.delete(lower)
    byName.set(lower, [name, headers[name] as string])
  }
  const id = idHeader !== undefined && !byName.has(idHeader.toLowerCase())
  const pairs: Array<string> = id ? [idHeader as string, ""] : []
  for (const [name, value] of byName.values()) pairs.push(name, value)
  const names = new Set(byName.keys())
  if (id) names.add((idHeader as string).toLowerCase())
  return { pairs, names, id }
}

/** `base`'s pairs but those whose name `own` sets. */
const under = (b: Base, own: Readonly<Record<string, string>>): Array<string | number> => {
  const replaced = new Set(Object.keys(own).map((name) => name.toLowerCase()))
  const out: Array<string | number> = []
  for (let i = 0; i < b.pairs.length; i += 2) {
    const name = b.pairs[i] as string
    if (!replaced.has(name.toLowerCase())) out.push(name, b.pairs[i + 1] as string)
  }
  return out
}

/**
 * The headers of one response: `b`'s (the request id `id` in its place, or none when undefined),
 * then `own` (the core's, which replace any of `b`'s of the same name), then `content-length`.
 */
export const list = (
  b: Base,
  own: Readonly<Record<string, string>>,
  length: number,
  id: string | undefined
): Array<string | number> => {
  let out: Array<string | number> | undefined
  for (const name in own) {
    if (b.names.has(name.toLowerCase())) {
      out = under(b, own)
      break
    }
  }
  out ??= b.pairs.slice()
  // The id pair leads the list unless the core's headers replaced it
  if (b.id && out[0] === b.pairs[0]) {
    if (id === undefined) out.splice(0, 2)
    else out[1] = id
  }
  for (const name in own) {
    if (name.toLowerCase() !== contentLength) out.push(name, own[name] as string)
  }
  out.push(contentLength, length)
  return out
}

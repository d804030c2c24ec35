/**
 * Named prepared statements: a statement with parameters is sent under a name taken from its
 * text, so each connection parses and plans it once and afterwards only binds and executes it.
 * Statements without parameters (BEGIN, COMMIT, migrations holding several commands) go unnamed,
 * through the simple protocol.
 */
import type { Pool, QueryResult } from "./database.js"

/** Most distinct texts named; past it a statement goes unnamed, so no connection holds more. */
export const maxNamed = 256

const names = new Map<string, string>()

// cyrb53: a 53-bit hash of the text. With the text's length it makes the name, the same in every
// copy of this module that may share a connection, so one name never stands for two texts.
const hash = (text: string): string => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)
}

/** The name `text` is prepared under; undefined once `maxNamed` other texts have one. */
export const nameOf = (text: string): string | undefined => {
  const found = names.get(text)
  if (found !== undefined || names.size >= maxNamed) return found
  const name = `latchkey_${hash(text)}_${text.length.toString(36)}`
  names.set(text, name)
  return name
}

/**
 * `build` with what it built kept: a statement text is built once for each key and is then the
 * same string, whose name `nameOf` finds without hashing it again. At most `maxNamed` keys are
 * kept; past them it is built on every call.
 */
export const cachedTexts = <K, T>(build: (key: K) => T): ((key: K) => T) => {
  const built = new Map<K, T>()
  return (key) => {
    const found = built.get(key)
    if (found !== undefined) return found
    const value = build(key)
    if (built.size < maxNamed) built.set(key, value)
    return value
  }
}

/**
 * Send `text` with `values` on `target` (a pool or a checked-out connection): prepared under its
 * name when `prepare` is on and it has parameters, unnamed otherwise.
 */
export const send = (
  target: Pick<Pool, "query">,
  text: string,
  values: ReadonlyArray<unknown>,
  prepare: boolean
): Promise<QueryResult> => {
  const name = prepare && values.length > 0 ? nameOf(text) : undefined
  return name === undefined
    ? target.query(text, [...values])
    : target.query({ name, text, values: [...values] })
}

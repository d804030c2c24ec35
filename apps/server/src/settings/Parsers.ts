/**
 * The kinds of value an environment variable of the server holds: how a value is read and checked
 * (a refusal names the variable, the value and what is allowed, on one line), and how its default
 * and bounds read in the README's table.
 */
import { isIP } from "node:net"
import proxyaddr from "proxy-addr"

/** A configuration problem, reported to the operator before anything starts. */
export class EnvError extends Error {}

/** One environment variable of the server: how it is read, and what the README says of it. */
export interface Setting<A> {
  /** The value of variable `name`, `raw` as the environment holds it (undefined: unset); throws EnvError. */
  readonly read: (raw: string | undefined, name: string) => A
  /** The default, as the README shows it. */
  readonly defaultText: string
  /** What a value may be, as the README shows it: in place of `{bounds}`, else in parentheses after it. */
  readonly bounds?: string | undefined
  /** What the variable is for, as the README shows it. */
  readonly description: string
}

/** A value for an error message: quoted, and cut to 60 characters. */
export const shown = (raw: string): string => JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw)

/** A default for the README: in code style, or "unset" for none. */
const code = (value: string | number | null | false | undefined): string =>
  value === null || value === false || value === undefined ? "unset" : `\`${value}\``

/** Seconds as the README's bounds show them: `1 s`, `10 minutes`, `30 days`. */
const duration = (seconds: number): string => {
  for (const [size, unit] of [
    [86_400, "day"],
    [3600, "hour"],
    [60, "minute"]
  ] as const) {
    const n = seconds / size
    if (n >= 1 && Number.isInteger(n)) return `${n} ${unit}${n === 1 ? "" : "s"}`
  }
  return `${seconds} s`
}

/**
 * A whole number from `min` to `max`; `fallback` when unset or empty. `defaultText` is the README's
 * default when another layer supplies it (`fallback` undefined); `seconds` shows bounds as durations.
 */
export const whole = <D extends number | undefined>(
  o: { min: number; max: number; fallback: D; defaultText?: string | number; seconds?: boolean },
  description: string
): Setting<number | D> => ({
  read: (raw, name) => {
    if (raw === undefined || raw === "") return o.fallback
    const n = Number(raw)
    if (Number.isInteger(n) && n >= o.min && n <= o.max) return n
    throw new EnvError(
      `${name} must be a whole number between ${o.min} and ${o.max} (got ${JSON.stringify(raw)})`
    )
  },
  defaultText: typeof o.defaultText === "string" ? o.defaultText : code(o.defaultText ?? o.fallback),
  bounds: o.seconds ? `${duration(o.min)} to ${duration(o.max)}` : `${o.min} to ${o.max}`,
  description
})

/**
 * Text, trimmed; `fallback` when blank. `check` returns why a value is refused, the words after
 * the variable's name, or undefined.
 */
export const text = <D extends string | null | false | undefined>(
  o: {
    fallback: D
    defaultText?: string
    bounds?: string
    check?: (value: string, raw: string) => string | undefined
  },
  description: string
): Setting<string | D> => ({
  read: (raw = "", name) => {
    const value = raw.trim()
    if (value === "") return o.fallback
    const refused = o.check?.(value, raw)
    if (refused !== undefined) throw new EnvError(`${name} ${refused}`)
    return value
  },
  defaultText: o.defaultText ?? code(o.fallback),
  bounds: o.bounds,
  description
})

/** One of `choices`, in any case; `fallback` when blank. */
export const oneOf = <C extends string>(
  choices: ReadonlyArray<C>,
  fallback: C,
  description: string
): Setting<C> => {
  const must = choices.length === 2 ? choices.join(" or ") : `one of ${choices.join(", ")}`
  return {
    read: (raw = "", name) => {
      const value = raw.trim().toLowerCase()
      const choice = value === "" ? fallback : choices.find((c) => c.toLowerCase() === value)
      if (choice !== undefined) return choice
      throw new EnvError(`${name} must be ${must} (got ${shown(raw)})`)
    },
    defaultText: code(fallback),
    bounds: `${choices.slice(0, -1).map(code).join(", ")} or ${code(choices.at(-1))}`,
    description
  }
}

/**
 * A secret of at least `min` characters, as given (not trimmed); `fallback` when empty (undefined:
 * required). The refusal says its length, never the secret; `hint` follows what it must be.
 */
export const secret = <D extends null | undefined>(
  o: { min: number; fallback: D; defaultText: string; hint?: string },
  description: string
): Setting<string | Exclude<D, undefined>> => ({
  read: (raw = "", name) => {
    if (raw === "" && o.fallback === null) return o.fallback as Exclude<D, undefined>
    if (raw.length >= o.min) return raw
    const must = o.fallback === null ? "must be at least" : "must be set to at least"
    throw new EnvError(
      `${name} ${must} ${o.min} characters${o.hint ?? ""} (got ${raw.length}; a secret is never shown)`
    )
  },
  defaultText: o.defaultText,
  bounds: `at least ${o.min} characters`,
  description
})

/** What each scope allows: one text, or texts by language tag. */
export type ScopeDescriptions = Readonly<Record<string, string | Readonly<Record<string, string>>>>

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v)

/** Texts by language tag. */
const isTexts = (v: unknown): boolean => isObject(v) && Object.values(v).every((t) => typeof t === "string")

/** A JSON object of texts, or of texts by language tag; `{}` when empty. */
export const scopeDescriptions = (description: string): Setting<ScopeDescriptions> => ({
  read: (raw = "", name) => {
    if (raw === "") return {}
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {}
    if (isObject(parsed) && Object.values(parsed).every((v) => typeof v === "string" || isTexts(v))) {
      return parsed as ScopeDescriptions
    }
    throw new EnvError(
      `${name} must be a JSON object of texts, or of texts by language, e.g. {"profile":"Read your profile"} or {"profile":{"en":"Read your profile","zh-CN":"读取你的资料"}} (got ${shown(raw)})`
    )
  },
  defaultText: "`{}`",
  description
})

const hostName =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

/** Why `value` is no address to listen on (an IP address or a host name), or undefined. */
export const listenAddressProblem = (value: string, raw: string): string | undefined =>
  // A dotted number that is no IPv4 address (1.2.3.999) is no host name either
  isIP(value) !== 0 || (hostName.test(value) && !/^[\d.]+$/.test(value))
    ? undefined
    : `must be an IP address or a host name to listen on, e.g. 127.0.0.1, 0.0.0.0, ::1 or localhost (got ${shown(raw)})`

const proxyNames = new Set(["loopback", "linklocal", "uniquelocal"])

/**
 * Why `value` is not what proxy-addr compiles (Express's "trust proxy" string), or undefined: each
 * item an IP address, a subnet (`10.0.0.0/8`, `10.0.0.0/255.0.0.0`, `fd00::/8`) or one of
 * loopback, linklocal, uniquelocal. A bare number (Express's hop count) is refused: proxy-addr
 * would read it as an IPv4 address (`1` is 0.0.0.1).
 */
export const proxyListProblem = (value: string, raw: string): string | undefined => {
  const refuse = (why: string) =>
    `must be a comma-separated list of the proxies' IP addresses or subnets (10.0.0.1, 10.0.0.0/8, fd00::/8) or loopback, linklocal, uniquelocal (got ${shown(raw)}: ${why})`
  const items = value.split(/ *, */)
  for (const item of items) {
    if (proxyNames.has(item)) continue
    const [ip = "", bits, ...more] = item.split("/")
    if (isIP(ip) === 0 || more.length > 0)
      return refuse(`${JSON.stringify(item)} is not an IP address or subnet`)
    if (bits !== undefined && !/^\d{1,3}$/.test(bits) && isIP(bits) === 0) {
      return refuse(`${JSON.stringify(item)} has an invalid prefix length or netmask`)
    }
  }
  try {
    proxyaddr.compile(items)
  } catch (e) {
    return refuse(e instanceof Error ? e.message : String(e))
  }
  return undefined
}

/** Why `value` is no http(s) URL of an OTLP/HTTP receiver, or undefined. */
export const otlpUrlProblem = (value: string, raw: string): string | undefined =>
  URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol)
    ? undefined
    : `must be an http:// or https:// URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (got ${shown(raw)})`

/** Why `value` is no PostgreSQL URI, or undefined; never repeating it, as it may hold a password. */
export const postgresUrlProblem = (value: string): string | undefined => {
  if (!URL.canParse(value))
    return "must be a PostgreSQL URI, e.g. postgres://user:password@host:5432/latchkey"
  const { protocol } = new URL(value)
  return protocol === "postgres:" || protocol === "postgresql:"
    ? undefined
    : `must start with postgres:// or postgresql:// (got ${protocol}//…); unset it to use SQLite`
}

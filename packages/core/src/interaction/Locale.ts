/**
 * The language of the pages: BCP 47 tags asked for in `ui_locales` (OpenID Connect Core §3.1.2.1:
 * space-separated, in order of preference) or `Accept-Language` (RFC 9110 §12.5.4: q-values),
 * matched against the languages the pages are written in. Pure; the binding holds the texts.
 */
import { Option, Schema } from "effect"
import * as ScopeCatalogue from "../model/ScopeCatalogue.js"

/** A BCP 47 language tag as the pages accept it (`ScopeCatalogue.LanguageTag`, declared with the descriptions it keys). */
export const LanguageTag: typeof ScopeCatalogue.LanguageTag = ScopeCatalogue.LanguageTag

/** Most language tags read from one `ui_locales` value or `Accept-Language` header. */
export const maxPreferences = 16

const isTag = Schema.is(LanguageTag)

interface Parts {
  readonly language: string
  readonly script: string | null
  readonly region: string | null
}

// Chinese regions written in Traditional characters; other Chinese is Simplified
const traditionalRegions: ReadonlySet<string> = new Set(["tw", "hk", "mo"])

/** Language, script and region of a tag, lower-case; a Chinese tag's script follows from its region. */
const parts = (tag: string): Parts => {
  const [language = "", ...rest] = tag.toLowerCase().split("-")
  let script: string | null = null
  let region: string | null = null
  for (const subtag of rest) {
    if (script === null && region === null && /^[a-z]{4}$/.test(subtag)) script = subtag
    else if (region === null && /^(?:[a-z]{2}|\d{3})$/.test(subtag)) region = subtag
    else break
  }
  if (language === "zh" && script === null) {
    script = region !== null && traditionalRegions.has(region) ? "hant" : "hans"
  }
  return { language, script, region }
}

/**
 * The supported tag that serves a reader of `requested`, if any: the same tag, else same language, no conflicting
 * script (`zh`, `zh-Hans`, `zh-CN` and `zh-SG` are Simplified Chinese, `zh-TW` and `zh-Hant` are
 * not), the same region if one is supported, else a supported tag without region, else the first.
 */
export const match = (supported: ReadonlyArray<string>, requested: string): Option.Option<string> => {
  if (!isTag(requested)) return Option.none()
  const exact = supported.find((tag) => tag.toLowerCase() === requested.toLowerCase())
  if (exact !== undefined) return Option.some(exact)
  const want = parts(requested)
  const candidates = supported.filter((tag) => {
    const have = parts(tag)
    return (
      have.language === want.language &&
      (have.script === null || want.script === null || have.script === want.script)
    )
  })
  const sameRegion = candidates.find((tag) => parts(tag).region === want.region)
  const noRegion = candidates.find((tag) => parts(tag).region === null)
  return Option.fromNullable(sameRegion ?? noRegion ?? candidates[0])
}

/** The tags of a `ui_locales` value, in order; malformed ones are dropped. */
export const parseUiLocales = (value: string | null | undefined): ReadonlyArray<string> =>
  (value ?? "")
    .split(" ")
    .filter((tag) => tag !== "" && isTag(tag))
    .slice(0, maxPreferences)

// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
const qvalue = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * The tags of an `Accept-Language` header from most to least preferred (a stable sort by q);
 * tags with q=0, the wildcard `*` and malformed entries are dropped.
 */
export const parseAcceptLanguage = (header: string | null | undefined): ReadonlyArray<string> => {
  const entries: Array<{ readonly tag: string; readonly q: number }> = []
  for (const item of (header ?? "").split(",").slice(0, 4 * maxPreferences)) {
    const [rawTag = "", ...params] = item.split(";").map((p) => p.trim())
    let q = 1
    let valid = isTag(rawTag)
    for (const param of params) {
      const eq = param.indexOf("=")
      if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== "q") continue
      const value = param.slice(eq + 1).trim()
      if (qvalue.test(value)) q = Number(value)
      else valid = false
    }
    if (valid && q > 0) entries.push({ tag: rawTag, q })
  }
  return entries
    .map((e, i) => ({ ...e, i }))
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .slice(0, maxPreferences)
    .map((e) => e.tag)
}

/** The first of `preferences` that a supported tag serves, as that supported tag. */
export const negotiate = (
  supported: ReadonlyArray<string>,
  preferences: ReadonlyArray<string>
): Option.Option<string> => {
  for (const tag of preferences) {
    const found = match(supported, tag)
    if (Option.isSome(found)) return found
  }
  return Option.none()
}

/** What a request says about its reader's languages. */
export interface Preferences {
  /** The tags of the authorize request's `ui_locales`, first choice first. */
  readonly uiLocales: ReadonlyArray<string>
  /** The request's `Accept-Language` header. */
  readonly acceptLanguage: string | null | undefined
}

/**
 * The language of a page: the first supported `ui_locales` tag, else the most preferred
 * supported `Accept-Language` tag, else `fallback`.
 */
export const choose = (
  supported: ReadonlyArray<string>,
  preferences: Preferences,
  fallback: string
): string =>
  Option.getOrElse(
    Option.orElse(negotiate(supported, preferences.uiLocales), () =>
      negotiate(supported, parseAcceptLanguage(preferences.acceptLanguage))
    ),
    () => fallback
  )

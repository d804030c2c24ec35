/**
 * The languages of the pages. To add one, write its catalogue (a `Catalogue` in a file named
 * by its language tag) and add it here.
 */
import type { Catalogue } from "./Catalogue.js"
import { en } from "./en.js"
import { zhCN } from "./zh-CN.js"

/** A catalogue and the parts of its texts, for writing one: published as `Locales`. @public */
export type { Catalogue, Rich, Strong } from "./Catalogue.js"
/** An emphasised part of a catalogue text, for writing one: published as `Locales`. @public */
export { strong } from "./Catalogue.js"

/** Every catalogue, by the language tag it is chosen for; the first is the default. */
export const catalogues: Readonly<Record<string, Catalogue>> = {
  en,
  "zh-CN": zhCN
}

/** The language tags of the pages, the default first. */
export const languages: ReadonlyArray<string> = Object.keys(catalogues)

/** The language the pages fall back to: English. */
export const defaultLanguage = "en"

/** The catalogue of a language tag from `languages`; English for any other. */
export const catalogue = (tag: string): Catalogue =>
  Object.hasOwn(catalogues, tag) ? (catalogues[tag] as Catalogue) : en

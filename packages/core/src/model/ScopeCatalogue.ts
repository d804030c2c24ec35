/**
 * The scope catalogue: the platform's scopes as the operator declares them once, each with what it
 * allows in the pages' languages, whether developers may ask for it and whether asking needs a
 * review (docs/platform.md, Scope catalogue). Pure data and rules; `ScopeStore` keeps the entries.
 */
import { Schema } from "effect"
import { isDisplayText, isPlainText } from "./DisplayText.js"
import { ScopeToken } from "./Scope.js"

/** A BCP 47 language tag as the pages accept it: alphanumeric subtags of 1-8 characters joined by `-`. */
export const LanguageTag = Schema.String.pipe(Schema.pattern(/^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,7}$/))

/** Longest description of a scope in one language, in characters. */
export const maxDescriptionLength = 500

/** Most languages one scope is described in. */
export const maxLanguages = 16

/** What a scope allows in one language: 1-500 characters of plain text fit to show on a page. */
export const Description = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(maxDescriptionLength),
  Schema.filter((s) => isPlainText(s) && isDisplayText(s) && s.trim() === s && s !== "", {
    message: () =>
      "a description must be plain text without invisible formatting characters, and not start or end with spaces"
  })
)

/** What a scope allows, by language tag (`en`, `zh-CN`, ...): one to `maxLanguages` of them. */
export const Descriptions = Schema.Record({ key: LanguageTag, value: Description }).pipe(
  Schema.filter((d) => Object.keys(d).length >= 1 && Object.keys(d).length <= maxLanguages, {
    message: () => `descriptions must name 1-${maxLanguages} languages`
  })
)
/** What a scope allows, by language tag. */
export type Descriptions = typeof Descriptions.Type

/** One scope of the catalogue. Times are epoch seconds. */
export const Entry = Schema.Struct({
  name: ScopeToken,
  descriptions: Descriptions,
  /** Whether developers may request it for their applications. */
  developerRequestable: Schema.Boolean,
  /** Whether an application asking for it needs an operator's review first. */
  needsReview: Schema.Boolean,
  createdAt: Schema.Number,
  updatedAt: Schema.Number
})
/** One scope of the catalogue. */
export type Entry = typeof Entry.Type

/** What may change of an entry; a field left out keeps its value. */
export type Changes = Partial<Pick<Entry, "descriptions" | "developerRequestable" | "needsReview">>

/** An entry with `changes` applied at `now`. */
export const apply = (entry: Entry, changes: Changes, now: number): Entry => ({
  ...entry,
  ...changes,
  updatedAt: now
})

/** What the catalogue says some scopes allow: their descriptions, by scope. */
export type DescribedScopes = Readonly<Record<string, Descriptions>>

/** The descriptions of the scopes of `names` that the catalogue `entries` holds, by scope. */
export const descriptionsOf = (
  entries: ReadonlyArray<Entry>,
  names: ReadonlyArray<string>
): DescribedScopes => {
  const wanted = new Set(names)
  return Object.fromEntries(entries.filter((e) => wanted.has(e.name)).map((e) => [e.name, e.descriptions]))
}

/** Entries in ascending code-unit order of their names, as every store lists them. */
export const byName = (a: Entry, b: Entry): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

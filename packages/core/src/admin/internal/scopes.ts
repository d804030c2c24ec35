/**
 * The scope catalogue as administrators keep it (`Admin`, for the CLI and the admin API): each
 * change checked before any store is asked and recorded in the audit trail in its own write
 * (`scope_created`, `scope_updated`, `scope_deleted`); the seed from the server's scope
 * descriptions at start; and the check an application's scopes pass once the catalogue has entries.
 */
import { Effect, Option, Schema } from "effect"
import * as DisplayText from "../../model/DisplayText.js"
import * as Scope from "../../model/Scope.js"
import * as ScopeCatalogue from "../../model/ScopeCatalogue.js"
import * as Claims from "../../openid/Claims.js"
import * as Audit from "../../security/Audit.js"
import { nowSeconds } from "../../services/internal/time.js"
import { ScopeStore, ScopeTaken } from "../../storage/ScopeStore.js"
import type { StorageError } from "../../storage/StorageError.js"
import { type InvalidField, invalid, plain } from "./fields.js"
import { found, NotFound } from "./users.js"

/** What `scope create` takes: a name, and what it allows by language tag. */
export interface NewScope {
  readonly name: string
  readonly descriptions: Readonly<Record<string, string>>
  /** Whether developers may request it; false by default. */
  readonly developerRequestable?: boolean
  /** Whether asking for it needs an operator's review; true by default. */
  readonly needsReview?: boolean
}

/** What `scope update` may change; a field left out keeps its value, `descriptions` replaces them all. */
export interface ScopePatch {
  readonly descriptions?: Readonly<Record<string, string>>
  readonly developerRequestable?: boolean
  readonly needsReview?: boolean
}

const isToken = Schema.is(Scope.ScopeToken)
const isTag = Schema.is(ScopeCatalogue.LanguageTag)
const isDescription = Schema.is(ScopeCatalogue.Description)

/** A scope name: one scope token (`Scope.ScopeToken`), or `InvalidField` for `name`. */
const checkName = (name: string): Effect.Effect<Scope.ScopeToken, InvalidField> =>
  isToken(name)
    ? Effect.succeed(name)
    : Effect.flatMap(plain("name", name), () =>
        invalid(
          "name",
          "a scope name must be one scope token: 1-128 visible ASCII characters without space, comma, quote or backslash"
        )
      )

/** Why `descriptions` are refused (naming the language, never the text), or null; texts are trimmed first. */
const descriptionsProblem = (descriptions: Readonly<Record<string, string>>): string | null => {
  const tags = Object.keys(descriptions)
  if (tags.length === 0 || tags.length > ScopeCatalogue.maxLanguages) {
    return `descriptions must name 1-${ScopeCatalogue.maxLanguages} languages`
  }
  for (const tag of tags) {
    if (!isTag(tag)) return "descriptions must be keyed by language tags such as en or zh-CN"
    const text = (descriptions[tag] ?? "").trim()
    if (!DisplayText.isPlainText(text)) return `the ${tag} description must not contain control characters`
    if (!DisplayText.isDisplayText(text)) return DisplayText.problem(`the ${tag} description`)
    if (!isDescription(text)) {
      return `the ${tag} description must be 1-${ScopeCatalogue.maxDescriptionLength} characters`
    }
  }
  return null
}

/** Descriptions checked, each text trimmed, languages in code-unit order (as every store returns them). */
const checkDescriptions = (
  descriptions: Readonly<Record<string, string>>
): Effect.Effect<ScopeCatalogue.Descriptions, InvalidField> => {
  const problem = descriptionsProblem(descriptions)
  if (problem !== null) return invalid("descriptions", problem)
  const tags = Object.keys(descriptions).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return Effect.succeed(Object.fromEntries(tags.map((tag) => [tag, (descriptions[tag] ?? "").trim()])))
}

const noScope = (name: string) =>
  new NotFound({ what: "scope", description: `the scope catalogue has no scope ${JSON.stringify(name)}` })

/** A new entry of the catalogue, checked, at `now`. */
const entryOf = (input: NewScope, now: number) =>
  Effect.gen(function* () {
    const entry: ScopeCatalogue.Entry = {
      name: yield* checkName(input.name),
      descriptions: yield* checkDescriptions(input.descriptions),
      developerRequestable: input.developerRequestable ?? false,
      needsReview: input.needsReview ?? true,
      createdAt: now,
      updatedAt: now
    }
    return entry
  })

/**
 * Add a scope to the catalogue; recorded as `scope_created` in the same write. `ScopeTaken`
 * (409) when the catalogue has one of that name, and nothing changes.
 */
export const createScope = Effect.fn("Admin.createScope")(function* (input: NewScope) {
  const entry = yield* entryOf(input, yield* nowSeconds)
  const scopes = yield* ScopeStore
  // Looked up first: a store may keep the events of a write that changed no row
  if (Option.isSome(yield* scopes.find(entry.name))) return yield* new ScopeTaken({ name: entry.name })
  yield* Audit.recordWith(scopes.insert(entry), [["scope_created", { detail: `scope ${entry.name}` }]])
  return entry
})

/**
 * Change a scope of the catalogue; recorded as `scope_updated` (detail: the fields changed) in the
 * same write. A patch that changes nothing writes and records nothing. `NotFound` for no such scope.
 */
export const updateScope = Effect.fn("Admin.updateScope")(function* (name: string, patch: ScopePatch) {
  const current = yield* findScope(name)
  const changes: { -readonly [K in keyof ScopeCatalogue.Changes]: ScopeCatalogue.Changes[K] } = {}
  if (patch.descriptions !== undefined) changes.descriptions = yield* checkDescriptions(patch.descriptions)
  if (patch.developerRequestable !== undefined) changes.developerRequestable = patch.developerRequestable
  if (patch.needsReview !== undefined) changes.needsReview = patch.needsReview
  const fields = [
    ...(changes.descriptions !== undefined ? ["descriptions"] : []),
    ...(changes.developerRequestable !== undefined ? ["developer_requestable"] : []),
    ...(changes.needsReview !== undefined ? ["needs_review"] : [])
  ]
  if (fields.length === 0) return current
  const scopes = yield* ScopeStore
  // Fails inside the write when the scope is gone, so no event is kept for it
  const write = Effect.flatMap(scopes.update(current.name, changes, yield* nowSeconds), (updated) =>
    Option.match(updated, { onNone: () => Effect.fail(noScope(name)), onSome: Effect.succeed })
  )
  return yield* Audit.recordWith(write, [
    ["scope_updated", { detail: `scope ${current.name}: changed ${fields.join(", ")}` }]
  ])
})

/** The scope of this name; `NotFound` when the catalogue has none. */
export const findScope = Effect.fnUntraced(function* (name: string) {
  yield* plain("name", name)
  const entry = yield* Effect.flatMap(ScopeStore, (scopes) => scopes.find(name))
  if (Option.isNone(entry)) return yield* Effect.fail(noScope(name))
  return entry.value
})

/** Every scope of the catalogue, by name. */
export const listScopes: Effect.Effect<
  ReadonlyArray<ScopeCatalogue.Entry>,
  StorageError,
  ScopeStore
> = Effect.flatMap(ScopeStore, (scopes) => scopes.list())

/**
 * Remove a scope from the catalogue; recorded as `scope_deleted` in the same write. Applications
 * that registered it keep it. `NotFound` for no such scope.
 */
export const deleteScope = Effect.fn("Admin.deleteScope")(function* (name: string) {
  // Looked up first: a store may keep the events of a write that changed no row
  yield* findScope(name)
  const scopes = yield* ScopeStore
  yield* Audit.recordWith(found(() => noScope(name))(scopes.remove(name)), [
    ["scope_deleted", { detail: `scope ${name}` }]
  ])
})

/** The OpenID scopes, which the server itself understands: never refused for want of an entry. */
const understood: ReadonlySet<string> = new Set(Claims.scopesSupported)

/**
 * An application's scopes as the catalogue admits them: any, while the catalogue is empty; else
 * each in it (or an OpenID scope), the first that is not refused as `InvalidField` for `scopes`.
 */
export const checkCatalogued = Effect.fnUntraced(function* (scope: Scope.ScopeSet) {
  if (scope.length === 0) return scope
  const entries = yield* Effect.flatMap(ScopeStore, (scopes) => scopes.list())
  if (entries.length === 0) return scope
  const known = new Set<string>(entries.map((e) => e.name))
  const unknown = scope.find((s) => !known.has(s) && !understood.has(s))
  if (unknown === undefined) return scope
  return yield* invalid("scopes", `scope ${JSON.stringify(unknown)} is not in the scope catalogue`)
})

/** What a server's scope descriptions give a scope: one text for every language, or texts by language tag. */
export type SeedDescriptions = Readonly<Record<string, string | Readonly<Record<string, string>>>>

/** What a seed did: the scopes added, and those it could not add, each with why. */
export interface Seeded {
  readonly added: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<{ readonly name: string; readonly problem: string }>
}

/**
 * Add each scope of `seed` the catalogue lacks (one text stands for `en`; an entry already there
 * is never changed), each recorded as `scope_created` (detail: seeded) in its write, with the
 * defaults of `createScope`. A scope another process added meanwhile is left as it is; one
 * whose name or texts the catalogue refuses is skipped, with why.
 */
export const seedScopes = Effect.fn("Admin.seedScopes")(function* (seed: SeedDescriptions) {
  const scopes = yield* ScopeStore
  const have = new Set<string>((yield* scopes.list()).map((e) => e.name))
  const now = yield* nowSeconds
  const added: Array<string> = []
  const skipped: Array<{ readonly name: string; readonly problem: string }> = []
  for (const [name, given] of Object.entries(seed)) {
    if (have.has(name)) continue
    const descriptions = typeof given === "string" ? { en: given } : given
    const entry = yield* Effect.either(entryOf({ name, descriptions }, now))
    if (entry._tag === "Left") {
      skipped.push({ name, problem: entry.left.description })
      continue
    }
    const done = yield* Audit.recordWith(scopes.insert(entry.right), [
      ["scope_created", { detail: `scope ${name}: seeded` }]
    ]).pipe(
      Effect.as(true),
      Effect.catchTag("ScopeTaken", () => Effect.succeed(false))
    )
    if (done) added.push(name)
  }
  return { added, skipped } satisfies Seeded
})

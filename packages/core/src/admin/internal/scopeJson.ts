/**
 * The scope catalogue's bodies in the admin API (re-exported by `AdminJson`): what `POST` and
 * `PATCH /admin/v1/scopes` read, and a scope as every endpoint shows it.
 */
import { Schema } from "effect"
import * as ScopeCatalogue from "../../model/ScopeCatalogue.js"
import { Time, time } from "./json.js"

const optional = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

const Descriptions = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  description: `what the scope allows, by language tag (en, zh-CN, ...): 1-${ScopeCatalogue.maxLanguages} languages, each text 1-${ScopeCatalogue.maxDescriptionLength} characters of plain text`
})
const DeveloperRequestable = Schema.Boolean.annotations({
  description: "whether developers may request it for their applications (false by default)"
})
const NeedsReview = Schema.Boolean.annotations({
  description: "whether an application asking for it needs an operator's review first (true by default)"
})

/** `POST /admin/v1/scopes`: a scope of the catalogue. */
export const CreateScope = Schema.Struct({
  name: Schema.String.annotations({
    description: "one scope token: 1-128 visible ASCII characters without space, comma, quote or backslash"
  }),
  descriptions: Descriptions,
  developer_requestable: optional(DeveloperRequestable),
  needs_review: optional(NeedsReview)
}).annotations({ identifier: "CreateScope" })

/** `PATCH /admin/v1/scopes/{scope}`: the fields to change; `descriptions` replaces them all. */
export const UpdateScope = Schema.Struct({
  descriptions: optional(Descriptions),
  developer_requestable: optional(DeveloperRequestable),
  needs_review: optional(NeedsReview)
}).annotations({ identifier: "UpdateScope" })

/** A scope of the catalogue as shown. */
export const ScopeJson = Schema.Struct({
  name: Schema.String,
  descriptions: Schema.Record({ key: Schema.String, value: Schema.String }),
  developer_requestable: Schema.Boolean,
  needs_review: Schema.Boolean,
  created_at: Time,
  updated_at: Time
}).annotations({ identifier: "Scope" })

/** A scope removed from the catalogue. */
export const DeletedScope = Schema.Struct({
  name: Schema.String,
  deleted: Schema.Literal(true)
}).annotations({ identifier: "DeletedScope" })

/** A scope of the catalogue as shown. */
export const scope = (e: ScopeCatalogue.Entry): typeof ScopeJson.Type => ({
  name: e.name,
  descriptions: e.descriptions,
  developer_requestable: e.developerRequestable,
  needs_review: e.needsReview,
  created_at: time(e.createdAt),
  updated_at: time(e.updatedAt)
})

/** The commands on the scope catalogue: `scope create`, `update`, `list`, `delete`. */
import { Admin, AdminJson, type ScopeCatalogue } from "@latchkey/core"
import { type Command, exec, none, one, parse, table, UsageError } from "./common.js"

/** `--description <lang>=<text>` options as texts by language tag; a value without `=` is a usage error. */
const descriptions = (values: ReadonlyArray<string> | undefined): Record<string, string> | undefined => {
  if (values === undefined || values.length === 0) return undefined
  const byTag: Record<string, string> = {}
  for (const value of values) {
    const eq = value.indexOf("=")
    if (eq <= 0)
      throw new UsageError('--description is <language>=<text>, e.g. --description en="Read your orders"')
    const tag = value.slice(0, eq)
    if (Object.hasOwn(byTag, tag)) throw new UsageError(`--description names ${tag} more than once`)
    byTag[tag] = value.slice(eq + 1)
  }
  return byTag
}

/** A flag given as `--<name>` or `--no-<name>`: true, false, or undefined when neither. */
const flag = (values: Readonly<Record<string, unknown>>, name: string): boolean | undefined => {
  if (values[name] === true && values[`no-${name}`] === true) {
    throw new UsageError(`give either --${name} or --no-${name}`)
  }
  return values[name] === true ? true : values[`no-${name}`] === true ? false : undefined
}

const options = {
  description: { type: "string", multiple: true },
  "developer-requestable": { type: "boolean" },
  "no-developer-requestable": { type: "boolean" },
  "needs-review": { type: "boolean" },
  "no-needs-review": { type: "boolean" }
} as const

/** The flags of a scope as `Admin` names them, those given only. */
const flags = (values: Readonly<Record<string, unknown>>): Admin.ScopePatch => {
  const developerRequestable = flag(values, "developer-requestable")
  const needsReview = flag(values, "needs-review")
  return {
    ...(developerRequestable !== undefined ? { developerRequestable } : {}),
    ...(needsReview !== undefined ? { needsReview } : {})
  }
}

/** A scope as a line of text. */
const line = (e: ScopeCatalogue.Entry): string =>
  `${e.name} (developer requestable: ${e.developerRequestable ? "yes" : "no"}, needs review: ${e.needsReview ? "yes" : "no"})`

/** The commands on the scope catalogue. */
export const commands: Record<string, Command> = {
  "scope create": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, options)
      const name = one(positionals, "scope name")
      const texts = descriptions(values.description)
      if (texts === undefined) throw new UsageError("--description <language>=<text> is required")
      const input: Admin.NewScope = { name, descriptions: texts, ...flags(values) }
      const entry = await exec(runtime(), Admin.createScope(input))
      io.stdout(
        values.json === true ? `${JSON.stringify(AdminJson.scope(entry))}\n` : `Added scope ${line(entry)}.\n`
      )
    }
  },
  "scope update": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, options)
      const name = one(positionals, "scope name")
      const texts = descriptions(values.description)
      const entry = await exec(
        runtime(),
        Admin.updateScope(name, { ...(texts !== undefined ? { descriptions: texts } : {}), ...flags(values) })
      )
      io.stdout(
        values.json === true ? `${JSON.stringify(AdminJson.scope(entry))}\n` : `Scope ${line(entry)}.\n`
      )
    }
  },
  "scope list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      none(positionals, "scope list")
      const entries = await exec(runtime(), Admin.listScopes)
      if (values.json === true) io.stdout(`${JSON.stringify(entries.map(AdminJson.scope))}\n`)
      else if (entries.length === 0) io.stdout("No scopes in the catalogue.\n")
      else
        io.stdout(
          table([
            ["SCOPE", "DEVELOPERS", "REVIEW", "DESCRIPTIONS"],
            ...entries.map((e) => [
              e.name,
              e.developerRequestable ? "yes" : "no",
              e.needsReview ? "yes" : "no",
              Object.entries(e.descriptions)
                .map(([tag, text]) => `${tag}: ${JSON.stringify(text)}`)
                .join(", ")
            ])
          ])
        )
    }
  },
  "scope delete": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const name = one(positionals, "scope name")
      await exec(runtime(), Admin.deleteScope(name))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ name, deleted: true })}\n`
          : `Removed scope ${name} from the catalogue; applications that registered it keep it.\n`
      )
    }
  }
}

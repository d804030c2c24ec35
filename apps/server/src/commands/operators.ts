/** The commands on the console's operator accounts: `operator create`, `list`, `delete`, `set-role`, `passwd`. */
import { Admin, AdminJson, type Operator } from "@latchkey/core"
import {
  type Command,
  exec,
  iso,
  none,
  one,
  parse,
  required,
  stdinPassword,
  table,
  UsageError
} from "./common.js"

/** An operator as `--json` prints it: never the password hash. */
const json = (o: Operator.Operator) => ({
  name: o.name,
  role: o.role,
  created_at: AdminJson.time(o.createdAt),
  last_sign_in_at: o.lastSignInAt === null ? null : AdminJson.time(o.lastSignInAt)
})

// never on the command line, where the process list shows it
const password = async (
  values: { readonly "password-stdin"?: boolean | undefined },
  io: Parameters<Command["run"]>[2]
) => {
  if (values["password-stdin"] !== true) throw new UsageError("--password-stdin is required")
  return stdinPassword(io)
}

/** The commands on operators. */
export const commands: Record<string, Command> = {
  "operator create": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        role: { type: "string" },
        "password-stdin": { type: "boolean" }
      })
      const name = one(positionals, "operator name")
      const role = required(values.role, "--role")
      const operator = await exec(runtime(), Admin.createOperator(name, role, await password(values, io)))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(json(operator))}\n`
          : `Created operator ${JSON.stringify(operator.name)} with the role ${operator.role}.\n`
      )
    }
  },
  "operator list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      none(positionals, "operator list")
      const operators = await exec(runtime(), Admin.listOperators)
      if (values.json === true) io.stdout(`${JSON.stringify(operators.map(json))}\n`)
      else if (operators.length === 0) io.stdout("No operators.\n")
      else
        io.stdout(
          table([
            ["NAME", "ROLE", "CREATED", "LAST SIGN-IN"],
            ...operators.map((o) => [
              o.name,
              o.role,
              iso(o.createdAt),
              o.lastSignInAt === null ? "-" : iso(o.lastSignInAt)
            ])
          ])
        )
    }
  },
  "operator set-role": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { role: { type: "string" } })
      const name = one(positionals, "operator name")
      const operator = await exec(runtime(), Admin.setOperatorRole(name, required(values.role, "--role")))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(json(operator))}\n`
          : `Operator ${JSON.stringify(operator.name)} now has the role ${operator.role}.\n`
      )
    }
  },
  "operator passwd": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { "password-stdin": { type: "boolean" } })
      const name = one(positionals, "operator name")
      const operator = await exec(runtime(), Admin.setOperatorPassword(name, await password(values, io)))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(json(operator))}\n`
          : `Set the password of operator ${JSON.stringify(operator.name)}; their console sessions were ended.\n`
      )
    }
  },
  "operator delete": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const operator = await exec(runtime(), Admin.deleteOperator(one(positionals, "operator name")))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ name: operator.name, deleted: true })}\n`
          : `Deleted operator ${JSON.stringify(operator.name)}; their console sessions are gone.\n`
      )
    }
  }
}

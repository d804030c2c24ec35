/** The commands on signing keys: `keys list`, `keys rotate`. */
import { Admin, AdminJson, type Keys } from "@latchkey/core"
import { type Command, exec, iso, none, parse, table } from "./common.js"

const when = (seconds: number | null): string => (seconds === null ? "-" : iso(seconds))

const keyRow = (k: Keys.KeyInfo): Array<string> => [
  k.kid,
  k.alg,
  k.status,
  iso(k.createdAt),
  when(k.retiredAt),
  when(k.publishUntil)
]

/** The commands on signing keys. */
export const commands: Record<string, Command> = {
  "keys list": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      none(positionals, "keys list")
      const keys = await exec(runtime(), Admin.listSigningKeys)
      io.stdout(
        values.json === true
          ? `${JSON.stringify(keys.map(AdminJson.signingKey))}\n`
          : table([["KID", "ALG", "STATUS", "CREATED", "RETIRED", "PUBLISHED UNTIL"], ...keys.map(keyRow)])
      )
    }
  },
  "keys rotate": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { algorithm: { type: "string" } })
      none(positionals, "keys rotate")
      const key = await exec(runtime(), Admin.rotateSigningKey(values.algorithm))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(AdminJson.signingKey(key))}\n`
          : `New signing key ${key.kid} (${key.alg}); the key it replaced stays published while tokens it signed may live.\n`
      )
    }
  }
}

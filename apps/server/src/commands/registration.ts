/**
 * The commands on the initial access tokens of dynamic client registration:
 * `registration-token create`, `registration-token list`, `registration-token revoke`.
 */
import { Admin, AdminJson, type RegistrationStore } from "@latchkey/core"
import { type Command, duration, exec, iso, none, one, parse, table, UsageError } from "./common.js"

/** `--uses`: a whole number of registrations. */
const parseUses = (value: string | undefined): number => {
  if (value === undefined || !/^\d{1,6}$/.test(value)) {
    throw new UsageError(`--uses must be a whole number from 1 to ${Admin.maxInitialAccessTokenUses}`)
  }
  return Number(value)
}

/** `--expires-in`: seconds, or `<n>s|m|h|d`. */
const parseExpiresIn = (value: string | undefined): number => {
  const seconds = value === undefined ? null : /^\d{1,9}$/.test(value) ? Number(value) : duration(value)
  if (seconds === null)
    throw new UsageError("--expires-in must be seconds, or <n>s, <n>m, <n>h or <n>d (e.g. 7d)")
  return seconds
}

const row = (t: RegistrationStore.InitialAccessToken): Array<string> => [
  AdminJson.registrationToken(t).id,
  String(t.usesLeft),
  iso(t.expiresAt),
  iso(t.createdAt)
]

/** The commands on initial access tokens. */
export const commands: Record<string, Command> = {
  "registration-token create": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        uses: { type: "string" },
        "expires-in": { type: "string" }
      })
      none(positionals, "registration-token create")
      const input = { uses: parseUses(values.uses), expiresIn: parseExpiresIn(values["expires-in"]) }
      const { token, record } = await exec(runtime(), Admin.createInitialAccessToken(input))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ ...AdminJson.registrationToken(record), token })}\n`
          : `Initial access token (${record.usesLeft} registrations, until ${iso(record.expiresAt)}): ${token}\n` +
              `Its id is ${AdminJson.registrationToken(record).id}. The token is shown only this once.\n`
      )
    }
  },
  "registration-token list": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      none(positionals, "registration-token list")
      const tokens = await exec(runtime(), Admin.listInitialAccessTokens)
      io.stdout(
        values.json === true
          ? `${JSON.stringify(tokens.map(AdminJson.registrationToken))}\n`
          : table([["ID", "USES LEFT", "EXPIRES", "CREATED"], ...tokens.map(row)])
      )
    }
  },
  "registration-token revoke": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const id = one(positionals, "initial access token id")
      await exec(runtime(), Admin.revokeInitialAccessToken(id))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ id, revoked: true })}\n`
          : `Revoked initial access token ${id}; clients it registered stay.\n`
      )
    }
  }
}

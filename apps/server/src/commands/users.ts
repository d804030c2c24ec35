/** The commands on users: `user create`, `list`, `disable`, `enable`, `set-password`, `delete`, `mfa-reset`. */
import { Admin, AdminJson } from "@latchkey/core"
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
  UsageError,
  userLine
} from "./common.js"

/** The commands on users. */
export const commands: Record<string, Command> = {
  "user create": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        username: { type: "string" },
        password: { type: "string" },
        "password-stdin": { type: "boolean" }
      })
      none(positionals, "user create")
      const username = required(values.username, "--username")
      if (values.password !== undefined && values["password-stdin"] === true) {
        throw new UsageError("give either --password or --password-stdin")
      }
      const password =
        values["password-stdin"] === true
          ? await stdinPassword(io)
          : required(values.password, "--password (or --password-stdin)")
      const user = await exec(runtime(), Admin.createUser(username, password))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ user_id: user.userId, username: user.username })}\n`
          : `Created user ${JSON.stringify(user.username)} (id ${user.userId}).\n`
      )
    }
  },
  "user list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      none(positionals, "user list")
      const users = await exec(runtime(), Admin.listUsers)
      if (values.json === true) io.stdout(`${JSON.stringify(users.map(AdminJson.user))}\n`)
      else if (users.length === 0) io.stdout("No users.\n")
      else
        io.stdout(
          table([
            ["USER ID", "USERNAME", "CREATED", "DISABLED"],
            ...users.map((u) => [
              u.userId,
              u.username,
              iso(u.createdAt),
              u.disabledAt === null || u.disabledAt === undefined ? "-" : iso(u.disabledAt)
            ])
          ])
        )
    }
  },
  "user disable": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const user = await exec(runtime(), Admin.disableUser(one(positionals, "username or user id")))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(AdminJson.user(user))}\n`
          : `Disabled user ${userLine(user)}: they cannot sign in, their tokens are revoked and their sessions ended.\n`
      )
    }
  },
  "user enable": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const user = await exec(runtime(), Admin.enableUser(one(positionals, "username or user id")))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(AdminJson.user(user))}\n`
          : `Enabled user ${userLine(user)}: they can sign in again.\n`
      )
    }
  },
  "user set-password": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {
        "password-stdin": { type: "boolean" },
        "keep-sessions": { type: "boolean" }
      })
      const who = one(positionals, "username or user id")
      // never on the command line, where the process list shows it
      if (values["password-stdin"] !== true) throw new UsageError("--password-stdin is required")
      const password = await stdinPassword(io)
      const keepSessions = values["keep-sessions"] === true
      const user = await exec(runtime(), Admin.setPassword(who, password, { keepSessions }))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(AdminJson.user(user))}\n`
          : `Set the password of user ${userLine(user)}; their sign-in sessions were ${keepSessions ? "kept" : "ended"}.\n`
      )
    }
  },
  "user delete": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const who = one(positionals, "username or user id")
      const user = await exec(runtime(), Admin.deleteUser(who))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ user_id: user.userId, username: user.username, deleted: true })}\n`
          : `Deleted user ${JSON.stringify(user.username)}; their tokens and consents are gone.\n`
      )
    }
  },
  "user mfa-reset": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, {})
      const who = one(positionals, "username or user id")
      const { user, removed } = await exec(runtime(), Admin.resetFactors(who))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ user_id: user.userId, username: user.username, removed })}\n`
          : removed
            ? `Reset the second factor of user ${userLine(user)}: their authenticator app and recovery codes are gone.\n`
            : `User ${userLine(user)} had no second factor to reset.\n`
      )
    }
  }
}

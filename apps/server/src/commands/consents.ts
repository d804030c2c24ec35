/** The commands on tokens and consents: `token revoke`, `consent list`, `consent revoke`. */
import { Admin, AdminJson } from "@latchkey/core"
import { type Command, exec, iso, none, parse, required, table, userLine } from "./common.js"

/** The commands on tokens and consents. */
export const commands: Record<string, Command> = {
  "token revoke": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { app: { type: "string" }, "open-id": { type: "string" } })
      none(positionals, "token revoke")
      const appKey = required(values.app, "--app")
      const openId = required(values["open-id"], "--open-id")
      const revoked = await exec(runtime(), Admin.revokeSubjectTokens(appKey, openId))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ app_key: appKey, open_id: openId, revoked })}\n`
          : `Revoked ${revoked} token${revoked === 1 ? "" : "s"} of open_id ${JSON.stringify(openId)} of ${appKey}.\n`
      )
    }
  },
  "consent list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { user: { type: "string" } })
      none(positionals, "consent list")
      const { consents } = await exec(runtime(), Admin.listConsents(required(values.user, "--user")))
      if (values.json === true) io.stdout(`${JSON.stringify(consents.map(AdminJson.consent))}\n`)
      else if (consents.length === 0) io.stdout("No consents.\n")
      else
        io.stdout(
          table([
            ["APP KEY", "UPDATED", "SCOPES"],
            ...consents.map((c) => [
              c.appKey,
              iso(c.updatedAt),
              c.scope.length === 0 ? "-" : c.scope.join(",")
            ])
          ])
        )
    }
  },
  "consent revoke": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { user: { type: "string" }, app: { type: "string" } })
      none(positionals, "consent revoke")
      const who = required(values.user, "--user")
      const appKey = required(values.app, "--app")
      const user = await exec(runtime(), Admin.withdrawConsent(who, appKey))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ user_id: user.userId, app_key: appKey, withdrawn: true })}\n`
          : `Withdrew the consent of user ${userLine(user)} to ${appKey}; that application's tokens of theirs are revoked.\n`
      )
    }
  }
}

/** The commands on tokens and consents: `token revoke`, `consent list`, `consent revoke`. */
import { Admin, AdminJson } from "@latchkey/core"
import { Effect } from "effect"
import { type Command, exec, none, parse, required, table, userLine } from "./common.js"

/** The commands on tokens and consents. */
export const commands: Record<string, Command> = {
  "token revoke": {
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { app: { type: "string" }, "open-id": { type: "string" } })
      none(positionals, "token revoke")
      const appKey = required(values.app, "--app")
      const openId = required(values["open-id"], "--open-id")
      const r = await exec(
        runtime(),
        Effect.flatMap(Admin.revokeSubjectTokens(appKey, openId), (revoked) =>
          Admin.revokedTokensJson(appKey, openId, revoked)
        )
      )
      const app = r.app_name === null ? appKey : `${appKey} (${JSON.stringify(r.app_name)})`
      io.stdout(
        values.json === true
          ? `${JSON.stringify(r)}\n`
          : `Revoked ${r.revoked} token${r.revoked === 1 ? "" : "s"} of open_id ${JSON.stringify(openId)} of ${app}.\n`
      )
    }
  },
  "consent list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { user: { type: "string" } })
      none(positionals, "consent list")
      const shown = await exec(
        runtime(),
        Effect.flatMap(Admin.listConsents(required(values.user, "--user")), ({ consents }) =>
          Admin.consentsJson(consents)
        )
      )
      if (values.json === true) io.stdout(`${JSON.stringify(shown)}\n`)
      else if (shown.length === 0) io.stdout("No consents.\n")
      else
        io.stdout(
          table([
            ["APP KEY", "APPLICATION", "UPDATED", "SCOPES"],
            ...shown.map((c) => [
              c.app_key,
              c.app_name ?? "-",
              c.updated_at,
              c.scopes.length === 0 ? "-" : c.scopes.join(",")
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
          ? `${JSON.stringify(AdminJson.withdrawnConsent(user, appKey))}\n`
          : `Withdrew the consent of user ${userLine(user)} to ${appKey}; that application's tokens of theirs are revoked.\n`
      )
    }
  }
}

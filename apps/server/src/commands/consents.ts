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
      const { revoked, name } = await exec(
        runtime(),
        Effect.flatMap(Admin.revokeSubjectTokens(appKey, openId), (revoked) =>
          Effect.map(Admin.namesOf([appKey], []), (names) => ({
            revoked,
            name: names.applications.get(appKey) ?? null
          }))
        )
      )
      const app = name === null ? appKey : `${appKey} (${JSON.stringify(name)})`
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ app_key: appKey, app_name: name, open_id: openId, revoked })}\n`
          : `Revoked ${revoked} token${revoked === 1 ? "" : "s"} of open_id ${JSON.stringify(openId)} of ${app}.\n`
      )
    }
  },
  "consent list": {
    readOnly: true,
    run: async (args, runtime, io) => {
      const { values, positionals } = parse(args, { user: { type: "string" } })
      none(positionals, "consent list")
      const { consents, names } = await exec(
        runtime(),
        Effect.flatMap(Admin.listConsents(required(values.user, "--user")), ({ consents }) =>
          Effect.map(
            Admin.namesOf(
              consents.map((c) => c.appKey),
              []
            ),
            (names) => ({ consents, names })
          )
        )
      )
      const shown = consents.map((c) => AdminJson.consent(c, names))
      if (values.json === true) io.stdout(`${JSON.stringify(shown)}\n`)
      else if (consents.length === 0) io.stdout("No consents.\n")
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
          ? `${JSON.stringify({ user_id: user.userId, username: user.username, app_key: appKey, withdrawn: true })}\n`
          : `Withdrew the consent of user ${userLine(user)} to ${appKey}; that application's tokens of theirs are revoked.\n`
      )
    }
  }
}

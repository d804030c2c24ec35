/**
 * The commands of the review of applications and their owners (docs/platform.md): `app approve`,
 * `reject`, `suspend`, `reinstate` and `app owner add|remove|list`.
 */
import { Admin, AdminJson, type Review, ReviewJson } from "@latchkey/core"
import { type Command, exec, nowSeconds, one, parse, UsageError, userLine } from "./common.js"

/** What each action says it did. */
const done: { readonly [A in Review.Action]: string } = {
  approve: "Approved; it is active",
  reject: "Rejected",
  suspend: "Suspended; every token and code it held is revoked",
  reinstate: "Reinstated; it is active (nothing revoked comes back)"
}

/** `app <action> <app-key> [--reason=...]`: the reason is required by reject and suspend, refused by the others. */
const review = (action: Review.Action): Command => ({
  run: async (args, runtime, io) => {
    const { values, positionals } = parse(args, { reason: { type: "string" } })
    const appKey = one(positionals, "App Key")
    const app = await exec(runtime(), Admin.reviewApplication(appKey, action, values.reason))
    io.stdout(
      values.json === true
        ? `${JSON.stringify(AdminJson.application(app, nowSeconds()))}\n`
        : `${done[action]}: application ${appKey}${app.statusReason == null ? "" : ` (reason: ${JSON.stringify(app.statusReason)})`}\n`
    )
  }
})

/** `app owner add|remove <app-key> <user>` and `app owner list <app-key>`. */
const owner: Command = {
  run: async (args, runtime, io) => {
    const { values, positionals } = parse(args, {})
    const [verb, ...rest] = positionals
    if (verb === "list") {
      const appKey = one(rest, "App Key")
      const owners = await exec(runtime(), Admin.listOwners(appKey))
      io.stdout(
        values.json === true
          ? `${JSON.stringify({ app_key: appKey, owners })}\n`
          : owners.length === 0
            ? `Application ${appKey} has no owners.\n`
            : `${owners.join("\n")}\n`
      )
      return
    }
    if ((verb !== "add" && verb !== "remove") || rest.length !== 2) {
      throw new UsageError(
        "usage: app owner add|remove <app-key> <username-or-user-id>, or app owner list <app-key>"
      )
    }
    const [appKey, user] = rest as [string, string]
    if (verb === "add") {
      const { user: target, added } = await exec(runtime(), Admin.addOwner(appKey, user))
      io.stdout(
        values.json === true
          ? `${JSON.stringify(ReviewJson.ownerChange(appKey, target, true, added))}\n`
          : `${userLine(target)} ${added ? "now owns" : "already owned"} application ${appKey}\n`
      )
      return
    }
    const target = await exec(runtime(), Admin.removeOwner(appKey, user))
    io.stdout(
      values.json === true
        ? `${JSON.stringify(ReviewJson.ownerChange(appKey, target, false, true))}\n`
        : `${userLine(target)} no longer owns application ${appKey}\n`
    )
  }
}

/** The commands of the review and ownership of applications. */
export const commands: Record<string, Command> = {
  "app approve": review("approve"),
  "app reject": review("reject"),
  "app suspend": review("suspend"),
  "app reinstate": review("reinstate"),
  "app owner": owner
}

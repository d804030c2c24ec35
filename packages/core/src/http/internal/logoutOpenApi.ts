/**
 * The OpenAPI description of the end session endpoint (OpenID Connect RP-Initiated Logout 1.0):
 * its parameters from `Forms.LogoutRequest`, in the query (GET) or a form body (POST).
 */
import { JSONSchema, Schema } from "effect"
import { LogoutRequest } from "../../interaction/Forms.js"
import { formBody, html, type Json, redirect, retryAfter } from "./openApiJson.js"

const responses = (status: 302 | 303): Json => ({
  200: html("sign out? (when the request does not prove it is about this session), or the signed-out page"),
  ...redirect(status, "signed out: to the registered post_logout_redirect_uri, with state"),
  400: html(
    "an error page (invalid_request): an id_token_hint not of this server, a client_id that is not its audience or unknown, or a post_logout_redirect_uri not registered; nothing changed, no redirect"
  ),
  503: html("storage is unavailable (temporarily_unavailable)", retryAfter)
})

/** The end session endpoint's operations, given the document's Schema builder. */
export const logoutPath = (schema: (s: Schema.Schema.AnyNoContext) => Json): Json => {
  // The fields inline (the named Schema is a reference to the document's components)
  const parameters = JSONSchema.make(Schema.Struct(LogoutRequest.fields)) as {
    readonly properties?: Record<string, unknown>
  }
  return {
    get: {
      operationId: "endSession",
      summary: "End session endpoint (OpenID Connect RP-Initiated Logout 1.0 §2)",
      parameters: Object.entries(parameters.properties ?? {})
        .filter(([name]) => name !== "csrf_token")
        .map(([name, s]) => ({ name, in: "query", required: false, schema: s })),
      responses: responses(302)
    },
    post: {
      operationId: "endSessionForm",
      summary: "The end session request as a form, or the sign-out question's own form (with csrf_token)",
      requestBody: formBody(schema(LogoutRequest), "The logout request's parameters."),
      responses: { ...responses(303), 403: html("csrf_token or the form's origin is not valid") }
    }
  }
}

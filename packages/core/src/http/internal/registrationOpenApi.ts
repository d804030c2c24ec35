/**
 * The OpenAPI description of the client registration endpoint (RFC 7591) and of each client's
 * configuration endpoint at the same path with `?client_id=` (RFC 7592), answered only while
 * `Settings.registration` is on (404 otherwise). Its request body is `ClientMetadata`.
 */
import type { Schema } from "effect"
import { ClientMetadata } from "./clientMetadata.js"
import { errorBody, headerOf, type Json } from "./openApiJson.js"

const noStore = {
  "cache-control": headerOf("cache-control", "no-store"),
  pragma: headerOf("pragma", "no-cache")
}

const strings = { type: "array", items: { type: "string" } }

/** The client information response (RFC 7591 §3.2.1, RFC 7592 §3). */
const information: Json = {
  type: "object",
  required: ["client_id", "registration_access_token", "registration_client_uri", "redirect_uris"],
  properties: {
    client_id: { type: "string", description: "the App Key" },
    client_secret: {
      type: "string",
      description:
        "the App Secret: only when just made (registration, or an update making a public client confidential)"
    },
    client_secret_expires_at: { type: "integer", const: 0 },
    client_id_issued_at: { type: "integer" },
    registration_access_token: {
      type: "string",
      description: "the token that reads, replaces and deletes this registration"
    },
    registration_client_uri: { type: "string", format: "uri" },
    client_name: { type: "string" },
    redirect_uris: strings,
    grant_types: strings,
    response_types: strings,
    token_endpoint_auth_method: {
      type: "string",
      enum: ["client_secret_basic", "client_secret_post", "none"]
    },
    scope: { type: "string", description: "scope tokens separated by spaces" },
    post_logout_redirect_uris: strings,
    backchannel_logout_uri: { type: "string" },
    backchannel_logout_session_required: { type: "boolean" }
  }
}

const answer = (description: string): Json => ({
  description,
  headers: noStore,
  content: { "application/json": { schema: information } }
})

const unauthorized = (what: string): Json => ({
  401: {
    description: `no Bearer token, or ${what} that is not valid (RFC 6750 §3)`,
    headers: { "www-authenticate": { schema: { type: "string" } } },
    content: { "application/json": { schema: errorBody(["invalid_token"]) } }
  }
})

const refused: Json = {
  400: {
    description: "client metadata it cannot register (RFC 7591 §3.2.2); nothing changed",
    content: {
      "application/json": { schema: errorBody(["invalid_redirect_uri", "invalid_client_metadata"]) }
    }
  }
}

const common: Json = {
  404: {
    description: "client registration is not enabled",
    content: { "application/json": { schema: errorBody(["not_found"]) } }
  },
  503: {
    description: "storage is unavailable",
    content: { "application/json": { schema: errorBody(["temporarily_unavailable"]) } }
  }
}

const clientId = [{ name: "client_id", in: "query", required: true, schema: { type: "string" } }]

/** The endpoint's operations, given the document's Schema builder. */
export const registrationPath = (schema: (s: Schema.Schema.AnyNoContext) => Json): Json => {
  const body = (description: string): Json => ({
    required: true,
    description: `${description} Fields it does not know are ignored.`,
    content: { "application/json": { schema: schema(ClientMetadata) } }
  })
  return {
    post: {
      operationId: "registerClient",
      summary: "Register a client with an initial access token (RFC 7591 §3)",
      security: [{ bearer: [] }],
      requestBody: body("The client's metadata."),
      responses: {
        201: answer("registered: its credentials, shown this once"),
        ...refused,
        ...unauthorized("an initial access token"),
        ...common
      }
    },
    get: {
      operationId: "readClient",
      summary: "Read a registration with its registration access token (RFC 7592 §2.1)",
      security: [{ bearer: [] }],
      parameters: clientId,
      responses: {
        200: answer("the registration"),
        ...unauthorized("a registration access token"),
        ...common
      }
    },
    put: {
      operationId: "replaceClient",
      summary: "Replace a registration: omitted fields are deleted (RFC 7592 §2.2)",
      security: [{ bearer: [] }],
      parameters: clientId,
      requestBody: body("The whole metadata, with the client's own client_id."),
      responses: {
        200: answer("the registration as it is now"),
        ...refused,
        ...unauthorized("a registration access token"),
        ...common
      }
    },
    delete: {
      operationId: "deleteClient",
      summary: "Delete a registration: the application and its tokens end (RFC 7592 §2.3)",
      security: [{ bearer: [] }],
      parameters: clientId,
      responses: {
        204: { description: "deleted", headers: noStore },
        ...unauthorized("a registration access token"),
        ...common
      }
    }
  }
}

/**
 * The OpenAPI 3.1 document of the admin API, derived from its endpoint table (`AdminEndpoints`):
 * paths, methods, bodies and answers are the ones `AdminApi` routes by, the error responses the
 * ones it builds (`Http`). Re-exported as `OpenApi.adminDocument`.
 */
import { JSONSchema, type SchemaAST } from "effect"
import * as Http from "../http/Http.js"
import { errorBody, headerOf, headersOf, type Json } from "../http/internal/openApiJson.js"
import * as AdminEndpoints from "./AdminEndpoints.js"
import * as AdminJson from "./AdminJson.js"

/** Turns Schemas into JSON Schemas, their named definitions gathered in one place. */
interface Schemas {
  readonly definitions: Record<string, JSONSchema.JsonSchema7>
  /** A request's schema: unknown fields refused. */
  readonly request: (s: { readonly ast: SchemaAST.AST }) => Json
  /** A response's schema: more fields may come. */
  readonly response: (s: { readonly ast: SchemaAST.AST }) => Json
}

const makeSchemas = (): Schemas => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const schemaWith =
    (additionalPropertiesStrategy: "strict" | "allow") =>
    (s: { readonly ast: SchemaAST.AST }): Json =>
      JSONSchema.fromAST(s.ast, {
        definitions,
        definitionPath: "#/components/schemas/",
        target: "openApi3.1",
        additionalPropertiesStrategy
      }) as unknown as Json
  return { definitions, request: schemaWith("strict"), response: schemaWith("allow") }
}

const noStore = (): Json => headersOf(Http.json(200, null).headers)

const json = (description: string, body: Json, headers: Json = noStore()): Json => ({
  description,
  headers,
  content: { "application/json": { schema: body } }
})

const error = (
  description: string,
  codes: ReadonlyArray<string>,
  headers: Json = noStore(),
  extra: Json = {}
) => json(description, errorBody(codes, extra), headers)

/** The parameters of a query Struct: its properties, none required. */
const queryParameters = (query: AdminEndpoints.Query, schemas: Schemas): ReadonlyArray<Json> => {
  const { properties = {} } = schemas.response(query) as {
    readonly properties?: Record<string, Json>
  }
  return Object.entries(properties).map(([name, { description, ...schema }]) => ({
    name,
    in: "query",
    required: false,
    ...(description !== undefined ? { description } : {}),
    schema
  }))
}

/** The success answer of `e`: its status, body and headers (`location` with 201). */
const success = (e: AdminEndpoints.Endpoint, schemas: Schemas): Json => {
  const headers =
    e.location === undefined
      ? noStore()
      : {
          ...noStore(),
          location: { required: true, description: "the new resource", schema: { type: "string" } }
        }
  return { [e.status]: json(e.description, schemas.response(e.response), headers) }
}

/** Every answer of `e`: its success and each refusal it can meet, `allow` the methods of its path. */
const responses = (e: AdminEndpoints.Endpoint, allow: string, schemas: Schemas): Json => ({
  ...success(e, schemas),
  400: error("a field of the body, or a query parameter, is not acceptable", ["invalid_request"], noStore(), {
    field: { type: "string", description: "the field or parameter at fault" }
  }),
  401: error("no admin token, or the wrong one", ["unauthorized"], {
    ...noStore(),
    "www-authenticate": { required: true, schema: { type: "string", pattern: "^Bearer" } }
  }),
  ...(AdminEndpoints.parameterNames(e.path).length > 0
    ? { 404: error("no such application, user or consent", ["not_found"]) }
    : {}),
  405: error("the path does not take this method", ["invalid_request"], {
    ...noStore(),
    allow: headerOf("allow", allow)
  }),
  ...(e.conflict !== undefined ? { 409: error(e.conflict, ["conflict"]) } : {}),
  ...(e.body !== undefined
    ? {
        413: error(`the body is over ${Http.maxBodyBytes} bytes`, ["invalid_request"]),
        415: error("the body is not application/json, or is compressed", ["invalid_request"])
      }
    : {}),
  500: error("an unexpected failure, logged", ["server_error"]),
  503: error("storage is unavailable", ["temporarily_unavailable"], {
    ...noStore(),
    "retry-after": headerOf("retry-after", "1")
  })
})

/** The operation object of `e`. */
const operation = (id: string, e: AdminEndpoints.Endpoint, allow: string, schemas: Schemas): Json => ({
  operationId: id,
  summary: e.summary,
  ...(e.query !== undefined ? { parameters: queryParameters(e.query, schemas) } : {}),
  ...(e.body !== undefined
    ? {
        requestBody: {
          required: e.body.required ?? true,
          description: `${e.body.description} A JSON object of at most ${Http.maxBodyBytes} bytes, UTF-8, not compressed; an unknown field is 400.`,
          content: { "application/json": { schema: schemas.request(e.body.schema) } }
        }
      }
    : {}),
  responses: responses(e, allow, schemas)
})

/** The path item of `item`: an operation per method, then the path's parameters. */
const pathItem = (item: AdminEndpoints.PathItem, schemas: Schemas): Json => {
  const allow = item.endpoints.map(([, e]) => e.method).join(", ")
  const names = AdminEndpoints.parameterNames(item.path)
  return {
    ...Object.fromEntries(
      item.endpoints.map(([id, e]) => [e.method.toLowerCase(), operation(id, e, allow, schemas)])
    ),
    ...(names.length > 0
      ? {
          parameters: names.map((name) => ({
            name,
            in: "path",
            required: true,
            description: AdminEndpoints.pathParameters[name],
            schema: { type: "string" }
          }))
        }
      : {})
  }
}

/**
 * The OpenAPI 3.1 document of the admin API (`AdminApi`): every operation needs the admin
 * token (`bearerAuth`). `options.server` is the admin listener's URL, when known.
 */
export const adminDocument = (options: { readonly server?: string } = {}): Json => {
  const schemas = makeSchemas()
  const paths = Object.fromEntries(
    AdminEndpoints.byPath().map((item) => [`${AdminJson.basePath}${item.path}`, pathItem(item, schemas)])
  )
  return {
    openapi: "3.1.0",
    info: {
      title: "Latchkey admin API",
      version: "1",
      description:
        "Management of applications, users, tokens, consents and the audit trail, on the admin listener only. Every change is recorded in the audit trail with the actor admin-api; secrets and passwords never are."
    },
    ...(options.server !== undefined ? { servers: [{ url: options.server.replace(/\/+$/, "") }] } : {}),
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: schemas.definitions,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "the admin token (LATCHKEY_ADMIN_TOKEN), compared in constant time"
        }
      }
    }
  }
}

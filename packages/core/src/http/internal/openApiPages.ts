/**
 * The OpenAPI pieces of the pages: a page form's operation (its body Schema, its common answers)
 * and the paths of the user's own pages (the consents and account pages).
 */
import type { Schema } from "effect"
import { formBody, html, type Json, redirect, retryAfter } from "./openApiJson.js"

/** What the path builders share: a Schema's JSON Schema (named ones go to the document's components). */
export interface Build {
  readonly schema: (s: Schema.Schema.AnyNoContext) => Json
  /** The authorize endpoint's query parameters, by name, from `AuthorizeQuery`. */
  readonly query: { readonly properties?: Record<string, unknown>; readonly required?: ReadonlyArray<string> }
}

/** The answers of a page form besides its own: a bad ticket, a body refused, storage down. */
const pageFormResponses = (): Json => ({
  403: html("the form's ticket, CSRF token, session or origin is not valid"),
  413: html("the body is too large"),
  415: html("the body is compressed"),
  503: html("storage is unavailable", retryAfter)
})

/** A page form's operation: its body Schema, posted with the session cookie. */
export const pageForm = (
  b: Build,
  operation: { readonly id: string; readonly summary: string; readonly page: string },
  form: Schema.Schema.AnyNoContext,
  responses: Json
): Json => ({
  operationId: operation.id,
  summary: operation.summary,
  requestBody: formBody(b.schema(form), `Posted by the ${operation.page} with the session cookie.`),
  responses: { ...responses, ...pageFormResponses() }
})

/** One of the user's own pages (the consents or account page) and its forms. */
export const ownPagePath = (
  b: Build,
  page: { readonly id: string; readonly name: string; readonly shows: string; readonly does: string },
  form: Schema.Schema.AnyNoContext,
  refused: string
): Json => ({
  get: {
    operationId: page.id,
    summary: `The ${page.name}: ${page.shows}, or a sign-in form`,
    parameters: ["client_type", "ui_locales"].map((name) => ({
      name,
      in: "query",
      required: false,
      schema: b.query.properties?.[name]
    })),
    responses: {
      200: html(`the ${page.name}, or its sign-in form when nobody is signed in`),
      503: html("storage is unavailable (temporarily_unavailable)", retryAfter)
    }
  },
  post: pageForm(b, { id: `${page.id}Form`, summary: page.does, page: page.name }, form, {
    ...redirect(303, `back to the ${page.name}`),
    400: html(refused),
    429: html("too many failed sign-ins", retryAfter)
  })
})

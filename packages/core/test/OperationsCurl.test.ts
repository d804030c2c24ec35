/**
 * The curl examples of docs/operations.md ("Administration with curl") are requests the admin API
 * takes: each names an endpoint of the table with its method, carries the admin token, and its
 * body decodes with the endpoint's Schema; every change the API makes has one.
 */
import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as AdminApi from "../src/admin/AdminApi.js"
import * as AdminEndpoints from "../src/admin/AdminEndpoints.js"
import * as Audit from "../src/security/Audit.js"
import * as Memory from "../src/storage/Memory.js"
import { TestLayer } from "./fixtures.js"

const doc = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8")
const section = doc.slice(doc.indexOf("## Administration with curl"), doc.indexOf("## What to monitor"))

interface Example {
  readonly text: string
  readonly method: string
  readonly path: string
  readonly query: string
  readonly body: string | undefined
}

/** Every curl command of the section's sh blocks, its continued lines joined. */
const examples: ReadonlyArray<Example> = [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((block) => (block[1] ?? "").replace(/\\\n\s*/g, "").split("\n"))
  .filter((line) => line.startsWith("curl "))
  .map((text) => {
    const url = /"\$ADMIN(\/[^"?]*)(?:\?([^"]*))?"/.exec(text)
    assert.isNotNull(url, text)
    return {
      text,
      method: /-X ([A-Z]+)/.exec(text)?.[1] ?? "GET",
      path: (url?.[1] ?? "").replaceAll("$OPEN_ID", "device-42"),
      query: url?.[2] ?? "",
      body: /-d '([^']*)'/.exec(text)?.[1]
    }
  })

const pattern = (path: string) => new RegExp(`^${path.replace(/\{[a-z_]+\}/g, "[^/]+")}$`)

/** The endpoint of the table an example names. */
const endpointOf = (e: Example): [AdminEndpoints.OperationId, AdminEndpoints.Endpoint] | undefined =>
  (
    Object.entries(AdminEndpoints.endpoints) as Array<[AdminEndpoints.OperationId, AdminEndpoints.Endpoint]>
  ).find(
    ([, endpoint]) =>
      endpoint.method === e.method && pattern(endpoint.path).test(e.path.replaceAll("$APP_KEY", "k1"))
  )

const token = "admin-token-0123456789abcdef-0123456789"

describe("docs/operations.md: Administration with curl", () => {
  it("every example names an endpoint, carries the admin token, and its body decodes with the endpoint's Schema", () => {
    assert.isAbove(examples.length, 10)
    for (const e of examples) {
      assert.include(e.text, '-H "authorization: Bearer $LATCHKEY_ADMIN_TOKEN"', e.text)
      const found = endpointOf(e)
      assert.isDefined(found, e.text)
      const endpoint = found?.[1]
      if (e.body !== undefined) {
        assert.include(e.text, '-H "content-type: application/json"', e.text)
        assert.isDefined(endpoint?.body, `${e.text}: the endpoint reads no body`)
        const decoded = Schema.decodeUnknownEither(endpoint?.body?.schema ?? Schema.Never, {
          onExcessProperty: "error"
        })(JSON.parse(e.body))
        assert.isTrue(
          Either.isRight(decoded),
          `${e.text}: ${Either.isLeft(decoded) ? decoded.left.message : ""}`
        )
      } else {
        assert.isFalse(endpoint?.body?.required ?? false, `${e.text}: the endpoint needs a body`)
      }
      const fields = Object.keys(endpoint?.query?.fields ?? {})
      for (const name of new URLSearchParams(e.query).keys()) assert.include(fields, name, e.text)
    }
  })

  it("every change the admin API makes has an example, and the audit query too", () => {
    const shown = new Set(examples.map((e) => endpointOf(e)?.[0]))
    const changes = (
      Object.entries(AdminEndpoints.endpoints) as Array<[AdminEndpoints.OperationId, AdminEndpoints.Endpoint]>
    )
      .filter(([, e]) => e.method !== "GET")
      .map(([id]) => id)
    for (const id of [...changes, "queryAudit", "listConsents"] as const) assert.isTrue(shown.has(id), id)
  })

  it.effect(
    "the admin API takes the examples in order: each succeeds, or is 404 for what an earlier one deleted, or 409 for a review action an active application does not allow",
    () =>
      Effect.gen(function* () {
        let appKey = "$APP_KEY"
        let tokenId = "$TOKEN_ID"
        const statuses: Array<number> = []
        for (const e of examples) {
          const res = yield* AdminApi.route(
            {
              method: e.method,
              path: `${AdminApi.basePath}${e.path.replaceAll("$APP_KEY", appKey).replaceAll("$TOKEN_ID", tokenId)}`,
              query: e.query.replaceAll("$APP_KEY", appKey),
              headers: {
                authorization: `Bearer ${token}`,
                ...(e.body === undefined ? {} : { "content-type": "application/json" })
              },
              body: e.body ?? ""
            },
            { token }
          )
          statuses.push(res.status)
          const created = e.method === "POST" && e.path === "/applications"
          if (created) appKey = (JSON.parse(res.body) as { app_key: string }).app_key
          if (e.method === "POST" && e.path === "/registration-tokens")
            tokenId = (JSON.parse(res.body) as { id: string }).id
        }
        // the application is deleted before the owners, consents and tokens examples, alice before hers
        assert.deepStrictEqual(
          statuses,
          // approve and reject (409: the application is active), suspend and reinstate; the scope
          // catalogue's three and a registration token issued and revoked after the signing key;
          // the owners' two (404: the application is gone); the second factor's reset (200) just
          // before alice's deletion
          [
            201, 200, 200, 409, 409, 200, 200, 200, 200, 201, 200, 200, 201, 200, 201, 404, 404, 200, 200,
            200, 200, 200, 404, 404, 404, 200
          ]
        )
      }).pipe(Effect.provide(Layer.mergeAll(TestLayer(), Layer.provideMerge(Audit.layer, Memory.auditLayer))))
  )
})

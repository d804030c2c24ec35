/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592), when an operator turns it
 * on (`Settings.registration`). A client registers with an initial access token an operator
 * issued (`Admin.createInitialAccessToken`): POST to the registration endpoint with its metadata
 * as JSON. It is answered its App Key and App Secret (`client_id`, `client_secret`), and a
 * registration access token with the URI where it reads (GET), replaces (PUT) or deletes (DELETE)
 * its registration. Every value is checked as the admin API checks it (`Admin.prepareApplication`,
 * `Admin.updateApplication`), every change is audited with the actor `registration`, and a use of
 * the initial access token is spent in the transaction that stores the application, so a refused
 * registration spends none. With review on (`Settings.appReview`) a registered client is pending
 * until an operator approves it, and a change of its redirect URIs or scopes sends it back.
 */
import { Effect, Either, Option } from "effect"
import * as Admin from "../admin/Admin.js"
import type { InvalidField } from "../admin/internal/fields.js"
import { type Refused, readBody } from "../admin/internal/request.js"
import { type Application, status } from "../model/Application.js"
import { Config } from "../model/Config.js"
import * as Review from "../model/Review.js"
import * as Bearer from "../oauth/Bearer.js"
import { secretDigest } from "../oauth/ClientAuth.js"
import * as Audit from "../security/Audit.js"
import { sha256, timingSafeEqual } from "../services/Digest.js"
import * as Entropy from "../services/Entropy.js"
import { nowSeconds } from "../services/internal/time.js"
import { type ClientRegistration, RegistrationStore } from "../storage/RegistrationStore.js"
import { atomically } from "../storage/Transaction.js"
import * as ClientMetadata from "./internal/clientMetadata.js"
import * as Paths from "./Paths.js"
import { type HttpRequest, header } from "./Request.js"
import {
  type HttpResponse,
  json,
  methodNotAllowed,
  refusalResponse,
  type Settled,
  settle
} from "./Response.js"

/** The actor of the audit events of a registration and its management. */
export const actor = "registration"

const noStore = { "cache-control": "no-store", pragma: "no-cache" }

/** The endpoint is off: what an unknown path of the JSON endpoints answers. */
const off = json(404, { error: "not_found", error_description: "client registration is not enabled" })

const bearerPrefix = /^Bearer +([\x21-\x7E]+)$/i

/** RFC 6750 §3: 401 with the Bearer challenge, naming the error once a token was presented. */
const unauthorized = (presented: boolean, description: string): HttpResponse =>
  json(
    401,
    { error: "invalid_token", error_description: description },
    {
      "www-authenticate": Bearer.challenge("latchkey", presented ? { error: "invalid_token" } : {})
    }
  )

const noToken = unauthorized(false, "this endpoint needs Authorization: Bearer <token>")

/** RFC 7591 §3.2.2: `invalid_redirect_uri` for the redirect URIs, else `invalid_client_metadata`. */
const badMetadata = (field: string, description: string): HttpResponse =>
  json(
    400,
    {
      error: field === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata",
      error_description: description
    },
    noStore
  )

/** The admin checks name fields as the admin API does; a registering client knows RFC 7591's names. */
const metadataField: Readonly<Record<string, string>> = { scopes: "scope", name: "client_name" }

type Failure = Refused | InvalidField | ClientMetadata.Unsupported | Admin.NotFound | Review.NotEditable

const failureResponse = (e: Settled<Failure>): HttpResponse => {
  if (!("_tag" in e)) return badMetadata(e.field, e.description)
  switch (e._tag) {
    case "Refused":
      return e.response
    case "InvalidField":
      return badMetadata(metadataField[e.field] ?? e.field, e.description)
    case "NotFound":
      return unauthorized(true, "the registration access token is not valid")
    case "NotEditable":
      return badMetadata("client_id", e.description)
    case "TemporarilyUnavailable":
    case "ServerError":
      return { ...json(e.status, { error: e.error, error_description: e.description }), error: e.error }
  }
}

/** The client metadata of the request's JSON body, unknown fields ignored (RFC 7591 §2). */
const metadataOf = (req: HttpRequest) =>
  Either.flatMap(
    readBody(req, ClientMetadata.ClientMetadata, { excess: "ignore", expected: ClientMetadata.expected }),
    (meta) => Either.map(ClientMetadata.applicationOf(meta), (input) => ({ meta, input }))
  )

/** Where the client manages its registration (RFC 7592 §3 `registration_client_uri`). */
const clientUri = (issuer: string, appKey: string) =>
  `${issuer.replace(/\/+$/, "")}${Paths.oauth.register}?client_id=${encodeURIComponent(appKey)}`

/** RFC 7591 §3: register a client with an initial access token; 201 with its credentials. */
const register = (req: HttpRequest, presented: string) =>
  Effect.gen(function* () {
    const store = yield* RegistrationStore
    const now = yield* nowSeconds
    const initialHash = yield* sha256(presented)
    if (Option.isNone(yield* store.findToken(initialHash, now))) {
      return unauthorized(true, "the initial access token is not valid")
    }
    const body = metadataOf(req)
    if (Either.isLeft(body)) return yield* Effect.fail(body.left)
    // With review on, a registered client waits for an operator, as a developer's application does
    const { appReview } = yield* Config
    const { app, appSecret } = yield* Admin.prepareApplication(
      body.right.input,
      appReview ? "pending" : "active"
    )
    const accessToken = yield* Entropy.token
    const client: ClientRegistration = {
      appKey: app.appKey,
      accessTokenHash: yield* sha256(accessToken),
      registeredAt: now
    }
    // The use is spent with the application stored: both or neither
    const stored = yield* atomically(
      Effect.flatMap(store.spendToken(initialHash, now), (spent) =>
        spent
          ? Effect.as(
              Effect.zipRight(
                Admin.insertApplication(app, { how: "registered by the client" }),
                store.insertClient(client)
              ),
              true
            )
          : Effect.succeed(false)
      )
    ).pipe(Effect.catchTag("AppKeyTaken", Effect.die)) // 128 random bits: never taken
    if (!stored) return unauthorized(true, "the initial access token is not valid")
    const { issuer } = yield* Config
    return json(
      201,
      ClientMetadata.information(app, {
        clientSecret: appSecret,
        registrationAccessToken: accessToken,
        registrationClientUri: clientUri(issuer, app.appKey)
      }),
      noStore
    )
  })

/**
 * The application the registration access token manages: `NotFound` (401) unless the client was
 * registered here and the token is its own (RFC 7592 §2.1: an unknown client is 401 too).
 */
const managed = (appKey: string, presented: string) =>
  Effect.gen(function* () {
    const store = yield* RegistrationStore
    const registration = yield* store.findClient(appKey)
    const digest = yield* sha256(presented)
    if (Option.isNone(registration) || !timingSafeEqual(registration.value.accessTokenHash, digest)) {
      return yield* new Admin.NotFound({ what: "application", description: "no such registration" })
    }
    return yield* Admin.findApplication(appKey)
  })

/** RFC 7592 §2.2: the application as the full metadata of the update says, with `client_id` its own. */
const update = (req: HttpRequest, app: Application) =>
  Effect.gen(function* () {
    const body = metadataOf(req)
    if (Either.isLeft(body)) return yield* Effect.fail(body.left)
    const { meta, input } = body.right
    if (meta.client_id !== app.appKey) {
      return yield* Effect.fail({ field: "client_id", description: "client_id must be the client's own" })
    }
    if (
      meta.client_secret != null &&
      !timingSafeEqual(yield* secretDigest(app.appKey, meta.client_secret), app.secretDigest)
    ) {
      return yield* Effect.fail({
        field: "client_secret",
        description: "client_secret is not the client's secret"
      })
    }
    if (!Review.editable(status(app))) {
      return yield* Effect.fail({
        field: "client_id",
        description: `the registration is ${status(app)} and cannot change`
      })
    }
    // With review on, new redirect URIs or scopes send an active client back to review
    const { appReview } = yield* Config
    return yield* Admin.updateApplication(
      app.appKey,
      { ...input, ...(input.public === true ? {} : { public: false }) },
      appReview
    )
  })

/** RFC 7592: read (GET), replace (PUT) or delete (DELETE) the registration of `client_id`. */
const manage = (req: HttpRequest, presented: string) =>
  Effect.gen(function* () {
    const appKey = new URLSearchParams(req.query).get("client_id") ?? ""
    const app = yield* managed(appKey, presented)
    if (req.method === "DELETE") {
      yield* Admin.deleteApplication(appKey)
      return { status: 204, headers: noStore, body: "" } satisfies HttpResponse
    }
    const { issuer } = yield* Config
    const credentials = (clientSecret: string | null) => ({
      clientSecret,
      registrationAccessToken: presented,
      registrationClientUri: clientUri(issuer, appKey)
    })
    if (req.method === "GET") return json(200, ClientMetadata.information(app, credentials(null)), noStore)
    const updated = yield* update(req, app)
    return json(200, ClientMetadata.information(updated.app, credentials(updated.appSecret)), noStore)
  })

/**
 * The registration endpoint and each client's configuration endpoint (`Paths.oauth.register`,
 * with `?client_id=`), audited as the actor `registration`.
 */
export const endpoint = (req: HttpRequest) =>
  Effect.flatMap(Config, ({ registration }) => {
    if (!registration) return Effect.succeed(off)
    const management = req.method === "GET" || req.method === "PUT" || req.method === "DELETE"
    if (req.method !== "POST" && !management) {
      return Effect.succeed(refusalResponse(methodNotAllowed("POST, GET, PUT, DELETE")))
    }
    const value = header(req, "authorization")
    const presented = typeof value === "string" ? bearerPrefix.exec(value)?.[1] : undefined
    if (presented === undefined) return Effect.succeed(noToken)
    const answer = management ? manage(req, presented) : register(req, presented)
    return settle(answer, "client registration failed").pipe(
      Effect.catchAll((e) => Effect.succeed(failureResponse(e))),
      Effect.provideService(Audit.RequestInfo, {
        requestId: req.requestId ?? null,
        address: req.remoteAddress ?? null,
        actor
      })
    )
  })

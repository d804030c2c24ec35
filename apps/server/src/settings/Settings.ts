/**
 * Every environment variable the server and the CLI read, in one table: for each, its parser,
 * bounds, default and description. `Env.read` reads the environment through it, `Env.warnings`
 * knows the `LATCHKEY_*` names from it, and the table of apps/server/README.md is rendered from it
 * (test/Settings.test.ts checks it; `npx vitest run test/Settings.test.ts -u` rewrites it).
 */
import { Admin, AuditStore, Config, DisplayText, Throttle } from "@latchkey/core"
import { Either } from "effect"
import {
  listenAddressProblem,
  oneOf,
  otlpUrlProblem,
  postgresUrlProblem,
  proxyListProblem,
  type Setting,
  scopeDescriptions,
  secret,
  shown,
  text,
  whole
} from "./Parsers.js"

/** The pino levels `LOG_LEVEL` takes. */
export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const

/** Shortest admin token accepted. */
const minAdminTokenLength = 32

/** The address both listeners take by default. */
export const defaultHost = "127.0.0.1"

/** `LATCHKEY_DB` when it names no file: the database lives in memory and ends with the process. */
export const inMemory = ":memory:"

const day = 86_400
const throttle = Throttle.defaultPolicy

/** Why issuer `value` is refused, or undefined. */
const issuerProblem = (value: string): string | undefined => {
  const checked = Config.validateIssuer(value)
  if (Either.isRight(checked)) return undefined
  const message = checked.left.message
  return `${message}${message.includes("(got") ? "" : ` (got ${JSON.stringify(value)})`}`
}

const maxProductName = 64
const maxServiceName = 255

/** Why product name `value` is refused: longer than `maxProductName`, or not fit to show on a page. */
const productNameProblem = (value: string): string | undefined =>
  value.length > maxProductName
    ? `must be at most ${maxProductName} characters (got ${value.length}: ${shown(value)})`
    : DisplayText.isDisplayText(value)
      ? undefined
      : `must not contain bidirectional or invisible formatting characters (got ${shown(value)})`

/** Why service name `value` is refused: too long, or with control characters. */
const serviceNameProblem = (value: string, raw: string): string | undefined =>
  value.length > maxServiceName || [...value].some((c) => c.charCodeAt(0) < 0x20)
    ? `must be at most ${maxServiceName} characters without control characters (got ${shown(raw)})`
    : undefined

/** A lifetime in seconds from `min` to `max`; unset, the core's default `coreDefault` applies. */
const lifetime = (min: number, max: number, coreDefault: number) =>
  ({ min, max, fallback: undefined, defaultText: coreDefault, seconds: true }) as const

/** Why an OTLP protocol is refused: any but http/json. */
const httpJsonOnly = (value: string, raw: string): string | undefined =>
  value === "http/json"
    ? undefined
    : `must be http/json, the protocol Latchkey exports traces with (got ${shown(raw)})`

/** The settings, by variable name, in the order of the README's table. */
// biome-ignore format: a table, one setting to a row (its description on the second line)
export const settings = {
  PORT: whole({ min: 0, max: 65535, fallback: 8080 },
    "Port to listen on ({bounds}); `0` picks a free one (see the `listening` log line)"),
  HOST: text({ fallback: defaultHost, check: listenAddressProblem },
    "Address to listen on (an IP address or a host name); `0.0.0.0` in a container. A port in use, here or on the admin listener, exits 1 with one line naming the variable to change"),
  LATCHKEY_ISSUER: text({ fallback: null, defaultText: "`http://localhost:$PORT`", bounds: "an `http://` or `https://` URL without query, fragment or trailing slash", check: issuerProblem },
    "Issuer and base URL ({bounds}); a path (`https://example.com/auth`) mounts everything under it"),
  LATCHKEY_DB: text({ fallback: "./data/latchkey.sqlite" },
    `SQLite file; relative paths start where you ran \`pnpm\` (or \`node\`); \`${inMemory}\` keeps it in memory`),
  DATABASE_URL: text({ fallback: null, bounds: "a `postgres://` or `postgresql://` URI", check: postgresUrlProblem },
    "PostgreSQL connection URI ({bounds}: `postgres://user:password@host:5432/db`); when set, the server and the CLI use PostgreSQL instead of SQLite (`LATCHKEY_DB` is ignored). Never logged. Several instances on one database: docs/deploy.md in the Latchkey repository"),
  LATCHKEY_PG_POOL_MAX: whole({ min: 1, max: 1000, fallback: 10 },
    "Most PostgreSQL connections per server process ({bounds}); every worker and instance has its own pool"),
  LATCHKEY_PG_PREPARED_STATEMENTS: oneOf(["on", "off"], "on",
    "Named prepared statements on PostgreSQL ({bounds}): each connection parses and plans a statement once. `off` sends every statement unnamed, parsed and planned each time, for a connection path that does not keep a session's prepared statements (a pooler must run in session mode anyway: docs/deploy.md)"),
  LATCHKEY_SECRET: secret({ min: Config.minServerKeyLength, fallback: null, defaultText: "generated, kept in the database" },
    "Server key ({bounds}): signs session cookies, keys App Secret digests and open_id derivation. Instances on one database share the generated one; changing it is an outage of client authentication (docs/deploy.md)"),
  LATCHKEY_SCOPE_DESCRIPTIONS: scopeDescriptions(
    'JSON object, scope → what it allows, for the consent page (`{"profile":"See your profile"}`), or scope → texts by language tag (`{"profile":{"en":"See your profile","fr":"Voir votre profil"}}`); others read "Access to _scope_". At start it seeds the scope catalogue: each scope named here that the catalogue lacks is added (an entry there is never overwritten; a single text is its `en` description), and the texts of the catalogue come first on the pages (docs/platform.md)'),
  LATCHKEY_PRODUCT_NAME: text({ fallback: "Latchkey", bounds: `at most ${maxProductName} characters, no bidirectional or invisible formatting characters`, check: productNameProblem },
    "Product name the sign-in, consent and error pages show"),
  LATCHKEY_ADMIN_PORT: whole({ min: 0, max: 65535, fallback: undefined, defaultText: "unset (off)" },
    "Port of the admin listener ({bounds}; `0` picks a free one, see the `admin listening` log line): the admin API under `/admin/v1` and Prometheus metrics at `/metrics`, never on the public port (the number of `PORT` is refused). With `LATCHKEY_WORKERS` above 1 the primary runs it and sums every worker's metrics. More in docs/operations.md of the Latchkey repository"),
  LATCHKEY_ADMIN_HOST: text({ fallback: defaultHost, check: listenAddressProblem },
    "Address of the admin listener; a non-loopback address is warned of at start (plain HTTP: put TLS or a private network in front)"),
  LATCHKEY_ADMIN_TOKEN: secret({ min: minAdminTokenLength, fallback: undefined, defaultText: "unset", hint: " when LATCHKEY_ADMIN_PORT is set, e.g. openssl rand -base64 32" },
    "Bearer token of every admin request and scrape ({bounds}, e.g. `openssl rand -base64 32`); required with `LATCHKEY_ADMIN_PORT`. Never logged"),
  LATCHKEY_CONSOLE: oneOf(["on", "off"], "off",
    "The operator console at `/console` on the admin listener ({bounds}), signed into with operator accounts (`latchkey operator create`), not the admin token. More in docs/platform.md of the Latchkey repository"),
  LATCHKEY_CODE_TTL: whole(lifetime(1, Config.maxCodeTtl, Config.defaults.codeTtl),
    "Authorization code lifetime, seconds"),
  LATCHKEY_ACCESS_TOKEN_TTL: whole(lifetime(1, day, Config.defaults.accessTokenTtl),
    "Access token lifetime, seconds"),
  LATCHKEY_REFRESH_TOKEN_TTL: whole(lifetime(1, Admin.maxTtl, Config.defaults.refreshTokenTtl),
    "Refresh token lifetime, seconds"),
  LATCHKEY_REFRESH_REUSE_GRACE: whole(lifetime(0, 60, Config.defaults.refreshReuseGrace),
    "Seconds in which a retried refresh gets a new pair instead of revoking the family"),
  LATCHKEY_ID_TOKEN_TTL: whole(lifetime(60, day, Config.defaults.idTokenTtl),
    "OpenID Connect ID token lifetime, seconds ({bounds})"),
  LATCHKEY_JWT_ACCESS_TOKEN_TTL: whole(lifetime(1, day, Config.defaults.jwtAccessTokenTtl),
    "Lifetime of the JWT access tokens (RFC 9068) of applications registered with `--access-token-format jwt`, seconds ({bounds}); a JWT cannot be revoked before it expires, so keep it short"),
  LATCHKEY_SIGNING_ALGORITHM: oneOf(Config.SigningAlgorithm.literals, Config.defaults.signingAlgorithm,
    "Algorithm of the first signing key (ID tokens, JWT access tokens) and of `keys rotate` without `--algorithm`: {bounds}. Keys already made keep theirs"),
  LATCHKEY_PASSKEYS: oneOf(["on", "off"], "off",
    "Passkeys (WebAuthn) as a first factor ({bounds}): `on` adds \"Sign in with a passkey\" to the sign-in page and the passkey endpoints of signed-in users (docs/sign-in.md of the Latchkey repository); the RP ID is the issuer's host name"),
  LATCHKEY_REGISTRATION: oneOf(["on", "off"], "off",
    "Dynamic client registration ({bounds}): `on` lets a client register itself (RFC 7591) at /oauth2/oauth2/register with an initial access token from `registration-token create`, and read, replace or delete its registration (RFC 7592); the metadata then names the `registration_endpoint`. More in docs/platform.md of the Latchkey repository"),
  LATCHKEY_MFA: oneOf(Config.MfaPolicy.literals, Config.defaults.mfa,
    "Second factor for every sign-in ({bounds}): `required` makes every authorization need a passkey, or a password and an authenticator app's code (a user without one is led to set one up on the account page); `optional` leaves it to the applications (`app create --require-mfa`) and to requests' `acr_values`. More in docs/sign-in.md of the Latchkey repository"),
  LATCHKEY_APP_REVIEW: oneOf(["on", "off"], "off",
    "Review of developers' applications ({bounds}): `on` makes an application a developer registers wait for an operator's `app approve`, and a developer's change to the redirect URIs or scopes of an active one sends it back to review; applications an operator registers are active either way. More in docs/platform.md of the Latchkey repository"),
  LATCHKEY_SESSION_TTL: whole(lifetime(60, 7 * day, Config.defaults.sessionTtl),
    "Idle lifetime of a sign-in session of the authorize pages, seconds ({bounds}); every page renews it"),
  LATCHKEY_SESSION_MAX_AGE: whole(lifetime(300, 30 * day, Config.defaults.sessionMaxAge),
    "Absolute lifetime of a signed-in session, seconds from the sign-in ({bounds}): past it the user signs in again however recently the session was used. A lower value applies at once to sessions already signed in"),
  LATCHKEY_TRUST_PROXY: text({ fallback: false, check: proxyListProblem },
    "The address(es) of your TLS-terminating proxy, comma-separated: IP addresses, subnets (`10.0.0.0/8`) or `loopback`, `linklocal`, `uniquelocal` (proxy-addr, as Express's `trust proxy`; a hop count is refused). Leave unset without a proxy, so `X-Forwarded-*` is ignored"),
  LOG_LEVEL: oneOf(logLevels, "info",
    "pino level: {bounds}"),
  LATCHKEY_THROTTLE_FREE_FAILURES: whole({ min: 1, max: 1_000_000, fallback: throttle.freeFailures },
    "Failed sign-ins per username, and failed client authentications per App Key, from one address (or one trusted browser, or one application's password grant) before lockouts start"),
  LATCHKEY_THROTTLE_ADDRESS_FREE_FAILURES: whole({ min: 1, max: 1_000_000, fallback: throttle.addressFreeFailures },
    "The same per source address ({bounds}; sign-in and client authentication counted apart)"),
  LATCHKEY_THROTTLE_SLOW_FREE_FAILURES: whole({ min: 1, max: 1_000_000, fallback: throttle.slowFreeFailures },
    "Failed sign-ins per username from any address ({bounds}) before further sign-ins for it from browsers without a trusted-device cookie are checked one slot after another (the username never locks; a sign-in whose slot is more than `LATCHKEY_THROTTLE_MAX_DELAY` away is answered 429 with `Retry-After`)"),
  LATCHKEY_THROTTLE_BASE_LOCKOUT: whole({ min: 1, max: day, fallback: throttle.baseLockout, seconds: true },
    "First lockout in seconds ({bounds}); each further failure doubles it"),
  LATCHKEY_THROTTLE_MAX_LOCKOUT: whole({ min: 1, max: day, fallback: throttle.maxLockout, seconds: true },
    "Longest lockout in seconds"),
  LATCHKEY_THROTTLE_MAX_DELAY: whole({ min: 1, max: 60, fallback: throttle.maxDelay, seconds: true },
    "Longest wait for a slot in seconds ({bounds}), and the longest spacing of slots: it starts at 1 s and doubles. A slowed sign-in waits inside its request: keep it well under `LATCHKEY_REQUEST_TIMEOUT_MS`"),
  LATCHKEY_THROTTLE_WINDOW: whole({ min: 1, max: 7 * day, fallback: throttle.window, seconds: true },
    "Seconds without a failure after which a key's failures are forgotten"),
  LATCHKEY_HEADERS_TIMEOUT_MS: whole({ min: 100, max: 600_000, fallback: 10_000 },
    "Milliseconds a client may take to send its request headers ({bounds}) before the connection is closed (slow clients, T9 in docs/security.md of the Latchkey repository)"),
  LATCHKEY_REQUEST_TIMEOUT_MS: whole({ min: 100, max: 3_600_000, fallback: 30_000 },
    "Milliseconds a client may take to send a whole request ({bounds}, and at least the headers timeout)"),
  LATCHKEY_AUDIT_RETENTION_DAYS: whole({ min: 1, max: AuditStore.maxRetentionDays, fallback: AuditStore.defaultRetentionDays },
    "Days audit events are kept and append-only ({bounds}): the database refuses to delete them sooner, and the sweep every 5 minutes deletes up to 1000 older ones. Give the server and the CLI the same value: the last process to open the database sets it"),
  LATCHKEY_WORKERS: whole({ min: 1, max: 64, fallback: 1 },
    "Worker processes ({bounds}) serving the one port with `node:cluster`, on the one database; every log line of a worker carries its `worker` id. The first process only forks them: it migrates the database first, replaces a worker that crashes (at most twice the number of workers a minute, later ones wait), passes SIGTERM and SIGINT on, and exits once every worker has stopped. `1` runs the server in one process; above 1 needs a database the workers share (a file or PostgreSQL, not `:memory:`)"),
  OTEL_EXPORTER_OTLP_PROTOCOL: text({ fallback: "http/json", check: httpJsonOnly },
    "Only `http/json` is offered; any other value is refused at start"),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: text({ fallback: "http/json", check: httpJsonOnly },
    "The same, for the spans alone"),
  OTEL_EXPORTER_OTLP_ENDPOINT: text({ fallback: undefined, defaultText: "unset (off)", bounds: "an `http://` or `https://` URL", check: otlpUrlProblem },
    "OTLP/HTTP receiver (`http://127.0.0.1:4318`): the request spans (`Http.token`, `Interaction.authorize`, …) are exported to `<endpoint>/v1/traces` as JSON, in batches. Unset, nothing of OpenTelemetry is loaded"),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: text({ fallback: undefined, bounds: "an `http://` or `https://` URL", check: otlpUrlProblem },
    "Full URL for the spans instead of `<endpoint>/v1/traces` (turns the export on too)"),
  OTEL_SERVICE_NAME: text({ fallback: "latchkey", bounds: `at most ${maxServiceName} characters without control characters`, check: serviceNameProblem },
    "`service.name` of the exported spans ({bounds}; also `OTEL_RESOURCE_ATTRIBUTES`)"),
  OTEL_SDK_DISABLED: oneOf(["true", "false"], "false",
    "`true` turns the export off whatever the endpoint ({bounds}). The SDK's own variables apply too: `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_*`, `OTEL_TRACES_SAMPLER`")
} satisfies Record<string, Setting<unknown>>

/** The name of a setting. */
export type Name = keyof typeof settings

/** The value of setting `N`. */
export type Value<N extends Name> = ReturnType<(typeof settings)[N]["read"]>

/** A reader of the settings of `env`: each call parses and checks one variable, throwing EnvError. */
export const reader =
  (env: NodeJS.ProcessEnv) =>
  <N extends Name>(name: N): Value<N> =>
    settings[name].read(env[name], name) as Value<N>

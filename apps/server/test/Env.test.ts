import { assert, describe, it } from "@effect/vitest"
import * as Env from "../src/Env.js"

describe("Env.read", () => {
  it("has the defaults of the README's configuration table", () => {
    const env = Env.read({ INIT_CWD: "/repo" })
    assert.strictEqual(env.port, 8080)
    assert.isNull(env.issuer)
    assert.strictEqual(env.dbPath, "/repo/data/latchkey.sqlite")
    assert.isNull(env.secret)
    assert.strictEqual(env.host, "127.0.0.1")
    assert.isFalse(env.trustProxy)
    assert.strictEqual(env.headersTimeoutMs, 10_000)
    assert.strictEqual(env.requestTimeoutMs, 30_000)
  })

  it("reads the connection timeouts (docs/security.md, catalogue T9)", () => {
    const env = Env.read({ LATCHKEY_HEADERS_TIMEOUT_MS: "800", LATCHKEY_REQUEST_TIMEOUT_MS: "1500" })
    assert.strictEqual(env.headersTimeoutMs, 800)
    assert.strictEqual(env.requestTimeoutMs, 1500)
  })

  it("reads every variable", () => {
    const env = Env.read({
      PORT: "9000",
      LATCHKEY_ISSUER: "https://auth.example",
      LATCHKEY_DB: "/var/lib/latchkey.sqlite",
      LATCHKEY_SECRET: "x".repeat(40),
      LATCHKEY_SCOPE_DESCRIPTIONS: '{"profile":"Read your profile"}',
      LATCHKEY_CODE_TTL: "120",
      LATCHKEY_TRUST_PROXY: "10.0.0.1"
    })
    assert.strictEqual(env.port, 9000)
    assert.strictEqual(env.issuer, "https://auth.example")
    assert.strictEqual(env.dbPath, "/var/lib/latchkey.sqlite")
    assert.strictEqual(env.secret, "x".repeat(40))
    assert.deepStrictEqual(env.scopeDescriptions, { profile: "Read your profile" })
    assert.strictEqual(env.codeTtl, 120)
    assert.strictEqual(env.trustProxy, "10.0.0.1")
  })

  it("reads the audit retention, 90 days by default, 1 to 3650", () => {
    assert.strictEqual(Env.read({}).auditRetentionDays, 90)
    assert.strictEqual(Env.read({ LATCHKEY_AUDIT_RETENTION_DAYS: "" }).auditRetentionDays, 90)
    assert.strictEqual(Env.read({ LATCHKEY_AUDIT_RETENTION_DAYS: "1" }).auditRetentionDays, 1)
    assert.strictEqual(Env.read({ LATCHKEY_AUDIT_RETENTION_DAYS: "365" }).auditRetentionDays, 365)
    assert.strictEqual(Env.read({ LATCHKEY_AUDIT_RETENTION_DAYS: "3650" }).auditRetentionDays, 3650)
    for (const raw of ["0", "-1", "3651", "1.5", "90d", "ninety", "1e9"]) {
      assert.throws(
        () => Env.read({ LATCHKEY_AUDIT_RETENTION_DAYS: raw }),
        Env.EnvError,
        /LATCHKEY_AUDIT_RETENTION_DAYS must be a whole number between 1 and 3650/,
        raw
      )
    }
  })

  it("reads the absolute session lifetime: unset keeps the core's 12 hours; 300 s to 30 days", () => {
    assert.isUndefined(Env.read({}).sessionMaxAge)
    assert.strictEqual(Env.read({ LATCHKEY_SESSION_MAX_AGE: "300" }).sessionMaxAge, 300)
    assert.strictEqual(Env.read({ LATCHKEY_SESSION_MAX_AGE: "2592000" }).sessionMaxAge, 2592000)
    for (const raw of ["299", "2592001", "0", "12h", "-1"]) {
      assert.throws(
        () => Env.read({ LATCHKEY_SESSION_MAX_AGE: raw }),
        Env.EnvError,
        /LATCHKEY_SESSION_MAX_AGE must be a whole number between 300 and 2592000/,
        raw
      )
    }
  })

  it("refuses a DATABASE_URL that is not a PostgreSQL URI, bad numbers, bad issuers, short secrets and bad descriptions", () => {
    for (const bad of [
      { DATABASE_URL: "mysql://u:p@x/y" },
      { DATABASE_URL: "not a url" },
      { LATCHKEY_PG_POOL_MAX: "0" },
      { PORT: "http" },
      { PORT: "70000" },
      { LATCHKEY_ISSUER: "auth.example" },
      { LATCHKEY_ISSUER: "https://auth.example/" },
      { LATCHKEY_ISSUER: "https://auth.example?x=1" },
      { LATCHKEY_SECRET: "short" },
      { LATCHKEY_SCOPE_DESCRIPTIONS: "[1]" },
      { LATCHKEY_CODE_TTL: "601" },
      { LATCHKEY_HEADERS_TIMEOUT_MS: "10" },
      { LATCHKEY_HEADERS_TIMEOUT_MS: "40000" }
    ]) {
      assert.throws(() => Env.read(bad), Env.EnvError, undefined, JSON.stringify(bad))
    }
  })

  it("DATABASE_URL selects PostgreSQL; its password is in no error and in no log description", () => {
    const env = Env.read({
      DATABASE_URL: "postgresql://latchkey:s3cret-pw@db.internal:5433/auth?sslmode=require"
    })
    assert.strictEqual(
      env.databaseUrl,
      "postgresql://latchkey:s3cret-pw@db.internal:5433/auth?sslmode=require"
    )
    assert.strictEqual(env.pgPoolMax, 10)
    assert.strictEqual(env.pgPreparedStatements, true)
    assert.strictEqual(Env.describeStore(env), "postgresql://db.internal:5433/auth")
    assert.isNull(Env.read({}).databaseUrl)
    try {
      Env.read({ DATABASE_URL: "mysql://latchkey:s3cret-pw@db.internal/auth" })
      assert.fail("accepted")
    } catch (e) {
      assert.instanceOf(e, Env.EnvError)
      assert.include((e as Error).message, "DATABASE_URL")
      assert.notInclude((e as Error).message, "s3cret-pw")
    }
  })

  it("LATCHKEY_PG_PREPARED_STATEMENTS=off turns PostgreSQL's named prepared statements off; other values are refused", () => {
    assert.strictEqual(Env.read({ LATCHKEY_PG_PREPARED_STATEMENTS: "off" }).pgPreparedStatements, false)
    assert.strictEqual(Env.read({ LATCHKEY_PG_PREPARED_STATEMENTS: "ON" }).pgPreparedStatements, true)
    assert.throws(() => Env.read({ LATCHKEY_PG_PREPARED_STATEMENTS: "no" }), Env.EnvError, /on or off/)
  })
})

/** The message of the EnvError `Env.read(env)` throws. */
const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    Env.read(env)
  } catch (e) {
    assert.instanceOf(e, Env.EnvError)
    return (e as Error).message
  }
  return assert.fail(`accepted ${JSON.stringify(env)}`)
}

describe("Env.read: every refusal names the variable, the value and what is allowed, on one line", () => {
  it("LOG_LEVEL is one of pino's levels, in any case", () => {
    for (const level of Env.logLevels) {
      assert.strictEqual(Env.read({ LOG_LEVEL: level }).logLevel, level)
      assert.strictEqual(Env.read({ LOG_LEVEL: level.toUpperCase() }).logLevel, level)
    }
    assert.strictEqual(Env.read({}).logLevel, "info")
    assert.strictEqual(
      refusal({ LOG_LEVEL: "verbose" }),
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")'
    )
  })

  it("HOST and LATCHKEY_ADMIN_HOST are an IP address or a host name", () => {
    const adminPort = { LATCHKEY_ADMIN_PORT: "9090", LATCHKEY_ADMIN_TOKEN: "t".repeat(32) }
    for (const host of ["127.0.0.1", "0.0.0.0", "::", "::1", "fe80::1", "localhost", "auth-1.internal"]) {
      assert.strictEqual(Env.read({ HOST: host }).host, host)
      assert.strictEqual(Env.read({ ...adminPort, LATCHKEY_ADMIN_HOST: host }).admin?.host, host)
    }
    assert.strictEqual(Env.read({ ...adminPort }).admin?.host, "127.0.0.1")
    for (const name of ["HOST", "LATCHKEY_ADMIN_HOST"] as const) {
      for (const bad of [
        "[::1]",
        "http://0.0.0.0",
        "1.2.3.999",
        "my host",
        "under_score",
        "-lead.example",
        "a:b"
      ]) {
        const message = refusal({ ...adminPort, [name]: bad })
        assert.isTrue(message.startsWith(`${name} must be an IP address or a host name`), message)
        assert.include(message, `(got ${JSON.stringify(bad)})`)
      }
    }
  })

  it("LATCHKEY_TRUST_PROXY is what proxy-addr compiles: addresses, subnets and its three names", () => {
    for (const ok of [
      "10.0.0.1",
      "10.0.0.1, 10.0.0.2",
      "10.0.0.0/8",
      "10.0.0.0/255.0.0.0",
      "fd00::/8",
      "::1",
      "loopback",
      "loopback, linklocal, uniquelocal"
    ]) {
      assert.strictEqual(Env.read({ LATCHKEY_TRUST_PROXY: ok }).trustProxy, ok)
    }
    for (const bad of [
      "true",
      "1",
      "2",
      "proxy.example",
      "10.0.0.1,,",
      "10.0.0.0/33",
      "10.0.0.0/8/8",
      "10.0.0.0/x"
    ]) {
      const message = refusal({ LATCHKEY_TRUST_PROXY: bad })
      assert.isTrue(message.startsWith("LATCHKEY_TRUST_PROXY must be a comma-separated list"), message)
      assert.include(message, `(got ${JSON.stringify(bad)}`)
      assert.include(message, "loopback, linklocal, uniquelocal")
    }
  })

  it("names the variable and the value of every other refusal, never the value of a secret", () => {
    for (const [env, name, got] of [
      [{ PORT: "http" }, "PORT", '"http"'],
      [{ LATCHKEY_ADMIN_PORT: "70000" }, "LATCHKEY_ADMIN_PORT", '"70000"'],
      [{ LATCHKEY_ISSUER: "auth.example" }, "LATCHKEY_ISSUER", '"auth.example"'],
      [{ LATCHKEY_ISSUER: "https://auth.example/" }, "LATCHKEY_ISSUER", '"https://auth.example/"'],
      [{ LATCHKEY_ISSUER: "https://auth.example?x=1" }, "LATCHKEY_ISSUER", '"https://auth.example?x=1"'],
      [{ LATCHKEY_SCOPE_DESCRIPTIONS: "[1]" }, "LATCHKEY_SCOPE_DESCRIPTIONS", '"[1]"'],
      [{ LATCHKEY_PRODUCT_NAME: "x".repeat(65) }, "LATCHKEY_PRODUCT_NAME", "65"],
      [{ LATCHKEY_PRODUCT_NAME: "Acme\u202eoS" }, "LATCHKEY_PRODUCT_NAME", "bidirectional or invisible"],
      [{ LATCHKEY_HEADERS_TIMEOUT_MS: "40000" }, "LATCHKEY_HEADERS_TIMEOUT_MS", "40000"],
      [{ LATCHKEY_WORKERS: "2", LATCHKEY_DB: ":memory:" }, "LATCHKEY_WORKERS", ":memory:"]
    ] as const) {
      const message = refusal(env)
      assert.isTrue(message.startsWith(`${name} must`) || message.startsWith(`${name} above`), message)
      assert.include(message, got, message)
      assert.notInclude(message, "\n")
    }
    for (const [env, name, secret] of [
      [{ LATCHKEY_SECRET: "short-secret-7" }, "LATCHKEY_SECRET", "short-secret-7"],
      [
        { LATCHKEY_ADMIN_PORT: "9090", LATCHKEY_ADMIN_TOKEN: "short-token-7" },
        "LATCHKEY_ADMIN_TOKEN",
        "short-token-7"
      ]
    ] as const) {
      const message = refusal(env)
      assert.isTrue(message.startsWith(`${name} must be`), message)
      assert.include(message, `(got ${secret.length};`)
      assert.notInclude(message, secret)
    }
  })

  it("refuses LATCHKEY_ADMIN_PORT equal to PORT, saying it is the public port; 0 for both picks two free ports", () => {
    const token = "t".repeat(32)
    for (const env of [
      { PORT: "9090", LATCHKEY_ADMIN_PORT: "9090", LATCHKEY_ADMIN_TOKEN: token },
      { LATCHKEY_ADMIN_PORT: "8080", LATCHKEY_ADMIN_TOKEN: token }
    ]) {
      const port = env.LATCHKEY_ADMIN_PORT
      assert.throws(
        () => Env.read(env),
        Env.EnvError,
        `LATCHKEY_ADMIN_PORT must not be PORT, the public port (both are ${port}): the admin API and the metrics never share it; set LATCHKEY_ADMIN_PORT to another port`
      )
    }
    assert.strictEqual(
      Env.read({ PORT: "0", LATCHKEY_ADMIN_PORT: "0", LATCHKEY_ADMIN_TOKEN: token }).admin?.port,
      0
    )
  })

  it("reads the admin listener: off without LATCHKEY_ADMIN_PORT, which needs a token of 32 characters; the console off unless LATCHKEY_CONSOLE=on", () => {
    assert.isNull(Env.read({}).admin)
    assert.isNull(Env.read({ LATCHKEY_ADMIN_TOKEN: "t".repeat(32) }).admin)
    assert.deepStrictEqual(
      Env.read({ LATCHKEY_ADMIN_PORT: "0", LATCHKEY_ADMIN_TOKEN: "t".repeat(32) }).admin,
      {
        port: 0,
        host: "127.0.0.1",
        token: "t".repeat(32),
        console: false
      }
    )
    const on = { LATCHKEY_ADMIN_PORT: "0", LATCHKEY_ADMIN_TOKEN: "t".repeat(32), LATCHKEY_CONSOLE: "on" }
    assert.isTrue(Env.read(on).admin?.console)
    assert.include(
      Env.warnings({ LATCHKEY_CONSOLE: "on" }),
      "LATCHKEY_CONSOLE is set but LATCHKEY_ADMIN_PORT is not: the admin listener is off"
    )
    assert.match(refusal({ LATCHKEY_ADMIN_PORT: "9090" }), /^LATCHKEY_ADMIN_TOKEN must be set to at least 32/)
    assert.match(
      refusal({ LATCHKEY_ADMIN_PORT: "9090", LATCHKEY_ADMIN_TOKEN: "t".repeat(31) }),
      /^LATCHKEY_ADMIN_TOKEN must be set to at least 32/
    )
  })
})

describe("Env.warnings", () => {
  it("names the nearest known variable for an unknown LATCHKEY_ one", () => {
    assert.deepStrictEqual(Env.warnings({ LATCHKEY_ISUER: "https://a.example" }), [
      "LATCHKEY_ISUER is not a Latchkey setting and is ignored; did you mean LATCHKEY_ISSUER?"
    ])
    for (const [typo, meant] of [
      ["LATCHKEY_WORKER", "LATCHKEY_WORKERS"],
      ["LATCHKEY_TRUSTPROXY", "LATCHKEY_TRUST_PROXY"],
      ["LATCHKEY_ADMIN_TOKN", "LATCHKEY_ADMIN_TOKEN"],
      ["LATCHKEY_ACCESS_TOKEN_TTL_SECONDS", "LATCHKEY_ACCESS_TOKEN_TTL"],
      ["LATCHKEY_SECRETS", "LATCHKEY_SECRET"],
      ["LATCHKEY_DATABASE", "LATCHKEY_DB"]
    ] as const) {
      assert.strictEqual(Env.nearestVariable(typo), meant, typo)
      const [warning] = Env.warnings({ [typo]: "x" })
      assert.include(warning, `did you mean ${meant}?`)
    }
  })

  it("says nothing of known variables, of the repository's tools' variables, nor of others", () => {
    const env: NodeJS.ProcessEnv = {
      PATH: "/bin",
      DATABASE_URL: "",
      LATCHKEY_CMD: "node x",
      LATCHKEY_RUNTIME: "node"
    }
    for (const name of Env.knownVariables) env[name] = ""
    assert.deepStrictEqual(Env.warnings(env), [])
  })

  it("names the setting a misspelt variable outside LATCHKEY_ was meant to be, never its value", () => {
    for (const [typo, meant] of [
      ["DATABSE_URL", "DATABASE_URL"],
      ["DATABASEURL", "DATABASE_URL"],
      ["database_url", "DATABASE_URL"],
      ["PROT", "PORT"],
      ["HOTS", "HOST"],
      ["LOG_LEVLE", "LOG_LEVEL"],
      ["LOGLEVEL", "LOG_LEVEL"],
      ["OTEL_EXPORTER_OTLP_ENDPIONT", "OTEL_EXPORTER_OTLP_ENDPOINT"],
      ["OTEL_SERVICENAME", "OTEL_SERVICE_NAME"],
      ["OTEL_SDK_DISABLE", "OTEL_SDK_DISABLED"]
    ] as const) {
      assert.deepStrictEqual(
        Env.warnings({ [typo]: "postgres://latchkey:pw-never-shown@db/latchkey" }),
        [`${typo} is not a Latchkey setting and is ignored; did you mean ${meant}?`],
        typo
      )
    }
  })

  it("says nothing of other programs' variables that merely resemble a setting", () => {
    const env: NodeJS.ProcessEnv = {}
    for (const name of [
      "HOME",
      "HOSTNAME",
      "PGHOST",
      "PATH",
      "PWD",
      "TERM",
      "NODE_ENV",
      "OTEL_EXPORTER_OTLP_HEADERS",
      "OTEL_EXPORTER_OTLP_TIMEOUT",
      "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
      "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
      "OTEL_TRACES_SAMPLER",
      "OTEL_RESOURCE_ATTRIBUTES",
      "OTEL_BSP_MAX_QUEUE_SIZE"
    ])
      env[name] = "x"
    assert.deepStrictEqual(Env.warnings(env), [])
  })

  it("warns of admin settings without LATCHKEY_ADMIN_PORT, and of an admin listener off the loopback", () => {
    assert.deepStrictEqual(Env.warnings({ LATCHKEY_ADMIN_TOKEN: "t".repeat(32) }), [
      "LATCHKEY_ADMIN_TOKEN is set but LATCHKEY_ADMIN_PORT is not: the admin listener is off"
    ])
    const exposed = Env.warnings({ LATCHKEY_ADMIN_PORT: "9090", LATCHKEY_ADMIN_HOST: "0.0.0.0" })
    assert.strictEqual(exposed.length, 1)
    assert.match(exposed[0] ?? "", /^LATCHKEY_ADMIN_HOST 0\.0\.0\.0 is not a loopback address/)
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "localhost"]) {
      assert.deepStrictEqual(
        Env.warnings({ LATCHKEY_ADMIN_PORT: "9090", LATCHKEY_ADMIN_HOST: host }),
        [],
        host
      )
    }
  })
})

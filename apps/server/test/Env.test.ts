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
})

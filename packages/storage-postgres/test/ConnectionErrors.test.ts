import { assert, it } from "@effect/vitest"
import { PostgresStorage } from "@latchkey/storage-postgres"
import { toStorageError } from "../src/internal/errors.js"

it("says in words that the database does not exist or refused the login, never quoting the server's text", () => {
  for (const [code, text, message] of [
    ["3D000", 'database "secret_db" does not exist', "the database does not exist"],
    [
      "28P01",
      'password authentication failed for user "secret_user"',
      "the database refused the user name or password"
    ],
    [
      "28000",
      'no pg_hba.conf entry for user "secret_user"',
      "the database refused the connection for this user (pg_hba.conf or the role)"
    ]
  ] as const) {
    const cause = Object.assign(new Error(text), { code })
    const err = toStorageError(cause)
    assert.strictEqual(err.message, message)
    assert.notMatch(err.message, /secret/)
    assert.strictEqual(err.cause, cause)
  }
})

it("says in words that the server offers no TLS when the connection asks for it, and tells that refusal apart", () => {
  // What node-postgres throws for sslmode=require against a server that answers 'N' to SSLRequest
  const cause = new Error("The server does not support SSL connections")
  const err = toStorageError(cause)
  assert.strictEqual(
    err.message,
    "the database server does not offer TLS (SSL), but the connection asks for it (sslmode)"
  )
  assert.isTrue(PostgresStorage.isTlsRefused(err))
  assert.isFalse(
    PostgresStorage.isTlsRefused(toStorageError(Object.assign(new Error("x"), { code: "ECONNREFUSED" })))
  )
  assert.isFalse(
    PostgresStorage.isTlsRefused(toStorageError(Object.assign(new Error("SSL"), { code: "28000" })))
  )
})

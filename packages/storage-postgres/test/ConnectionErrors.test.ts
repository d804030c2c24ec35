import { assert, it } from "@effect/vitest"
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

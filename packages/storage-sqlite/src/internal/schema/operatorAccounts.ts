/** Migration 24 of the SQLite schema, "operator accounts": the console's operators and their sessions. */
import type { Migrations } from "@latchkey/core"

/** The operators (`OperatorStore`) and their console sessions, by the SHA-256 of the session id. */
export const operatorAccounts: Migrations.Migration = {
  version: 24,
  name: "operator accounts",
  sql: `
      -- Operator accounts of the console (OperatorStore) and their sessions, by the SHA-256 of the
      -- session id; deleting an operator or setting their password deletes their sessions.
      CREATE TABLE operators (
        name TEXT PRIMARY KEY NOT NULL, password_hash TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
        created_at INTEGER NOT NULL, last_sign_in_at INTEGER
      );
      CREATE TABLE console_sessions (
        id_hash TEXT PRIMARY KEY NOT NULL, operator TEXT NOT NULL,
        created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL
      );
      CREATE INDEX console_sessions_by_operator ON console_sessions (operator);
      CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
    `
}

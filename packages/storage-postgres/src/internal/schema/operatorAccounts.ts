/** Migration 17 of the PostgreSQL schema, "operator accounts": the console's operators and their sessions. */
import type { Migrations } from "@latchkey/core"

/** The operators (`OperatorStore`) and their console sessions, by the SHA-256 of the session id. */
export const operatorAccounts: Migrations.Migration = {
  version: 17,
  name: "operator accounts",
  sql: `
      -- Operator accounts of the console (OperatorStore) and their sessions, as SQLite's migration 24.
      CREATE TABLE operators (
        name            text PRIMARY KEY,
        password_hash   text NOT NULL,
        role            text NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
        created_at      bigint NOT NULL,
        last_sign_in_at bigint
      );
      CREATE TABLE console_sessions (
        id_hash    text PRIMARY KEY,
        operator   text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX console_sessions_by_operator ON console_sessions (operator);
      CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
    `
}

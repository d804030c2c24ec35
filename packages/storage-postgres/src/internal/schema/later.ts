/**
 * The migrations of the PostgreSQL schema from version 6, in order. Never edit a released one: append a new
 * version (a long one in a file of its own, as `reviewMigration`).
 */
import type { Migrations } from "@latchkey/core"
import { operatorAccounts } from "./operatorAccounts.js"
import { reviewMigration } from "./reviewMigration.js"

/** Versions 6 and later, in order. */
export const later: ReadonlyArray<Migrations.Migration> = [
  {
    version: 6,
    name: "logout",
    sql: `
      -- Where RP-initiated logout may send the browser back to (a JSON array of URIs, matched exactly).
      ALTER TABLE applications ADD COLUMN post_logout_redirect_uris jsonb NOT NULL DEFAULT '[]';
      -- OpenID Connect: the sign-in session the code was issued in, the ID token's sid (a digest,
      -- never the session cookie's value); NULL for a code issued outside a session or before this version.
      ALTER TABLE authorization_codes ADD COLUMN sid text;
    `
  },
  // The adapters number their migrations apart: SQLite's 13 and 14 are this adapter's 6 and 7.
  {
    version: 7,
    name: "second factor",
    sql: `
      -- FactorStore's rows, as SQLite's migration 14 keeps them: the TOTP secret only sealed,
      -- confirmed_at NULL while pending, last_step the last step accepted.
      CREATE TABLE totp_factors (
        user_id       text PRIMARY KEY,
        sealed_secret text NOT NULL,
        created_at    bigint NOT NULL,
        confirmed_at  bigint,
        last_step     bigint
      );
      -- Unused recovery codes, by keyed digest only; using one deletes it.
      CREATE TABLE recovery_codes (
        user_id     text NOT NULL,
        code_digest text NOT NULL,
        PRIMARY KEY (user_id, code_digest)
      );
    `
  },
  {
    version: 8,
    name: "passkeys",
    sql: `
      -- WebAuthn credentials (PasskeyStore), by the credential id the authenticator chose (base64url).
      -- public_key is the COSE public key (base64url); counter the signature counter last seen;
      -- transports a JSON array; device_type 'singleDevice' or 'multiDevice'.
      -- UserStore.remove deletes a user's passkeys in its transaction.
      CREATE TABLE passkeys (
        credential_id text PRIMARY KEY,
        user_id       text NOT NULL,
        public_key    text NOT NULL,
        counter       bigint NOT NULL,
        transports    jsonb NOT NULL,
        device_type   text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
        backed_up     boolean NOT NULL,
        name          text NOT NULL,
        created_at    bigint NOT NULL,
        last_used_at  bigint
      );
      CREATE INDEX passkeys_by_user ON passkeys (user_id, created_at);
      -- The sign-in method of a session ('password' or 'passkey'); NULL for one signed in before this version.
      ALTER TABLE sessions ADD COLUMN sign_in_method text;
    `
  },
  {
    version: 9,
    name: "the sign-in of codes and tokens",
    sql: `
      -- OpenID Connect: how the user signed in at auth_time ('password', 'passkey', 'passkey-device' or
      -- 'totp'), which the ID token's acr and amr tell; NULL for a code of no sign-in it knows of.
      ALTER TABLE authorization_codes ADD COLUMN sign_in_method text;
      -- The browser sign-in a token of an OpenID request came from (its code, and the refreshes of its
      -- tokens): when, and how; introspection and JWT access tokens tell its acr and auth_time. Both NULL
      -- for every other token and for one issued before this version.
      ALTER TABLE tokens ADD COLUMN auth_time bigint;
      ALTER TABLE tokens ADD COLUMN sign_in_method text;
    `
  },
  {
    version: 10,
    name: "back-channel logout",
    sql: `
      -- OpenID Connect Back-Channel Logout: where the application receives logout tokens (NULL: none),
      -- and whether they must carry sid.
      ALTER TABLE applications ADD COLUMN backchannel_logout_uri text;
      ALTER TABLE applications ADD COLUMN backchannel_logout_session_required boolean NOT NULL DEFAULT false;
      -- The applications a session handed an ID token to (LogoutStore.record), at most 32 a session;
      -- they become logout_deliveries in the transaction that deletes the session.
      CREATE TABLE session_clients (
        session_hash text NOT NULL,
        app_key      text NOT NULL,
        user_id      text NOT NULL,
        sub          text NOT NULL,
        sid          text NOT NULL,
        PRIMARY KEY (session_hash, app_key)
      );
      -- The outbox: one logout token owed per ended session and application. attempts counts the
      -- claims; a claim holds a row until lease_until (0: unclaimed); next_attempt_at 0 is at once.
      CREATE TABLE logout_deliveries (
        sid             text NOT NULL,
        app_key         text NOT NULL,
        user_id         text NOT NULL,
        sub             text NOT NULL,
        attempts        integer NOT NULL,
        next_attempt_at bigint NOT NULL,
        lease_until     bigint NOT NULL DEFAULT 0,
        claim           text,
        PRIMARY KEY (sid, app_key)
      );
      CREATE INDEX logout_deliveries_by_due ON logout_deliveries (next_attempt_at);
    `
  },
  {
    version: 11,
    name: "trusted-device generation",
    sql: `
      -- A user's trusted-device generation (UserStore.forgetDevices), signed into every
      -- trusted-device cookie: moved on by one, it ends the trust of every browser signed before.
      ALTER TABLE users ADD COLUMN device_generation bigint NOT NULL DEFAULT 0;
    `
  },
  {
    version: 12,
    name: "application second factor",
    sql: `
      -- Whether every authorization for the application needs a second factor, as SQLite's migration 19.
      ALTER TABLE applications ADD COLUMN require_mfa boolean NOT NULL DEFAULT false;
    `
  },
  {
    version: 13,
    name: "trusted devices",
    sql: `
      -- One row per trusted device (DeviceStore), as SQLite's migration 20.
      CREATE TABLE trusted_devices (
        id_hash         text PRIMARY KEY,
        user_id         text NOT NULL,
        browser         text,
        system          text,
        trusted_at      bigint NOT NULL,
        last_sign_in_at bigint NOT NULL,
        expires_at      bigint NOT NULL
      );
      CREATE INDEX trusted_devices_by_user ON trusted_devices (user_id);
      CREATE INDEX trusted_devices_by_expiry ON trusted_devices (expires_at);
    `
  },
  {
    version: 14,
    name: "scope catalogue",
    // The scope catalogue (ScopeStore), as SQLite's migration 21
    sql: `CREATE TABLE scope_catalogue (name text COLLATE "C" PRIMARY KEY, descriptions json NOT NULL,
      developer_requestable boolean NOT NULL, needs_review boolean NOT NULL,
      created_at bigint NOT NULL, updated_at bigint NOT NULL)`
  },
  reviewMigration,
  {
    version: 16,
    name: "client registration",
    sql: `
      -- Initial access tokens and registrations, as SQLite's migration 23.
      CREATE TABLE initial_access_tokens (
        token_hash text PRIMARY KEY,
        uses_left  integer NOT NULL,
        expires_at bigint NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE client_registrations (
        app_key           text PRIMARY KEY,
        access_token_hash text NOT NULL,
        registered_at     bigint NOT NULL
      );
    `
  },
  operatorAccounts
]

/**
 * The migrations of the SQLite schema from version 13, in order. Never edit a released one: append a new
 * version (a long one in a file of its own, as `reviewMigration`).
 */
import type { Migrations } from "@latchkey/core"
import { operatorAccounts } from "./operatorAccounts.js"
import { reviewMigration } from "./reviewMigration.js"

/** Versions 13 and later, in order. */
export const later: ReadonlyArray<Migrations.Migration> = [
  {
    version: 13,
    name: "logout",
    sql: `
      -- Where RP-initiated logout may send the browser back to (a JSON array of URIs, matched exactly).
      ALTER TABLE applications ADD COLUMN post_logout_redirect_uris TEXT NOT NULL DEFAULT '[]';
      -- OpenID Connect: the sign-in session the code was issued in, the ID token's sid (a digest,
      -- never the session cookie's value); NULL for a code issued outside a session or before this version.
      ALTER TABLE authorization_codes ADD COLUMN sid TEXT;
    `
  },
  {
    version: 14,
    name: "second factor",
    sql: `
      -- A user's authenticator app (TOTP, FactorStore): the secret sealed under a key derived from
      -- the server key, never in the clear; confirmed_at NULL while the enrolment is pending;
      -- last_step the last time step a code was accepted at (each step is accepted once).
      CREATE TABLE totp_factors (
        user_id       TEXT PRIMARY KEY NOT NULL,
        sealed_secret TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        confirmed_at  INTEGER,
        last_step     INTEGER
      );
      -- The unused recovery codes of a confirmed authenticator app, as keyed digests; a used one is deleted.
      CREATE TABLE recovery_codes (
        user_id     TEXT NOT NULL,
        code_digest TEXT NOT NULL,
        PRIMARY KEY (user_id, code_digest)
      );
    `
  },
  {
    version: 15,
    name: "passkeys",
    sql: `
      -- WebAuthn credentials (PasskeyStore), by the credential id the authenticator chose (base64url).
      -- public_key is the COSE public key (base64url); counter the signature counter last seen;
      -- transports a JSON array; device_type 'singleDevice' or 'multiDevice'; backed_up 0 or 1.
      -- UserStore.remove deletes a user's passkeys in its transaction.
      CREATE TABLE passkeys (
        credential_id TEXT PRIMARY KEY NOT NULL,
        user_id       TEXT NOT NULL,
        public_key    TEXT NOT NULL,
        counter       INTEGER NOT NULL,
        transports    TEXT NOT NULL,
        device_type   TEXT NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
        backed_up     INTEGER NOT NULL CHECK (backed_up IN (0, 1)),
        name          TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        last_used_at  INTEGER
      );
      CREATE INDEX passkeys_by_user ON passkeys (user_id, created_at);
      -- The sign-in method of a session ('password' or 'passkey'); NULL for one signed in before this version.
      ALTER TABLE sessions ADD COLUMN sign_in_method TEXT;
    `
  },
  {
    version: 16,
    name: "the sign-in of codes and tokens",
    sql: `
      -- OpenID Connect: how the user signed in at auth_time ('password', 'passkey', 'passkey-device' or
      -- 'totp'), which the ID token's acr and amr tell; NULL for a code of no sign-in it knows of.
      ALTER TABLE authorization_codes ADD COLUMN sign_in_method TEXT;
      -- The browser sign-in a token of an OpenID request came from (its code, and the refreshes of its
      -- tokens): when, and how; introspection and JWT access tokens tell its acr and auth_time. Both NULL
      -- for every other token and for one issued before this version.
      ALTER TABLE tokens ADD COLUMN auth_time INTEGER;
      ALTER TABLE tokens ADD COLUMN sign_in_method TEXT;
    `
  },
  {
    version: 17,
    name: "back-channel logout",
    sql: `
      -- OpenID Connect Back-Channel Logout: where the application receives logout tokens (NULL: none),
      -- and whether they must carry sid (0 or 1).
      ALTER TABLE applications ADD COLUMN backchannel_logout_uri TEXT;
      ALTER TABLE applications ADD COLUMN backchannel_logout_session_required INTEGER NOT NULL DEFAULT 0
        CHECK (backchannel_logout_session_required IN (0, 1));
      -- The applications a session handed an ID token to (LogoutStore.record), at most 32 a session;
      -- they become logout_deliveries in the transaction that deletes the session.
      CREATE TABLE session_clients (
        session_hash TEXT NOT NULL,
        app_key      TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        sub          TEXT NOT NULL,
        sid          TEXT NOT NULL,
        PRIMARY KEY (session_hash, app_key)
      );
      -- The outbox: one logout token owed per ended session and application. attempts counts the
      -- claims; a claim holds a row until lease_until (0: unclaimed); next_attempt_at 0 is at once.
      CREATE TABLE logout_deliveries (
        sid             TEXT NOT NULL,
        app_key         TEXT NOT NULL,
        user_id         TEXT NOT NULL,
        sub             TEXT NOT NULL,
        attempts        INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        lease_until     INTEGER NOT NULL DEFAULT 0,
        claim           TEXT,
        PRIMARY KEY (sid, app_key)
      );
      CREATE INDEX logout_deliveries_by_due ON logout_deliveries (next_attempt_at);
    `
  },
  {
    version: 18,
    name: "trusted-device generation",
    sql: `
      -- A user's trusted-device generation (UserStore.forgetDevices), signed into every
      -- trusted-device cookie: moved on by one, it ends the trust of every browser signed before.
      ALTER TABLE users ADD COLUMN device_generation INTEGER NOT NULL DEFAULT 0;
    `
  },
  {
    version: 19,
    name: "application second factor",
    sql: `
      -- Whether every authorization for the application needs a second factor (require_mfa); 0 for every one before.
      ALTER TABLE applications ADD COLUMN require_mfa INTEGER NOT NULL DEFAULT 0 CHECK (require_mfa IN (0, 1));
    `
  },
  {
    version: 20,
    name: "trusted devices",
    sql: `
      -- A trusted device (DeviceStore) by the SHA-256 of its cookie's nonce; browser and system: the
      -- User-Agent's coarse label (NULL: not recognised). Gone with a new password and with the user.
      CREATE TABLE trusted_devices (
        id_hash TEXT PRIMARY KEY NOT NULL, user_id TEXT NOT NULL, browser TEXT, system TEXT,
        trusted_at INTEGER NOT NULL, last_sign_in_at INTEGER NOT NULL, expires_at INTEGER NOT NULL
      );
      CREATE INDEX trusted_devices_by_user ON trusted_devices (user_id);
      CREATE INDEX trusted_devices_by_expiry ON trusted_devices (expires_at);
    `
  },
  {
    version: 21,
    name: "scope catalogue",
    // The scope catalogue (ScopeStore); names in BINARY collation: scope tokens are case-sensitive
    sql: `CREATE TABLE scope_catalogue (name TEXT PRIMARY KEY NOT NULL, descriptions TEXT NOT NULL,
      developer_requestable INTEGER NOT NULL CHECK (developer_requestable IN (0, 1)), needs_review
      INTEGER NOT NULL CHECK (needs_review IN (0, 1)), created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`
  },
  reviewMigration,
  {
    version: 23,
    name: "client registration",
    sql: `
      -- Initial access tokens (RFC 7591 §3) by their SHA-256; a registration access token's
      -- SHA-256 per registered application (RFC 7592), gone with the application.
      CREATE TABLE initial_access_tokens (
        token_hash TEXT PRIMARY KEY NOT NULL, uses_left INTEGER NOT NULL,
        expires_at INTEGER NOT NULL, created_at INTEGER NOT NULL
      );
      CREATE TABLE client_registrations (
        app_key TEXT PRIMARY KEY NOT NULL,
        access_token_hash TEXT NOT NULL, registered_at INTEGER NOT NULL
      );
    `
  },
  operatorAccounts
]

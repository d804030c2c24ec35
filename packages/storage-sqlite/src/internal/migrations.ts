/**
 * Forward-only schema migrations, applied at open inside one BEGIN IMMEDIATE
 * transaction and recorded in `latchkey_schema`.
 */
import { Migrations } from "@latchkey/core"
import type BetterSqlite3 from "better-sqlite3"
import { Either } from "effect"
import { operatorAccounts } from "./migrations/operatorAccounts.js"

/** Every migration, in order. Never edit a released one: append a new version. */
export const migrations: ReadonlyArray<Migrations.Migration> = [
  {
    version: 1,
    name: "initial schema",
    sql: `
      CREATE TABLE applications (
        app_key           TEXT PRIMARY KEY NOT NULL,
        name              TEXT NOT NULL,
        secret_digest     TEXT NOT NULL,
        redirect_uris     TEXT NOT NULL,
        scopes            TEXT NOT NULL,
        grant_types       TEXT NOT NULL,
        require_pkce      INTEGER NOT NULL CHECK (require_pkce IN (0, 1)),
        access_token_ttl  INTEGER,
        refresh_token_ttl INTEGER,
        created_at        INTEGER NOT NULL
      );
      CREATE INDEX applications_by_created_at ON applications (created_at);

      CREATE TABLE users (
        user_id       TEXT PRIMARY KEY NOT NULL,
        username      TEXT NOT NULL COLLATE BINARY,
        password_hash TEXT NOT NULL,
        created_at    INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX users_by_username ON users (username);
      CREATE INDEX users_by_created_at ON users (created_at);

      CREATE TABLE authorization_codes (
        code_hash             TEXT PRIMARY KEY NOT NULL,
        app_key               TEXT NOT NULL,
        redirect_uri          TEXT NOT NULL,
        user_id               TEXT NOT NULL,
        open_id               TEXT NOT NULL,
        scope                 TEXT NOT NULL,
        code_challenge        TEXT,
        code_challenge_method TEXT,
        family_id             TEXT NOT NULL,
        issued_at             INTEGER NOT NULL,
        expires_at            INTEGER NOT NULL,
        used_at               INTEGER
      );
      CREATE INDEX authorization_codes_by_expires_at ON authorization_codes (expires_at);

      CREATE TABLE tokens (
        kind        TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
        token_hash  TEXT NOT NULL,
        app_key     TEXT NOT NULL,
        user_id     TEXT,
        open_id     TEXT,
        scope       TEXT NOT NULL,
        family_id   TEXT NOT NULL,
        parent_hash TEXT,
        issued_at   INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL,
        revoked_at  INTEGER,
        rotated_at  INTEGER
      );
      CREATE UNIQUE INDEX tokens_by_hash ON tokens (kind, token_hash);
      CREATE INDEX tokens_by_family ON tokens (family_id);
      CREATE INDEX tokens_by_app ON tokens (app_key);
      CREATE INDEX tokens_by_user ON tokens (user_id) WHERE user_id IS NOT NULL;
      CREATE INDEX tokens_by_expires_at ON tokens (expires_at);

      CREATE TABLE consents (
        user_id    TEXT NOT NULL,
        app_key    TEXT NOT NULL,
        scope      TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, app_key)
      ) WITHOUT ROWID;

      CREATE TABLE open_ids (
        app_key TEXT NOT NULL,
        user_id TEXT NOT NULL,
        open_id TEXT NOT NULL,
        PRIMARY KEY (app_key, user_id)
      ) WITHOUT ROWID;

      CREATE TABLE settings (
        name  TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
    `
  },
  {
    version: 2,
    name: "audit trail",
    sql: `
      CREATE TABLE audit_events (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        at         INTEGER NOT NULL,
        type       TEXT NOT NULL,
        app_key    TEXT,
        user_id    TEXT,
        open_id    TEXT,
        address    TEXT,
        request_id TEXT,
        detail     TEXT
      );
      CREATE INDEX audit_events_by_app ON audit_events (app_key, id);
      -- append-only: the database itself refuses changes to recorded events
      CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
        BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
      CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
        BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
    `
  },
  {
    version: 3,
    name: "sign-in sessions",
    sql: `
      -- by the SHA-256 of the id the browser's cookie carries; user_id NULL while anonymous
      CREATE TABLE sessions (
        id_hash    TEXT PRIMARY KEY NOT NULL,
        user_id    TEXT,
        username   TEXT,
        expires_at INTEGER NOT NULL
      );
      -- eviction past maxSessions: the oldest anonymous sessions go first
      CREATE INDEX sessions_anonymous_by_expires_at ON sessions (expires_at) WHERE user_id IS NULL;
      -- sweep, and eviction of signed-in sessions once no anonymous one is left
      CREATE INDEX sessions_by_expires_at ON sessions (expires_at);

      -- No foreign key to sessions: the core adds a fresh session's first pending
      -- request before it saves the session (in the same request), so the parent
      -- row does not exist yet. Removal, eviction and the sweep delete a session's
      -- requests explicitly, in the transaction that deletes the session; a request
      -- whose session was never saved expires and is swept.
      -- seq orders a session's requests when created_at is equal (max + 1 per session).
      CREATE TABLE pending_authorizations (
        session_hash TEXT NOT NULL,
        txn          TEXT NOT NULL,
        seq          INTEGER NOT NULL,
        raw_query    TEXT NOT NULL,
        csrf_hash    TEXT NOT NULL,
        step         TEXT NOT NULL CHECK (step IN ('login', 'consent')),
        created_at   INTEGER NOT NULL,
        expires_at   INTEGER NOT NULL,
        PRIMARY KEY (session_hash, txn)
      ) WITHOUT ROWID;
      CREATE INDEX pending_authorizations_by_expires_at ON pending_authorizations (expires_at);
    `
  },
  {
    version: 4,
    name: "pending query characters",
    sql: `
      -- The characters of every pending authorize query together (SessionLimits.maxPendingBytes):
      -- one row, kept exact by the triggers below in the transaction of every change, so any
      -- process reads the total without summing the table. Initialised from the rows already there.
      CREATE TABLE pending_totals (
        id    INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
        chars INTEGER NOT NULL
      );
      INSERT INTO pending_totals (id, chars)
        SELECT 1, coalesce(sum(length(raw_query)), 0) FROM pending_authorizations;
      CREATE TRIGGER pending_authorizations_count_insert AFTER INSERT ON pending_authorizations
        BEGIN UPDATE pending_totals SET chars = chars + length(NEW.raw_query) WHERE id = 1; END;
      CREATE TRIGGER pending_authorizations_count_delete AFTER DELETE ON pending_authorizations
        BEGIN UPDATE pending_totals SET chars = chars - length(OLD.raw_query) WHERE id = 1; END;
      -- addPending's upsert of a txn already pending replaces its query
      CREATE TRIGGER pending_authorizations_count_update AFTER UPDATE OF raw_query ON pending_authorizations
        BEGIN UPDATE pending_totals SET chars = chars - length(OLD.raw_query) + length(NEW.raw_query) WHERE id = 1; END;
      -- eviction past maxPendingBytes: the oldest requests first
      CREATE INDEX pending_authorizations_by_created_at ON pending_authorizations (created_at, seq);
    `
  },
  {
    version: 5,
    name: "open_id lookup",
    sql: `
      -- OpenIdStore.findUser: is an open_id asserted with client_credentials one of the application's users?
      CREATE INDEX open_ids_by_open_id ON open_ids (app_key, open_id);
    `
  },
  {
    version: 6,
    name: "previous app secret",
    sql: `
      -- Admin.rotateSecret with a grace: the digest replaced keeps authenticating until
      -- previous_secret_expires_at (epoch seconds); previous_secret_used_at marks its first use
      -- since the rotation (ApplicationStore.markPreviousSecretUsed). All NULL without one.
      ALTER TABLE applications ADD COLUMN previous_secret_digest TEXT;
      ALTER TABLE applications ADD COLUMN previous_secret_expires_at INTEGER;
      ALTER TABLE applications ADD COLUMN previous_secret_used_at INTEGER;
    `
  },
  {
    version: 7,
    name: "audit retention",
    sql: `
      -- How long audit events stay append-only, in seconds: one row, written by every open
      -- (Options.auditRetentionDays, 1 to 3650 days; 90 until then) and read by the trigger below.
      CREATE TABLE audit_retention (
        id      INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
        seconds INTEGER NOT NULL CHECK (seconds BETWEEN 86400 AND 315360000)
      );
      INSERT INTO audit_retention (id, seconds) VALUES (1, 7776000);
      -- The purge (AuditStore.purgeBefore): the oldest events first.
      CREATE INDEX audit_events_by_at ON audit_events (at);
      -- An event may be deleted once older than the retention by the database's own clock, and
      -- only then: whoever deletes, whatever the statement. Without the retention row nothing is
      -- deleted. audit_events_no_update (migration 2) still refuses every UPDATE.
      DROP TRIGGER audit_events_no_delete;
      CREATE TRIGGER audit_events_no_delete_within_retention BEFORE DELETE ON audit_events
        WHEN NOT coalesce(OLD.at < CAST(strftime('%s', 'now') AS INTEGER)
          - (SELECT seconds FROM audit_retention WHERE id = 1), 0)
        BEGIN SELECT RAISE(ABORT, 'audit events inside the retention are append-only'); END;
    `
  },
  {
    version: 8,
    name: "throttle counters",
    sql: `
      -- Throttle counters shared by every process on the file (ThrottleStore): one row a key,
      -- read and written inside one write transaction per attempt. Keys hold usernames, App Keys
      -- and addresses, never a secret.
      CREATE TABLE throttle (
        key          TEXT PRIMARY KEY NOT NULL,
        failures     INTEGER NOT NULL,
        last_failure INTEGER NOT NULL,
        locked_until INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX throttle_by_last_failure ON throttle (last_failure);
    `
  },
  {
    version: 9,
    name: "administration",
    sql: `
      -- UserStore.setDisabled: epoch seconds the account was disabled at, NULL while it is enabled.
      ALTER TABLE users ADD COLUMN disabled_at INTEGER;
      -- Who made an administrative change (admin-api, cli, user); NULL for the protocol's events.
      -- Adding a column changes no row: the append-only triggers of audit_events stay as they are.
      ALTER TABLE audit_events ADD COLUMN actor TEXT;
      -- AuditStore.query of one type: newest first in index order (the rowid, id, follows at).
      CREATE INDEX audit_events_by_type ON audit_events (type, at);
      -- TokenStore.revokeSubject by open_id; as its prefix, the lookups by application too, so
      -- it replaces tokens_by_app and a token insert writes no more index entries than before.
      CREATE INDEX tokens_by_app_open_id ON tokens (app_key, open_id);
      DROP INDEX tokens_by_app;
    `
  },
  {
    version: 10,
    name: "session sign-in time, sessions by user",
    sql: `
      -- When the session's user signed in (SessionRecord.authenticatedAt): the absolute lifetime
      -- runs from it. A session signed in before this version counts as signed in now: it lives
      -- at most one absolute lifetime more.
      ALTER TABLE sessions ADD COLUMN authenticated_at INTEGER;
      UPDATE sessions SET authenticated_at = CAST(strftime('%s', 'now') AS INTEGER) WHERE user_id IS NOT NULL;
      -- UserStore.setDisabled, setPasswordHash and remove delete the user's sessions.
      CREATE INDEX sessions_by_user ON sessions (user_id) WHERE user_id IS NOT NULL;
    `
  },
  {
    version: 11,
    name: "OpenID Connect, JWT access tokens, public clients",
    sql: `
      -- A public client (RFC 6749 §2.1): no App Secret (secret_digest is ''), PKCE S256 only. 0 or 1.
      ALTER TABLE applications ADD COLUMN public INTEGER NOT NULL DEFAULT 0 CHECK (public IN (0, 1));
      -- Its access tokens' format: 'opaque' (random strings, stored by digest) or 'jwt' (RFC 9068).
      ALTER TABLE applications ADD COLUMN access_token_format TEXT NOT NULL DEFAULT 'opaque';
      -- The aud of its JWT access tokens; NULL for the issuer.
      ALTER TABLE applications ADD COLUMN access_token_audience TEXT;
      -- OpenID Connect: the nonce of the authorization request, returned in the ID token; NULL without one.
      ALTER TABLE authorization_codes ADD COLUMN nonce TEXT;
      -- OpenID Connect: when the user signed in (epoch seconds), the ID token's auth_time; NULL for a code
      -- issued before this version.
      ALTER TABLE authorization_codes ADD COLUMN auth_time INTEGER;

      -- The keys ID tokens and JWT access tokens are signed with (KeyStore), by kid (the public key's
      -- JWK thumbprint). public_jwk is the JWK the JWKS publishes; sealed_private_jwk the private JWK
      -- sealed under a key derived from the server key, never in the clear. retired_at is NULL for
      -- the signing key, else when a rotation replaced it; publish_until (retired keys only) is when
      -- every token it signed has expired and it leaves the JWKS.
      CREATE TABLE signing_keys (
        kid                TEXT PRIMARY KEY NOT NULL,
        alg                TEXT NOT NULL,
        public_jwk         TEXT NOT NULL,
        sealed_private_jwk TEXT NOT NULL,
        created_at         INTEGER NOT NULL,
        retired_at         INTEGER,
        publish_until      INTEGER
      );
      -- At most one signing key: every row with retired_at NULL has the same indexed value, so a
      -- second one is a conflict (KeyStore.initialize inserts ON CONFLICT DO NOTHING).
      CREATE UNIQUE INDEX signing_keys_one_signing ON signing_keys ((retired_at IS NULL))
        WHERE retired_at IS NULL;
      -- KeyStore.removeExpired: retired keys no longer published.
      CREATE INDEX signing_keys_by_publish_until ON signing_keys (publish_until)
        WHERE retired_at IS NOT NULL;
    `
  },
  {
    version: 12,
    name: "web origins, token endpoint authentication method, scope delimiter",
    sql: `
      -- The browser origins (a JSON array of 'https://host[:port]') whose pages may call the token,
      -- revocation and userinfo endpoints for this application (CORS).
      ALTER TABLE applications ADD COLUMN web_origins TEXT NOT NULL DEFAULT '[]';
      -- How a confidential application sends its App Secret: 'client_secret_basic' or 'client_secret_post'.
      ALTER TABLE applications ADD COLUMN token_endpoint_auth_method TEXT NOT NULL DEFAULT 'client_secret_basic';
      -- How its answers join scopes: 'comma' (the interface's form) or 'space' (RFC 6749 §3.3).
      ALTER TABLE applications ADD COLUMN scope_delimiter TEXT NOT NULL DEFAULT 'comma';
    `
  },
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
  operatorAccounts
]

/** The schema version this build writes. */
export const latestVersion: number = Migrations.latestOf(migrations)

/** The database was written by a newer Latchkey than this one. */
export class NewerSchemaError extends Error {
  constructor(readonly found: number) {
    super(
      `the database has schema version ${found}, newer than this @latchkey/storage-sqlite supports ` +
        `(${latestVersion}); upgrade Latchkey, or restore a backup taken before the upgrade`
    )
    this.name = "NewerSchemaError"
  }
}

/**
 * Bring the schema up to `latestVersion`: idempotent, forward-only, all steps in
 * one BEGIN IMMEDIATE transaction so concurrent openers apply each step once.
 * Returns the version found before migrating.
 */
export const migrate = (db: BetterSqlite3.Database, now: number): number =>
  db
    .transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS latchkey_schema (
        version    INTEGER PRIMARY KEY NOT NULL,
        name       TEXT NOT NULL,
        applied_at INTEGER NOT NULL
      )`)
      const row = db.prepare("SELECT coalesce(max(version), 0) AS version FROM latchkey_schema").get() as {
        version: number
      }
      const steps = Migrations.plan(migrations, row.version)
      if (Either.isLeft(steps)) throw new NewerSchemaError(steps.left)
      const record = db.prepare("INSERT INTO latchkey_schema (version, name, applied_at) VALUES (?, ?, ?)")
      for (const m of steps.right) {
        db.exec(m.sql)
        record.run(m.version, m.name, now)
      }
      return row.version
    })
    .immediate()

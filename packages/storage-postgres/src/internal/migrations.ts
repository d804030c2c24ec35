/**
 * Forward-only schema migrations, applied when a layer is built: all pending steps in one
 * transaction, under an advisory lock taken before it begins, and recorded in `latchkey_schema`.
 * Tables go to the first schema of the connection's search_path.
 */
import { Migrations, StorageError } from "@latchkey/core"
import { Effect, Either } from "effect"
import type { Tx } from "./database.js"
import { operatorAccounts } from "./migrations/operatorAccounts.js"

/** Every migration, in order. Never edit a released one: append a new version. */
export const migrations: ReadonlyArray<Migrations.Migration> = [
  {
    version: 1,
    name: "initial schema",
    sql: `
      -- Times are whole epoch seconds (bigint). seq columns keep the order rows arrived in, for
      -- ties: they are what SQLite's rowid is to the SQLite store.
      CREATE TABLE applications (
        app_key                    text PRIMARY KEY,
        name                       text NOT NULL,
        secret_digest              text NOT NULL,
        redirect_uris              jsonb NOT NULL,
        scopes                     jsonb NOT NULL,
        grant_types                jsonb NOT NULL,
        require_pkce               boolean NOT NULL,
        access_token_ttl           bigint,
        refresh_token_ttl          bigint,
        created_at                 bigint NOT NULL,
        -- Admin.rotateSecret with a grace: the digest replaced keeps authenticating until
        -- previous_secret_expires_at; previous_secret_used_at marks its first use since then.
        previous_secret_digest     text,
        previous_secret_expires_at bigint,
        previous_secret_used_at    bigint,
        seq                        bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX applications_by_created_at ON applications (created_at, seq);

      -- Usernames compare byte for byte (collation "C"): case, spacing and accents count.
      CREATE TABLE users (
        user_id       text PRIMARY KEY,
        username      text COLLATE "C" NOT NULL UNIQUE,
        password_hash text NOT NULL,
        created_at    bigint NOT NULL,
        seq           bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX users_by_created_at ON users (created_at, seq);

      CREATE TABLE authorization_codes (
        code_hash             text PRIMARY KEY,
        app_key               text NOT NULL,
        redirect_uri          text NOT NULL,
        user_id               text NOT NULL,
        open_id               text NOT NULL,
        scope                 jsonb NOT NULL,
        code_challenge        text,
        code_challenge_method text,
        family_id             text NOT NULL,
        issued_at             bigint NOT NULL,
        expires_at            bigint NOT NULL,
        used_at               bigint
      );
      CREATE INDEX authorization_codes_by_expires_at ON authorization_codes (expires_at);

      CREATE TABLE tokens (
        kind        text NOT NULL CHECK (kind IN ('access', 'refresh')),
        token_hash  text NOT NULL,
        app_key     text NOT NULL,
        user_id     text,
        open_id     text,
        scope       jsonb NOT NULL,
        family_id   text NOT NULL,
        parent_hash text,
        issued_at   bigint NOT NULL,
        expires_at  bigint NOT NULL,
        revoked_at  bigint,
        rotated_at  bigint,
        PRIMARY KEY (kind, token_hash)
      );
      CREATE INDEX tokens_by_family ON tokens (family_id);
      CREATE INDEX tokens_by_app ON tokens (app_key);
      CREATE INDEX tokens_by_user ON tokens (user_id) WHERE user_id IS NOT NULL;
      CREATE INDEX tokens_by_expires_at ON tokens (expires_at);

      CREATE TABLE consents (
        user_id    text NOT NULL,
        app_key    text NOT NULL,
        scope      jsonb NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (user_id, app_key)
      );

      CREATE TABLE open_ids (
        app_key text NOT NULL,
        user_id text NOT NULL,
        open_id text NOT NULL,
        PRIMARY KEY (app_key, user_id)
      );
      -- OpenIdStore.findUser: is an open_id asserted with client_credentials one of the application's users?
      CREATE INDEX open_ids_by_open_id ON open_ids (app_key, open_id);

      CREATE TABLE settings (
        name  text PRIMARY KEY,
        value text NOT NULL
      );

      -- Sign-in sessions, by the SHA-256 of the id the browser's cookie carries; user_id NULL while anonymous.
      -- An update keeps seq: eviction orders by expiry, then by seq.
      CREATE TABLE sessions (
        id_hash    text PRIMARY KEY,
        user_id    text,
        username   text,
        expires_at bigint NOT NULL,
        seq        bigint GENERATED ALWAYS AS IDENTITY
      );
      -- eviction past maxSessions: the oldest anonymous sessions go first
      CREATE INDEX sessions_anonymous_by_expires_at ON sessions (expires_at, seq) WHERE user_id IS NULL;
      -- the sweep, and eviction of signed-in sessions once no anonymous one is left
      CREATE INDEX sessions_by_expires_at ON sessions (expires_at, seq);

      -- No foreign key to sessions: the core adds a fresh session's first pending request
      -- before it saves the session. Removal, eviction and the sweep delete a session's
      -- requests explicitly, in the transaction that deletes the session; a request whose
      -- session was never saved expires and is swept. seq orders requests created in the
      -- same second; a txn added again takes a new one (it moves to the end).
      CREATE TABLE pending_authorizations (
        session_hash text NOT NULL,
        txn          text NOT NULL,
        seq          bigint GENERATED BY DEFAULT AS IDENTITY,
        raw_query    text NOT NULL,
        csrf_hash    text NOT NULL,
        step         text NOT NULL CHECK (step IN ('login', 'consent')),
        created_at   bigint NOT NULL,
        expires_at   bigint NOT NULL,
        PRIMARY KEY (session_hash, txn)
      );
      CREATE INDEX pending_authorizations_by_expires_at ON pending_authorizations (expires_at);
      -- eviction past maxPendingBytes: the oldest requests first
      CREATE INDEX pending_authorizations_by_created_at ON pending_authorizations (created_at, seq);

      -- The characters of every pending authorize query together (SessionLimits.maxPendingBytes):
      -- one row, kept exact by the trigger below in the transaction of every change, so any
      -- instance reads the total without summing the table.
      CREATE TABLE pending_totals (
        id    integer PRIMARY KEY CHECK (id = 1),
        chars bigint NOT NULL
      );
      INSERT INTO pending_totals (id, chars) VALUES (1, 0);
      CREATE FUNCTION latchkey_count_pending() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE pending_totals SET chars = chars + length(NEW.raw_query) WHERE id = 1;
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE pending_totals SET chars = chars - length(OLD.raw_query) WHERE id = 1;
        ELSE
          UPDATE pending_totals SET chars = chars - length(OLD.raw_query) + length(NEW.raw_query) WHERE id = 1;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER pending_authorizations_count AFTER INSERT OR DELETE OR UPDATE OF raw_query
        ON pending_authorizations FOR EACH ROW EXECUTE FUNCTION latchkey_count_pending();
      CREATE FUNCTION latchkey_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '% cannot be truncated', TG_TABLE_NAME;
      END $$;
      -- TRUNCATE runs no row trigger: it would leave the total wrong.
      CREATE TRIGGER pending_authorizations_no_truncate BEFORE TRUNCATE ON pending_authorizations
        FOR EACH STATEMENT EXECUTE FUNCTION latchkey_no_truncate();

      -- Throttle counters shared by every instance (ThrottleStore): one row a key. Keys hold
      -- usernames, App Keys and addresses, never a secret.
      CREATE TABLE throttle (
        key          text PRIMARY KEY,
        failures     integer NOT NULL,
        last_failure bigint NOT NULL,
        locked_until bigint NOT NULL
      );
      CREATE INDEX throttle_by_last_failure ON throttle (last_failure);

      CREATE TABLE audit_events (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at         bigint NOT NULL,
        type       text NOT NULL,
        app_key    text,
        user_id    text,
        open_id    text,
        address    text,
        request_id text,
        detail     text
      );
      CREATE INDEX audit_events_by_app ON audit_events (app_key, id);
      -- the purge (AuditStore.purgeBefore): the oldest events first
      CREATE INDEX audit_events_by_at ON audit_events (at, id);

      -- How long audit events stay append-only, in seconds: one row, written by every layer
      -- that opens the database (Options.auditRetentionDays, 1 to 3650 days; 90 until then).
      CREATE TABLE audit_retention (
        id      integer PRIMARY KEY CHECK (id = 1),
        seconds bigint NOT NULL CHECK (seconds BETWEEN 86400 AND 315360000)
      );
      INSERT INTO audit_retention (id, seconds) VALUES (1, 7776000);

      -- Append-only: every UPDATE is refused, and a DELETE of an event not older than the
      -- retention by the database's clock (or of any event without the retention row), whoever
      -- runs it, whatever the statement. TRUNCATE, which runs no row trigger, is refused as well.
      CREATE FUNCTION latchkey_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          RAISE EXCEPTION 'audit events are append-only';
        END IF;
        IF NOT coalesce(OLD.at < floor(extract(epoch FROM now()))::bigint
            - (SELECT seconds FROM audit_retention WHERE id = 1), false) THEN
          RAISE EXCEPTION 'audit events inside the retention are append-only';
        END IF;
        RETURN OLD;
      END $$;
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION latchkey_audit_append_only();
      CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
        FOR EACH STATEMENT EXECUTE FUNCTION latchkey_no_truncate();
    `
  },
  {
    version: 2,
    name: "disabled users, audit actors and queries, revocation by subject",
    sql: `
      -- UserStore.setDisabled: when an administrator disabled the account; NULL while enabled.
      ALTER TABLE users ADD COLUMN disabled_at bigint;

      -- Who made an administrative change (admin-api, cli, user); NULL for the protocol's events.
      -- A new nullable column changes no row, so the append-only trigger is not involved.
      ALTER TABLE audit_events ADD COLUMN actor text;
      -- AuditStore.query: the newest events (by at, then id) of one application, or of one type;
      -- without either filter audit_events_by_at is read backwards.
      CREATE INDEX audit_events_by_app_at ON audit_events (app_key, at, id);
      CREATE INDEX audit_events_by_type_at ON audit_events (type, at, id);

      -- TokenStore.revokeSubject by open_id; it also serves every lookup by App Key alone.
      CREATE INDEX tokens_by_app_open_id ON tokens (app_key, open_id);
      DROP INDEX tokens_by_app;
    `
  },
  {
    version: 3,
    name: "session sign-in time, sessions by user",
    sql: `
      -- When the session's user signed in (SessionRecord.authenticatedAt): the absolute lifetime
      -- runs from it. A session signed in before this version counts as signed in now: it lives
      -- at most one absolute lifetime more.
      ALTER TABLE sessions ADD COLUMN authenticated_at bigint;
      UPDATE sessions SET authenticated_at = floor(extract(epoch FROM now()))::bigint WHERE user_id IS NOT NULL;
      -- UserStore.setDisabled, setPasswordHash and remove delete the user's sessions.
      CREATE INDEX sessions_by_user ON sessions (user_id) WHERE user_id IS NOT NULL;
    `
  },
  {
    version: 4,
    name: "OpenID Connect, JWT access tokens, public clients",
    sql: `
      -- A public client (RFC 6749 §2.1): no App Secret (secret_digest is ''), PKCE S256 only.
      ALTER TABLE applications ADD COLUMN public boolean NOT NULL DEFAULT false;
      -- Its access tokens' format: 'opaque' (random strings, stored by digest) or 'jwt' (RFC 9068).
      ALTER TABLE applications ADD COLUMN access_token_format text NOT NULL DEFAULT 'opaque';
      -- The aud of its JWT access tokens; NULL for the issuer.
      ALTER TABLE applications ADD COLUMN access_token_audience text;
      -- OpenID Connect: the nonce of the authorization request, returned in the ID token; NULL without one.
      ALTER TABLE authorization_codes ADD COLUMN nonce text;
      -- OpenID Connect: when the user signed in (epoch seconds), the ID token's auth_time; NULL for a code
      -- issued before this version.
      ALTER TABLE authorization_codes ADD COLUMN auth_time bigint;

      -- The keys ID tokens and JWT access tokens are signed with (KeyStore), by kid (the public key's
      -- JWK thumbprint). public_jwk is the JWK the JWKS publishes; sealed_private_jwk the private JWK
      -- sealed under a key derived from the server key, never in the clear. retired_at is NULL for
      -- the signing key, else when a rotation replaced it; publish_until (retired keys only) is when
      -- every token it signed has expired and it leaves the JWKS. seq orders keys created in the
      -- same second.
      CREATE TABLE signing_keys (
        kid                text PRIMARY KEY,
        alg                text NOT NULL,
        public_jwk         text NOT NULL,
        sealed_private_jwk text NOT NULL,
        created_at         bigint NOT NULL,
        retired_at         bigint,
        publish_until      bigint,
        seq                bigint GENERATED ALWAYS AS IDENTITY
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
    version: 5,
    name: "web origins, token endpoint authentication method, scope delimiter",
    sql: `
      -- The browser origins (a JSON array of 'https://host[:port]') whose pages may call the token,
      -- revocation and userinfo endpoints for this application (CORS).
      ALTER TABLE applications ADD COLUMN web_origins jsonb NOT NULL DEFAULT '[]';
      -- How a confidential application sends its App Secret: 'client_secret_basic' or 'client_secret_post'.
      ALTER TABLE applications ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_basic';
      -- How its answers join scopes: 'comma' (the interface's form) or 'space' (RFC 6749 §3.3).
      ALTER TABLE applications ADD COLUMN scope_delimiter text NOT NULL DEFAULT 'comma';
    `
  },
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
  operatorAccounts
]

/** The schema version this build writes. */
export const latestVersion: number = Migrations.latestOf(migrations)

/** The database was written by a newer Latchkey than this one. */
export const newerSchema = (found: number): StorageError.StorageError =>
  new StorageError.StorageError({
    message:
      `database schema version ${found} is newer than this build supports (${latestVersion}); ` +
      "upgrade Latchkey, or restore a backup taken before the upgrade"
  })

/** Creates the version table when it is missing; the first statement of every migration run. */
export const createSchemaTable = `CREATE TABLE IF NOT EXISTS latchkey_schema (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at bigint NOT NULL
)`

/**
 * Bring the schema up to `latestVersion` inside `tx` (one transaction, under the migration
 * lock): idempotent and forward-only. Returns the version found before migrating; fails with
 * a StorageError naming both versions for a database of a newer build.
 */
export const migrate = (tx: Tx): Effect.Effect<number, StorageError.StorageError> =>
  Effect.gen(function* () {
    yield* tx.query(createSchemaTable)
    const found = yield* tx.query("SELECT coalesce(max(version), 0) AS version FROM latchkey_schema")
    const version = Number(found.rows[0]?.version ?? 0)
    const steps = Migrations.plan(migrations, version)
    if (Either.isLeft(steps)) return yield* Effect.fail(newerSchema(steps.left))
    for (const m of steps.right) {
      yield* tx.query(m.sql)
      yield* tx.query(
        `INSERT INTO latchkey_schema (version, name, applied_at)
          VALUES ($1, $2, floor(extract(epoch FROM now()))::bigint)`,
        [m.version, m.name]
      )
    }
    return version
  })

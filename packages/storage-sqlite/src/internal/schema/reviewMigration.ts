/** SQLite migration 22, "application review and ownership" (docs/platform.md), kept in a file of its own. */
import type { Migrations } from "@latchkey/core"

/** The review status of applications and their owners. */
export const reviewMigration: Migrations.Migration = {
  version: 22,
  name: "application review and ownership",
  sql: `
    -- The review status of an application and the operator's reason; 'active' for every one before.
    ALTER TABLE applications ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
      CHECK (status IN ('active', 'pending', 'rejected', 'suspended'));
    ALTER TABLE applications ADD COLUMN status_reason TEXT;
    -- The users who own an application (none for one an operator registered); gone with either.
    CREATE TABLE application_owners (
      app_key TEXT NOT NULL, user_id TEXT NOT NULL, added_at INTEGER NOT NULL,
      PRIMARY KEY (app_key, user_id)
    ) WITHOUT ROWID;
    CREATE INDEX application_owners_by_user ON application_owners (user_id);
  `
}

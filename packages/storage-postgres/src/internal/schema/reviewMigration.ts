/** PostgreSQL migration 15, "application review and ownership" (docs/platform.md), kept in a file of its own. */
import type { Migrations } from "@latchkey/core"

/** The review status of applications and their owners, as SQLite's migration 22. */
export const reviewMigration: Migrations.Migration = {
  version: 15,
  name: "application review and ownership",
  sql: `
    ALTER TABLE applications ADD COLUMN status text NOT NULL DEFAULT 'active'
      CHECK (status IN ('active', 'pending', 'rejected', 'suspended'));
    ALTER TABLE applications ADD COLUMN status_reason text;
    CREATE TABLE application_owners (
      app_key  text NOT NULL,
      user_id  text NOT NULL,
      added_at bigint NOT NULL,
      PRIMARY KEY (app_key, user_id)
    );
    CREATE INDEX application_owners_by_user ON application_owners (user_id);
  `
}

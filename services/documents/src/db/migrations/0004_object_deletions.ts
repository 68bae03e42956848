import type { Migration } from '@crm/db';
import { sql } from 'kysely';

// DELETE /documents/{id} deletes the row and then, after the commit, the stored object. Each
// object to remove is written here in the deleting transaction and deleted from here once the
// bucket confirms; a row that stays (storage down after the commit) is retried by a background
// job, so no object of a deleted document is lost track of. Frozen: never import application code here.

export const m0004ObjectDeletions: Migration = {
  name: '0004_object_deletions',
  async up(db) {
    await sql`create table object_deletions (
      storage_key text primary key,
      tenant_id text not null,
      created_at timestamptz not null default now(),
      attempts integer not null default 0,
      last_error text
    )`.execute(db);
    await sql`create index object_deletions_created_at on object_deletions (created_at)`.execute(db);
  },
};

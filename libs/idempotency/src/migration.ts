import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The exactly-once records table every service that takes writes includes in its migrations
 * (frozen). A row exists only for a write that committed: it is inserted in the write's own
 * transaction together with the answer.
 */
export const idempotencyMigration: Migration = {
  name: '0000_idempotency_records',
  async up(db) {
    await sql`create table idempotency_records (
      tenant_id text not null check (length(tenant_id) between 1 and 255),
      key text not null check (length(key) between 1 and 255),
      fingerprint text not null,
      status integer not null check (status between 200 and 599),
      body text not null,
      headers jsonb not null default '{}',
      created_at timestamptz not null default now(),
      primary key (tenant_id, key)
    )`.execute(db);
    await sql`create index idempotency_records_created on idempotency_records (created_at)`.execute(db);
  },
};

import type { Migration } from '@crm/db';
import { sql } from 'kysely';

// Contract §22 and §25. The events feed lists an account's events in the order of the JetStream
// stream, so each stored event keeps its stream sequence (`seq`, unique: one stream). Events stored
// before this migration have none and stay out of the feed (their position is unknown). Keyset
// list walks want (tenant, sort column, id) indexes; the retention purge wants `occurred_at`, and
// its cascade (events → delivery_tasks → delivery_attempts) an index on the attempts' task.
// Frozen: never import application code here.
export const m0003EventsFeed: Migration = {
  name: '0003_events_feed',
  async up(db) {
    await sql`alter table events add column seq bigint,
      add constraint events_seq_range check (seq >= 1)`.execute(db);
    await sql`create unique index events_seq on events (seq)`.execute(db);
    // The feed: a tenant's events in stream order (page and cursor walks, counts).
    await sql`create index events_tenant_seq on events (tenant_id, seq) where seq is not null`.execute(db);
    // `created_since` / `updated_since` of the feed.
    await sql`create index events_tenant_occurred_at on events (tenant_id, occurred_at)`.execute(db);
    // The retention purge walks the oldest events of every tenant.
    await sql`create index events_occurred_at on events (occurred_at)`.execute(db);
    // Purging an event deletes its tasks, and each task its attempts: without this every deleted
    // task would scan the whole attempt log.
    await sql`create index delivery_attempts_task on delivery_attempts (task_id)`.execute(db);
    // Keyset walks of the endpoint list (id is served by endpoints_tenant) and the delivery log
    // (id is served by delivery_attempts_endpoint).
    await sql`create index endpoints_tenant_created_at on endpoints (tenant_id, created_at, id)`.execute(db);
    await sql`create index endpoints_tenant_updated_at on endpoints (tenant_id, updated_at, id)`.execute(db);
    await sql`create index delivery_attempts_endpoint_created_at on delivery_attempts (endpoint_id, created_at, id)`.execute(db);
  },
};

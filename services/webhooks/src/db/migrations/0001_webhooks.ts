import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/** Endpoints, the events received from JetStream, one delivery task per (event, endpoint), and the attempt log. */
export const webhooksMigration: Migration = {
  name: '0001_webhooks',
  async up(db) {
    await sql`create table endpoints (
      id bigserial primary key,
      tenant_id text not null,
      url text not null,
      description text,
      events text[] not null default '{*}',
      enabled boolean not null default true,
      disabled_reason text,
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create index endpoints_tenant on endpoints (tenant_id, id)`.execute(db);
    await sql`create table events (
      id text primary key,
      tenant_id text not null,
      type text not null,
      data jsonb not null,
      occurred_at timestamptz not null,
      received_at timestamptz not null default now()
    )`.execute(db);
    await sql`create table delivery_tasks (
      id bigserial primary key,
      tenant_id text not null,
      event_id text not null references events (id) on delete cascade,
      endpoint_id bigint not null references endpoints (id) on delete cascade,
      status text not null default 'pending',
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      queued_attempt_id bigint,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint delivery_tasks_event_endpoint unique (event_id, endpoint_id)
    )`.execute(db);
    await sql`create index delivery_tasks_due on delivery_tasks (next_attempt_at) where status = 'pending'`.execute(db);
    await sql`create index delivery_tasks_endpoint on delivery_tasks (endpoint_id)`.execute(db);
    await sql`create table delivery_attempts (
      id bigserial primary key,
      tenant_id text not null,
      task_id bigint not null references delivery_tasks (id) on delete cascade,
      endpoint_id bigint not null references endpoints (id) on delete cascade,
      event_id text not null,
      event_type text not null,
      attempt integer not null,
      status text not null,
      status_code integer,
      error text,
      response_excerpt text,
      duration_ms integer,
      created_at timestamptz not null default now(),
      next_attempt_at timestamptz
    )`.execute(db);
    await sql`create index delivery_attempts_endpoint on delivery_attempts (endpoint_id, id)`.execute(db);
  },
};

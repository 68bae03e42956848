import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/** Shared state of the /v1 policies: rate-limit buckets (GCRA), idempotency records, audit log. */
export const m0002Policies: Migration = {
  name: '0002_policies',
  async up(db) {
    // One row per bucket: the GCRA "theoretical arrival time" in epoch milliseconds.
    await sql`create table rate_limits (
      bucket text primary key,
      tat_ms double precision not null,
      allowed boolean not null
    )`.execute(db);
    await sql`create table idempotency_keys (
      tenant_id text not null,
      key text not null,
      fingerprint text not null,
      claim_token uuid,
      locked_until timestamptz,
      status integer,
      headers jsonb,
      body bytea,
      created_at timestamptz not null default now(),
      primary key (tenant_id, key)
    )`.execute(db);
    await sql`create index idempotency_keys_created_at on idempotency_keys (created_at)`.execute(db);
    await sql`create table audit_logs (
      id bigserial primary key,
      occurred_at timestamptz not null,
      request_id text not null,
      tenant_id text,
      key_id text,
      method text not null,
      path text not null,
      query text,
      status integer not null,
      duration_ms double precision not null,
      client_ip text,
      user_agent text,
      idempotency_key text,
      replayed boolean not null default false,
      error_type text
    )`.execute(db);
    await sql`create index audit_logs_tenant_time on audit_logs (tenant_id, occurred_at desc, id desc)`.execute(db);
  },
};

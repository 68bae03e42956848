import type { Migration } from '@crm/db';
import { sql } from 'kysely';

export const m0001Tenants: Migration = {
  name: '0001_tenants',
  async up(db) {
    await sql`create table tenants (
      id text primary key,
      name text not null,
      read_per_minute integer not null,
      write_per_minute integer not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create table api_keys (
      id text primary key,
      tenant_id text not null references tenants (id),
      key_hash text not null unique,
      prefix text not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz
    )`.execute(db);
    await sql`create unique index api_keys_one_active on api_keys (tenant_id) where revoked_at is null`.execute(db);
  },
};

import type { Migration } from '@crm/db';
import { sql } from 'kysely';

export const m0001Users: Migration = {
  name: '0001_users',
  async up(db) {
    await sql`create table users (
      id serial primary key,
      tenant_id text not null,
      email text not null,
      name text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create unique index users_tenant_email on users (tenant_id, lower(email))`.execute(db);
  },
};

import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Keyset walks of `GET /users` (contract §22): a cursor page is `(sort, id) > (key, id)` inside
 * one tenant, which wants a (tenant_id, sort column, id) index per sortable field. Users had only
 * the unique (tenant_id, lower(email)); contacts already have one per sort (0002).
 */
export const m0030UsersKeyset: Migration = {
  name: '0030_users_keyset',
  async up(db) {
    await sql`create index users_tenant_id on users (tenant_id, id)`.execute(db);
    await sql`create index users_tenant_name on users (tenant_id, name, id)`.execute(db);
    await sql`create index users_tenant_email_sort on users (tenant_id, email, id)`.execute(db);
    await sql`create index users_tenant_created on users (tenant_id, created_at, id)`.execute(db);
    await sql`create index users_tenant_updated on users (tenant_id, updated_at, id)`.execute(db);
  },
};

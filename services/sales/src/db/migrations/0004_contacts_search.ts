import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Trigram indexes for `GET /contacts?q=` (case-insensitive substring of name, email or cif):
 * without them every search reads all of the tenant's rows. pg_trgm is a trusted extension
 * (PostgreSQL ≥ 13), created in `public` so the schema's search_path finds its operators.
 */
export const m0004ContactsSearch: Migration = {
  name: '0004_contacts_search',
  async up(db) {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    await sql`create index contacts_name_trgm on contacts using gin (name public.gin_trgm_ops)`.execute(db);
    await sql`create index contacts_email_trgm on contacts using gin (email public.gin_trgm_ops)`.execute(db);
    await sql`create index contacts_cif_trgm on contacts using gin (cif public.gin_trgm_ops)`.execute(db);
  },
};

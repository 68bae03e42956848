import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Contacts with their types, single location and assigned users. Every lookup index leads
 * with tenant_id so list pages, filters and identifier resolution stay inside one tenant.
 */
export const m0002Contacts: Migration = {
  name: '0002_contacts',
  async up(db) {
    await sql`create table contact_types (
      id serial primary key,
      tenant_id text not null,
      reference text not null,
      name text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
    await sql`create unique index contact_types_tenant_reference on contact_types (tenant_id, reference)`.execute(db);

    await sql`create table contacts (
      id serial primary key,
      tenant_id text not null,
      name text not null,
      type text not null,
      email text,
      is_person boolean,
      cif text,
      phone text,
      web text,
      iban text,
      comments text,
      extra_fields jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create index contacts_tenant_id on contacts (tenant_id, id)`.execute(db);
    await sql`create index contacts_tenant_name on contacts (tenant_id, name, id)`.execute(db);
    await sql`create index contacts_tenant_email on contacts (tenant_id, lower(email), id)`.execute(db);
    await sql`create index contacts_tenant_cif on contacts (tenant_id, cif, id)`.execute(db);
    await sql`create index contacts_tenant_type on contacts (tenant_id, type, id)`.execute(db);
    await sql`create index contacts_tenant_created on contacts (tenant_id, created_at, id)`.execute(db);
    await sql`create index contacts_tenant_updated on contacts (tenant_id, updated_at, id)`.execute(db);

    await sql`create table contact_locations (
      id serial primary key,
      contact_id integer not null unique references contacts (id) on delete cascade,
      "primary" integer,
      direction text,
      city text,
      postal text,
      country text,
      latitude text,
      longitude text,
      extra_info text
    )`.execute(db);

    await sql`create table contact_users (
      contact_id integer not null references contacts (id) on delete cascade,
      user_id integer not null references users (id) on delete cascade,
      position integer not null,
      primary key (contact_id, user_id)
    )`.execute(db);
    await sql`create index contact_users_user on contact_users (user_id)`.execute(db);
  },
};

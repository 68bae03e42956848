import type { Migration } from '@crm/db';
import { sql } from 'kysely';

export const m0001Documents: Migration = {
  name: '0001_documents',
  async up(db) {
    await sql`create table document_categories (
      id bigserial primary key,
      tenant_id text not null,
      name text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create unique index document_categories_tenant_name on document_categories (tenant_id, name)`.execute(db);
    await sql`create table documents (
      id bigserial primary key,
      tenant_id text not null,
      name text not null,
      filename text not null,
      extension text not null,
      mime_type text,
      size_bytes bigint,
      storage_key text not null unique,
      contact_id bigint,
      category_id bigint not null references document_categories (id),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create index documents_tenant_id on documents (tenant_id, id)`.execute(db);
    await sql`create index documents_tenant_contact on documents (tenant_id, contact_id) where contact_id is not null`.execute(db);
    await sql`create table document_opportunities (
      document_id bigint not null references documents (id) on delete cascade,
      tenant_id text not null,
      opportunity_id bigint not null,
      created_at timestamptz not null default now(),
      primary key (document_id, opportunity_id)
    )`.execute(db);
    await sql`create index document_opportunities_tenant_opportunity on document_opportunities (tenant_id, opportunity_id)`.execute(db);
  },
};

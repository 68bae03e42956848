import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Opportunities. `enterprise_id` has no foreign key on purpose: deleting a contact keeps its
 * opportunities readable with their enterprise_id (contract §11).
 */
export const m0003Opportunities: Migration = {
  name: '0003_opportunities',
  async up(db) {
    await sql`create table opportunities (
      id serial primary key,
      tenant_id text not null,
      name text not null,
      enterprise_id integer not null,
      user_id integer,
      amount numeric(14, 2) not null default 0,
      currency text not null default 'EUR',
      status text not null default 'open',
      probability integer,
      close_date date,
      comments text,
      extra_fields jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create index opportunities_tenant_id on opportunities (tenant_id, id)`.execute(db);
    await sql`create index opportunities_tenant_enterprise on opportunities (tenant_id, enterprise_id, id)`.execute(db);
    await sql`create index opportunities_tenant_status on opportunities (tenant_id, status, id)`.execute(db);
    await sql`create index opportunities_tenant_name on opportunities (tenant_id, name, id)`.execute(db);
    await sql`create index opportunities_tenant_created on opportunities (tenant_id, created_at, id)`.execute(db);
    await sql`create index opportunities_tenant_updated on opportunities (tenant_id, updated_at, id)`.execute(db);
  },
};

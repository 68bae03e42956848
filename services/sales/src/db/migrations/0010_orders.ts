import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Orders, their product lines (a snapshot of the catalog product) and their state history.
 * No foreign keys to contacts, users or opportunities: deleting those keeps orders readable.
 * Money is `numeric` so totals are exact decimals, never binary floats.
 */
export const m0010Orders: Migration = {
  name: '0010_orders',
  async up(db) {
    await sql`create table order_reference_counters (
      tenant_id text primary key,
      next_value bigint not null
    )`.execute(db);
    await sql`create table orders (
      id serial primary key,
      tenant_id text not null,
      reference text not null,
      enterprise_id integer not null,
      user_id integer not null,
      opportunity_id integer,
      date_limit date not null,
      state integer not null,
      comments text,
      extra_fields jsonb,
      total numeric not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
    await sql`create unique index orders_tenant_reference on orders (tenant_id, reference)`.execute(db);
    await sql`create index orders_tenant_enterprise on orders (tenant_id, enterprise_id)`.execute(db);
    await sql`create index orders_tenant_updated on orders (tenant_id, updated_at)`.execute(db);
    await sql`create table order_lines (
      id serial primary key,
      order_id integer not null references orders (id) on delete cascade,
      position integer not null,
      product_id integer not null,
      reference text not null,
      name text not null,
      rate_sku text,
      cost numeric not null,
      price numeric not null,
      discount numeric not null,
      quantity numeric not null,
      comment text,
      description text
    )`.execute(db);
    await sql`create index order_lines_order on order_lines (order_id, position)`.execute(db);
    await sql`create table order_states (
      id serial primary key,
      order_id integer not null references orders (id) on delete cascade,
      state integer not null,
      amount numeric not null,
      created_at timestamptz not null default now()
    )`.execute(db);
    await sql`create index order_states_order on order_states (order_id, id)`.execute(db);
  },
};

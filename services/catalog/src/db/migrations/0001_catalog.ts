import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/** VAT rates, the product category tree, products and their rates (frozen). */
export const m0001Catalog: Migration = {
  name: '0001_catalog',
  async up(db) {
    await sql`create table vat_rates (
      id serial primary key,
      tenant_id text not null,
      percentage numeric(5,2) not null,
      created_at timestamptz not null default now(),
      constraint vat_rates_tenant_percentage unique (tenant_id, percentage)
    )`.execute(db);
    await sql`create table product_categories (
      id serial primary key,
      tenant_id text not null,
      name text not null,
      reference text not null,
      parent_id integer references product_categories (id),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint product_categories_tenant_reference unique (tenant_id, reference)
    )`.execute(db);
    await sql`create index product_categories_tenant_parent on product_categories (tenant_id, parent_id)`.execute(db);
    await sql`create table products (
      id serial primary key,
      tenant_id text not null,
      reference text not null,
      name text not null,
      description text,
      vat_id integer not null references vat_rates (id),
      product_category_id integer not null references product_categories (id),
      services text,
      stock numeric(15,3),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint products_tenant_reference unique (tenant_id, reference)
    )`.execute(db);
    await sql`create index products_category on products (product_category_id)`.execute(db);
    await sql`create index products_tenant_updated on products (tenant_id, updated_at)`.execute(db);
    await sql`create table product_rates (
      id serial primary key,
      tenant_id text not null,
      product_id integer not null references products (id) on delete cascade,
      position integer not null,
      sku text not null,
      cost numeric(14,2) not null,
      price numeric(14,2) not null,
      is_primary boolean not null,
      constraint product_rates_tenant_sku unique (tenant_id, sku)
    )`.execute(db);
    await sql`create index product_rates_product on product_rates (product_id, position)`.execute(db);
  },
};

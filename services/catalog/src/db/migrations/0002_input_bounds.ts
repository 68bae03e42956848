import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The bounds of contract §19 in the database (frozen), so that even a bug in the code cannot
 * store a row that a read, a list or a delete would then fail on. Rows that break them today
 * (only possible through direct SQL: the API has always checked these bounds) are repaired
 * first, per table, as the catalog README describes:
 * - vat_rates: a percentage outside 0..100 (or NaN) is merged into the account's rate with the
 *   clamped percentage (NaN → 0); products are moved to that rate, the bad rate is removed.
 * - product_rates: a cost or price below 0 (or NaN) becomes 0; an empty sku or one over 255
 *   characters becomes `<first 200 characters>~<rate id>` (`rate-<id>` when empty).
 * - products: stock outside 0..999999999999.99 (or NaN) becomes null (unknown); an empty name
 *   becomes the reference; names over 255 and texts over 65535 characters are cut; an empty or
 *   over-long reference is rewritten like a sku (`product-<id>` when empty); a product whose
 *   category belongs to another account is deleted (no read of it could succeed).
 * - product_categories: names and references as for products (`category-<id>`); a parent of
 *   another account, the category itself, or a parent link closing a cycle becomes null (root).
 */
export const m0002InputBounds: Migration = {
  name: '0002_input_bounds',
  async up(db) {
    // Amount bound of numeric(14,2); the API's MAX_AMOUNT (not imported: migrations are frozen).
    const maxAmount = sql.lit('999999999999.99');
    const clamp = (column: string) => sql`case when ${sql.ref(column)} = 'NaN' then 0 else least(greatest(${sql.ref(column)}, 0), 100) end`;
    // A text rewritten when empty or over 255 characters: kept recognisable, made unique by the row id.
    const shortText = (column: string, emptyPrefix: string) =>
      sql`case when ${sql.ref(column)} = '' then ${emptyPrefix} || id else left(${sql.ref(column)}, 200) || '~' || id end`;
    const badText = (column: string) => sql`(${sql.ref(column)} = '' or char_length(${sql.ref(column)}) > 255)`;

    // vat_rates: merge out-of-range percentages into the clamped one.
    await sql`insert into vat_rates (tenant_id, percentage)
      select distinct tenant_id, ${clamp('percentage')} from vat_rates where not (percentage between 0 and 100)
      on conflict (tenant_id, percentage) do nothing`.execute(db);
    await sql`update products p set vat_id = good.id
      from vat_rates bad join vat_rates good on good.tenant_id = bad.tenant_id
        and good.percentage = (case when bad.percentage = 'NaN' then 0 else least(greatest(bad.percentage, 0), 100) end)
      where p.vat_id = bad.id and not (bad.percentage between 0 and 100)`.execute(db);
    await sql`delete from vat_rates where not (percentage between 0 and 100)`.execute(db);
    await sql`alter table vat_rates add constraint vat_rates_percentage_range check (percentage between 0 and 100)`.execute(db);

    // product_categories: texts, then parents (another account's, itself, cycles).
    await sql`update product_categories set name = left(case when name = '' then reference else name end, 255)
      where name = '' or char_length(name) > 255`.execute(db);
    await sql`update product_categories set name = ${shortText('name', 'category-')} where name = ''`.execute(db);
    await sql`update product_categories set reference = ${shortText('reference', 'category-')} where ${badText('reference')}`.execute(db);
    await sql`update product_categories c set parent_id = null
      where parent_id is not null
        and (parent_id = id or not exists (select 1 from product_categories p where p.id = c.parent_id and p.tenant_id = c.tenant_id))`.execute(
      db,
    );
    // A cycle (a → b → a) makes the recursive tree queries loop: the lowest id of each cycle becomes a root.
    await sql`with recursive up (start, id) as (
        select id, parent_id from product_categories where parent_id is not null
        union
        select up.start, c.parent_id from up join product_categories c on c.id = up.id where c.parent_id is not null
      ),
      cyclic as (select start as id from up where id = start)
      update product_categories set parent_id = null
      where id in (
        select c.id from cyclic c
        where c.id = (select min(u.id) from up u where u.start = c.id and u.id in (select id from cyclic))
      )`.execute(db);
    await sql`alter table product_categories
      add constraint product_categories_name_length check (char_length(name) between 1 and 255),
      add constraint product_categories_reference_length check (char_length(reference) between 1 and 255),
      add constraint product_categories_not_own_parent check (parent_id <> id),
      add constraint product_categories_tenant_id unique (tenant_id, id)`.execute(db);
    await sql`alter table product_categories
      add constraint product_categories_parent_same_tenant foreign key (tenant_id, parent_id)
        references product_categories (tenant_id, id)`.execute(db);

    // products: a category of another account cannot be presented; such a product goes.
    await sql`delete from products p
      where not exists (select 1 from product_categories c where c.id = p.product_category_id and c.tenant_id = p.tenant_id)`.execute(db);
    await sql`update products set stock = null where not (stock between 0 and ${maxAmount})`.execute(db);
    await sql`update products set name = left(case when name = '' then reference else name end, 255)
      where name = '' or char_length(name) > 255`.execute(db);
    await sql`update products set name = ${shortText('name', 'product-')} where name = ''`.execute(db);
    await sql`update products set reference = ${shortText('reference', 'product-')} where ${badText('reference')}`.execute(db);
    await sql`update products set description = left(description, 65535) where char_length(description) > 65535`.execute(db);
    await sql`update products set services = left(services, 65535) where char_length(services) > 65535`.execute(db);
    await sql`alter table products
      add constraint products_stock_range check (stock between 0 and ${maxAmount}),
      add constraint products_name_length check (char_length(name) between 1 and 255),
      add constraint products_reference_length check (char_length(reference) between 1 and 255),
      add constraint products_description_length check (char_length(description) <= 65535),
      add constraint products_services_length check (char_length(services) <= 65535),
      add constraint products_category_same_tenant foreign key (tenant_id, product_category_id)
        references product_categories (tenant_id, id)`.execute(db);

    // product_rates: amounts and skus.
    await sql`update product_rates set cost = 0 where not (cost between 0 and ${maxAmount})`.execute(db);
    await sql`update product_rates set price = 0 where not (price between 0 and ${maxAmount})`.execute(db);
    await sql`update product_rates set sku = ${shortText('sku', 'rate-')} where ${badText('sku')}`.execute(db);
    await sql`alter table product_rates
      add constraint product_rates_cost_range check (cost between 0 and ${maxAmount}),
      add constraint product_rates_price_range check (price between 0 and ${maxAmount}),
      add constraint product_rates_sku_length check (char_length(sku) between 1 and 255)`.execute(db);
  },
};

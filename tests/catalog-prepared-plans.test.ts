// Catalog's named prepared statements on real PostgreSQL (a scratch schema with catalog's
// migrations): the product read by reference gives the answer the three separate reads gave, in
// one statement whose generic plan PostgreSQL keeps (`tests/prepared-plans.ts`).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { statementCount } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { CATEGORIES_BY_IDS, CATEGORY_SUBTREES, findCategoriesByIds, findSubtrees } from '../services/catalog/src/categories/repo.ts';
import { getCategoryTree } from '../services/catalog/src/categories/service.ts';
import { migrations } from '../services/catalog/src/db/migrations/index.ts';
import { presentProducts } from '../services/catalog/src/products/present.ts';
import {
  findProductByReference,
  findProductsByIds,
  findRates,
  PRODUCT_BY_REFERENCE,
  PRODUCTS_BY_IDS,
  RATES_BY_PRODUCTS,
} from '../services/catalog/src/products/repo.ts';
import { getProduct } from '../services/catalog/src/products/service.ts';
import { closePlanScope, genericPlanOf, openPlanScope, type PlanScope, plansOnOneConnection } from './prepared-plans.ts';

let scope: PlanScope;
let db: Kysely<any>;

beforeAll(async () => {
  scope = await openPlanScope('catalog_plans', migrations);
  db = scope.db;
  // Two tenants with the same references; 2,000 products each, every fourth with no rate.
  for (const tenant of ['mine', 'theirs']) {
    const vat = await sql<{ id: number }>`insert into vat_rates (tenant_id, percentage) values (${tenant}, 21) returning id`.execute(db);
    const root = await sql<{ id: number }>`insert into product_categories (tenant_id, name, reference)
      values (${tenant}, ${`Root of ${tenant}`}, 'ROOT') returning id`.execute(db);
    const leaf = await sql<{ id: number }>`insert into product_categories (tenant_id, name, reference, parent_id)
      values (${tenant}, ${`Leaf of ${tenant}`}, 'LEAF', ${root.rows[0]?.id}) returning id`.execute(db);
    await sql`insert into products (tenant_id, reference, name, vat_id, product_category_id, stock, description)
      select ${tenant}, 'P' || g, ${tenant} || ' product ' || g, ${vat.rows[0]?.id}, ${leaf.rows[0]?.id},
        case when g % 3 = 0 then null else g * 1.5 end, case when g % 2 = 0 then 'Even' end
      from generate_series(1, 2000) g`.execute(db);
    // Three rates per product, inserted against their list order (positions 2, 0, 1).
    await sql`insert into product_rates (tenant_id, product_id, position, sku, cost, price, is_primary)
      select p.tenant_id, p.id, pos, p.tenant_id || '-' || p.reference || '-' || pos, 10.10 * (pos + 1), 19.99 + pos, pos = 0
      from products p cross join (values (2), (0), (1)) as v(pos)
      where p.tenant_id = ${tenant} and p.id % 4 <> 0`.execute(db);
  }
}, 60_000);

afterAll(() => closePlanScope(scope));

/** The product as the three separate reads presented it (the row, then its rates and its category). */
async function presentedSeparately(tenant: string, reference: string) {
  const row = await findProductByReference(db, tenant, reference);
  return row && (await presentProducts(db, tenant, [row]))[0];
}

test('a product read by reference in one statement is the answer the separate reads give, in its own tenant only', async () => {
  const withoutRates = await sql<{ reference: string }>`select reference from products
    where tenant_id = 'mine' and id % 4 = 0 limit 1`.execute(db);
  const references = ['P1', 'P2', 'P3', 'P1999', withoutRates.rows[0]?.reference as string];
  for (const reference of references) {
    const before = statementCount();
    const product = await getProduct(db, 'mine', reference);
    // One statement for the product, its rates and its category.
    expect(statementCount() - before).toBe(1);
    expect(product).toEqual((await presentedSeparately('mine', reference)) as NonNullable<typeof product>);
    expect(product.name.startsWith('mine product')).toBe(true);
    expect(product.category).toMatchObject({ reference: 'LEAF', name: 'Leaf of mine', has_products: true, has_objectives: false });
  }
  const p1 = await getProduct(db, 'mine', 'P1');
  // Rates in list order, with their prices as numbers.
  expect(p1.rates.map((r) => [r.sku, r.cost, r.price, r.primary])).toEqual([
    ['mine-P1-0', 10.1, 19.99, true],
    ['mine-P1-1', 20.2, 20.99, false],
    ['mine-P1-2', 30.3, 21.99, false],
  ]);
  expect(p1.stock).toBe(1.5);
  expect((await getProduct(db, 'mine', 'P3')).stock).toBeNull();
  // Another tenant's product with the same reference is its own; a reference nobody has is a 404.
  expect((await getProduct(db, 'theirs', 'P1')).rates[0]?.sku).toBe('theirs-P1-0');
  await expect(getProduct(db, 'mine', 'P9999')).rejects.toMatchObject({ status: 404 });
});

test('the product read keeps its generic plan: an index lookup and the rates of that product alone', async () => {
  const plans = await plansOnOneConnection(scope, PRODUCT_BY_REFERENCE.sql, async (single) => {
    for (let i = 1; i <= 12; i++) expect((await getProduct(single, 'mine', `P${i}`)).reference).toBe(`P${i}`);
  });
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  const { rows, pages } = await genericPlanOf(scope, PRODUCT_BY_REFERENCE.sql, 'text, text', "'mine', 'P1500'");
  expect(rows).toBe(1);
  // The product by its unique index, its category by primary key, its rates by theirs (a scan of
  // the 4,000 products or the 9,000 rates reads dozens of pages).
  expect(pages).toBeLessThan(20);
});

test('category subtrees: the rows the recursive query gave as text, in its own tenant only, with the generic plan kept', async () => {
  // Under mine's LEAF: 40 children, each with 5 children of its own (240 categories), none with products.
  const leaf = (await sql<{ id: number }>`select id from product_categories where tenant_id = 'mine' and reference = 'LEAF'`.execute(db))
    .rows[0]?.id as number;
  await sql`insert into product_categories (tenant_id, name, reference, parent_id)
    select 'mine', 'Child ' || g, 'C' || g, ${leaf} from generate_series(1, 40) g`.execute(db);
  await sql`insert into product_categories (tenant_id, name, reference, parent_id)
    select 'mine', c.name || '.' || g, c.reference || '.' || g, c.id
    from product_categories c cross join generate_series(1, 5) g where c.tenant_id = 'mine' and c.reference like 'C%'`.execute(db);
  const root = (await sql<{ id: number }>`select id from product_categories where tenant_id = 'mine' and reference = 'ROOT'`.execute(db))
    .rows[0]?.id as number;
  const asText = async (tenant: string, ids: number[]) =>
    (
      await sql`with recursive tree as (
        select id from product_categories where tenant_id = ${tenant} and id = any(${ids}::int[])
        union all
        select child.id from product_categories child join tree on child.parent_id = tree.id where child.tenant_id = ${tenant})
      select c.id, c.name, c.reference, c.parent_id, c.created_at, c.updated_at,
        exists (select 1 from products p where p.product_category_id = c.id) as has_products
      from product_categories c join tree on tree.id = c.id order by c.id`.execute(db)
    ).rows;
  const rows = await findSubtrees(db, 'mine', [root, leaf]);
  expect(rows.length).toBeGreaterThan(240);
  expect(rows).toEqual((await asText('mine', [root, leaf])) as typeof rows);
  const tree = await getCategoryTree(db, 'mine', root);
  expect(tree.children[0]?.reference).toBe('LEAF');
  expect(tree.children[0]?.has_products).toBe(true);
  expect(tree.children[0]?.children).toHaveLength(40);
  expect(tree.children[0]?.children[0]?.children.map((c) => c.reference)).toEqual(['C1.1', 'C1.2', 'C1.3', 'C1.4', 'C1.5']);
  // Another tenant's ids are not read, nor their subtrees.
  expect(await findSubtrees(db, 'theirs', [root, leaf])).toEqual([]);
  await expect(getCategoryTree(db, 'theirs', root)).rejects.toMatchObject({ status: 404 });
  const child = (await sql<{ id: number }>`select id from product_categories where tenant_id = 'mine' and reference = 'C7'`.execute(db))
    .rows[0]?.id as number;
  const plans = await plansOnOneConnection(scope, CATEGORY_SUBTREES.sql, async (single) => {
    for (let i = 0; i < 12; i++) expect((await findSubtrees(single, 'mine', [child])).length).toBe(6);
  });
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  // Under the generic plan: the category and its five children by index, not the tenant's 242 categories.
  const { rows: read, pages } = await genericPlanOf(scope, CATEGORY_SUBTREES.sql, 'text, int[]', `'mine', '{${child}}'`);
  expect(read).toBe(6);
  expect(pages).toBeLessThan(40);
});

test("a list page's products, rates and categories by ids: the IN-list rows, in their own tenant only, each generic plan kept", async () => {
  const { rows } = await sql<{ id: number; tenant_id: string; product_category_id: number }>`select id, tenant_id, product_category_id
    from products where reference in ('P1', 'P2', 'P4', 'P7') order by id`.execute(db);
  const mine = rows.filter((r) => r.tenant_id === 'mine');
  const ids = rows.map((r) => r.id);
  // Products: the query builder's IN list (its locking form), each once, in id order, the tenant's only.
  const products = await findProductsByIds(db, 'mine', [...ids].reverse());
  expect(products).toEqual(await findProductsByIds(db, 'mine', ids, { lock: true }));
  expect(products.map((p) => p.id)).toEqual(mine.map((r) => r.id));
  // Rates: by product, in list order (P4 has none).
  const rates = await findRates(
    db,
    mine.map((r) => r.id),
  );
  expect(rates.map((r) => r.sku)).toEqual([
    'mine-P1-0',
    'mine-P1-1',
    'mine-P1-2',
    'mine-P2-0',
    'mine-P2-1',
    'mine-P2-2',
    'mine-P7-0',
    'mine-P7-1',
    'mine-P7-2',
  ]);
  expect(rates[0]).toMatchObject({ cost: '10.10', price: '19.99', is_primary: true });
  // Categories: the tenant's own.
  const categoryIds = [...new Set(rows.map((r) => r.product_category_id))];
  expect((await findCategoriesByIds(db, 'mine', categoryIds)).map((c) => [c.reference, c.has_products])).toEqual([['LEAF', true]]);
  const one = [mine[0]?.id as number];
  const cases = [
    {
      statement: PRODUCTS_BY_IDS.sql,
      run: (single: Kysely<any>) => findProductsByIds(single, 'mine', one),
      types: 'text, integer[]',
      args: `'mine', '{${one}}'`,
    },
    { statement: RATES_BY_PRODUCTS.sql, run: (single: Kysely<any>) => findRates(single, one), types: 'integer[]', args: `'{${one}}'` },
    {
      statement: CATEGORIES_BY_IDS.sql,
      run: (single: Kysely<any>) => findCategoriesByIds(single, 'mine', [mine[0]?.product_category_id as number]),
      types: 'text, integer[]',
      args: `'mine', '{${mine[0]?.product_category_id}}'`,
    },
  ];
  for (const { statement, run, types, args } of cases) {
    const plans = await plansOnOneConnection(scope, statement, async (single) => {
      for (let i = 0; i < 12; i++) expect((await run(single)).length).toBeGreaterThan(0);
    });
    expect(plans).toEqual([{ custom: 5, generic: 7 }]);
    // Under the generic plan, by index: a scan of the 4,000 products or the 9,000 rates reads dozens of pages.
    expect((await genericPlanOf(scope, statement, types, args)).pages).toBeLessThan(20);
  }
});

test("a category's subtree and products' rates keep to their indexes under plans made while the tables were empty", async () => {
  // A new database: the generic plans are made over empty tables and kept while the tables grow
  // (nothing analyzes them here).
  const empty = await openPlanScope('catalog_plans_empty', migrations);
  try {
    await sql`insert into vat_rates (id, tenant_id, percentage) values (1, 'mine', 21)`.execute(empty.db);
    await sql`insert into product_categories (id, tenant_id, name, reference) values (1, 'mine', 'Root', 'root')`.execute(empty.db);
    // 20,000 categories (19 of them under the root), 20,000 products in the root's subtree, 30,000 rates.
    const grow = async () => {
      await sql`insert into product_categories (id, tenant_id, name, reference, parent_id)
        select g, 'mine', 'Category ' || g, 'c' || g, case when g <= 20 then 1 end from generate_series(2, 20000) g`.execute(empty.db);
      await sql`insert into products (id, tenant_id, reference, name, vat_id, product_category_id)
        select g, 'mine', 'P' || g, 'Product ' || g, 1, 1 + g % 20 from generate_series(1, 20000) g`.execute(empty.db);
      await sql`insert into product_rates (tenant_id, product_id, position, sku, cost, price, is_primary)
        select 'mine', 1 + g / 3, g % 3, 'S' || g, 1, 2, g % 3 = 0 from generate_series(0, 29999) g`.execute(empty.db);
    };
    const subtree = await genericPlanOf(empty, CATEGORY_SUBTREES.sql, 'text, int[]', "'mine', '{1}'", grow);
    expect(subtree.rows).toBe(20);
    // Joins planned over the empty tables scanned every category and product: 1,212 pages.
    expect(subtree.pages).toBeLessThan(200);
    await sql`truncate product_rates`.execute(empty.db);
    const rates = await genericPlanOf(empty, RATES_BY_PRODUCTS.sql, 'integer[]', "'{7,9}'", () =>
      sql`insert into product_rates (tenant_id, product_id, position, sku, cost, price, is_primary)
        select 'mine', 1 + g / 3, g % 3, 'S' || g, 1, 2, g % 3 = 0 from generate_series(0, 29999) g`.execute(empty.db),
    );
    expect(rates.rows).toBe(6);
    expect(rates.pages).toBeLessThan(20);
  } finally {
    await closePlanScope(empty);
  }
});

import { type ListRequest, type PageOfIds, preparedStatement, readPageIds, type SortType, tenantRowsByIds } from '@crm/db';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { CatalogDatabase, ProductsTable } from '../db/database.ts';

type Db = Kysely<CatalogDatabase>;

/** A product row as stored (numeric columns come back as strings). */
export type ProductRow = Omit<Selectable<ProductsTable>, 'tenant_id'>;

/** A rate row as stored. */
export interface RateRow {
  id: number;
  product_id: number;
  sku: string;
  cost: string;
  price: string;
  is_primary: boolean;
}

/** A rate to write, with its primary flag already decided. */
export interface RateValues {
  sku: string;
  cost: number;
  price: number;
  primary: boolean;
}

export interface ProductValues {
  name: string;
  description: string | null;
  vat_id: number;
  product_category_id: number;
  services: string | null;
  stock: number | null;
}

const productColumns = [
  'id',
  'reference',
  'name',
  'description',
  'vat_id',
  'product_category_id',
  'services',
  'stock',
  'created_at',
  'updated_at',
] as const;

/** The tenant's products with any of these references; `lock` holds their rows, taken in id order, until the transaction ends. */
export function findProductsByReferences(db: Db, tenantId: string, references: string[], { lock = false } = {}): Promise<ProductRow[]> {
  if (references.length === 0) return Promise.resolve([]);
  const query = db
    .selectFrom('products')
    .select(productColumns)
    .where('tenant_id', '=', tenantId)
    .where('reference', 'in', references)
    .orderBy('id');
  return (lock ? query.forUpdate() : query).execute();
}

/** The tenant's product with this reference, or undefined; `lock` holds its row until the transaction ends. */
export function findProductByReference(
  db: Db,
  tenantId: string,
  reference: string,
  { lock = false } = {},
): Promise<ProductRow | undefined> {
  const query = db.selectFrom('products').select(productColumns).where('tenant_id', '=', tenantId).where('reference', '=', reference);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

/** A product row read with its rates (in list order) and its category's row (null when it has none). */
export interface ProductWithParts extends ProductRow {
  rates: RateRow[];
  category_name: string | null;
  category_reference: string | null;
  category_parent_id: number | null;
  category_created_at: Date | null;
  category_updated_at: Date | null;
}

/**
 * The tenant's product with this reference, its rates and its category in ONE named prepared
 * statement (`GET /v1/products/{reference}`, and the answer of an update): one round trip
 * instead of the product's row and then its rates and its category, each of the three planned on
 * every call (planning was most of their PostgreSQL CPU). The rates come as JSON objects with the
 * columns of `findRates` (cost and price as text, as a numeric column reads), in list order.
 */
export const PRODUCT_BY_REFERENCE = preparedStatement<ProductWithParts>(
  `select p.id, p.reference, p.name, p.description, p.vat_id, p.product_category_id, p.services, p.stock,
    p.created_at, p.updated_at,
    coalesce((select json_agg(json_build_object('id', r.id, 'product_id', r.product_id, 'sku', r.sku, 'cost', r.cost::text,
      'price', r.price::text, 'is_primary', r.is_primary) order by r.position)
      from product_rates r where r.product_id = p.id), '[]') as rates,
    c.name as category_name, c.reference as category_reference, c.parent_id as category_parent_id,
    c.created_at as category_created_at, c.updated_at as category_updated_at
  from products p
  left join product_categories c on c.tenant_id = p.tenant_id and c.id = p.product_category_id
  where p.tenant_id = $1 and p.reference = $2`,
);

/** The tenant's product with this reference, with its rates and category (`PRODUCT_BY_REFERENCE`), or undefined. */
export async function findProductWithParts(db: Db, tenantId: string, reference: string): Promise<ProductWithParts | undefined> {
  const { rows } = await PRODUCT_BY_REFERENCE.execute(db, [tenantId, reference]);
  return rows[0];
}

/**
 * The rates of these products, in their list order: a named prepared statement (every product
 * list page and write answer, and the order lines' product lookup). The ids come through a scalar
 * subquery, so a custom plan is costed like the generic one and PostgreSQL keeps the generic plan:
 * sent as an IN list it was planned on every call (42 µs of planning against 14 of execution).
 */
export const RATES_BY_PRODUCTS = preparedStatement<RateRow>(
  `select id, product_id, sku, cost, price, is_primary from product_rates
  where product_id = any((select $1::integer[])::integer[])
  order by product_id, position`,
);

/** The rates of these products, in their list order (`RATES_BY_PRODUCTS`). */
export async function findRates(db: Db, productIds: number[]): Promise<RateRow[]> {
  if (productIds.length === 0) return [];
  return (await RATES_BY_PRODUCTS.execute(db, [productIds])).rows;
}

/** Escapes LIKE wildcards so `q` is matched literally. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The sortable fields of the product list and their column types (cursors cast their keys back with them). */
export const PRODUCT_SORTS = {
  id: 'integer',
  reference: 'text',
  name: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
} as const satisfies Record<string, SortType>;

/** Filters of the product list. */
export interface ProductFilters {
  q?: string;
  categoryId?: number;
}

/** The ids of one page of the tenant's products (page or cursor mode), in list order. */
export function listProductIds(db: Db, tenantId: string, request: ListRequest, filters: ProductFilters): Promise<PageOfIds> {
  let query = db.selectFrom('products').where('products.tenant_id', '=', tenantId);
  if (request.updatedSince) query = query.where('products.updated_at', '>=', request.updatedSince);
  if (filters.categoryId !== undefined) query = query.where('products.product_category_id', '=', filters.categoryId);
  if (filters.q) {
    const pattern = likePattern(filters.q);
    query = query.where((eb) => eb.or([eb('products.name', 'ilike', pattern), eb('products.reference', 'ilike', pattern)]));
  }
  return readPageIds(query, 'products', request.window);
}

/**
 * The tenant's products with these ids, in id order (a list page, an upsert's answer): a named
 * prepared statement whose generic plan is kept (`tenantRowsByIds`). Sent as an IN list, it was
 * planned on every call.
 */
export const PRODUCTS_BY_IDS = preparedStatement<ProductRow>(
  `${tenantRowsByIds('products', productColumns.join(', '), 'p')} order by p.id`,
);

/** The tenant's products with these ids (in id order); `lock` holds their rows, taken in id order, until the transaction ends. */
export async function findProductsByIds(db: Db, tenantId: string, ids: number[], { lock = false } = {}): Promise<ProductRow[]> {
  if (ids.length === 0) return [];
  if (lock)
    return db
      .selectFrom('products')
      .select(productColumns)
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids)
      .orderBy('id')
      .forUpdate()
      .execute();
  return (await PRODUCTS_BY_IDS.execute(db, [tenantId, ids])).rows;
}

/**
 * The id of the tenant's VAT rate with this percentage, created on first use. It reads first
 * and inserts with `do nothing`, so that no product write holds a lock on the shared rate
 * row until it commits (writes of one account with one VAT rate would queue behind it, and
 * two batches could deadlock on it and a product row).
 */
export async function ensureVatRate(db: Db, tenantId: string, percentage: number): Promise<number> {
  const find = async () => {
    const { rows } = await sql<{ id: number }>`
      select id from vat_rates where tenant_id = ${tenantId} and percentage = cast(${percentage} as numeric(5,2))`.execute(db);
    return rows[0]?.id;
  };
  const existing = await find();
  if (existing !== undefined) return existing;
  const { rows } = await sql<{ id: number }>`
    insert into vat_rates (tenant_id, percentage) values (${tenantId}, ${percentage})
    on conflict (tenant_id, percentage) do nothing
    returning id`.execute(db);
  // A concurrent write created it first (its commit is visible to this new statement).
  const id = rows[0]?.id ?? (await find());
  if (id === undefined) throw new Error(`VAT rate ${percentage} of ${tenantId} neither inserted nor found`);
  return id;
}

/** Inserts a product and returns its id. */
export async function insertProduct(db: Db, tenantId: string, reference: string, values: ProductValues): Promise<number> {
  const row = await db
    .insertInto('products')
    .values({ tenant_id: tenantId, reference, ...values })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Updates the given fields of a product and bumps updated_at. */
export async function updateProduct(db: Db, tenantId: string, id: number, changes: Partial<ProductValues>): Promise<void> {
  await db
    .updateTable('products')
    .set({ ...changes, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

/** Deletes a product (its rates go with it). */
export async function deleteProduct(db: Db, tenantId: string, id: number): Promise<void> {
  await db.deleteFrom('products').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/**
 * Makes the product's rates exactly `rates`, in that order: a rate whose sku is already on
 * the product is updated in place (keeping its id), the others are inserted, the rest deleted.
 */
export async function replaceRates(db: Db, tenantId: string, productId: number, rates: RateValues[]): Promise<void> {
  const skus = rates.map((r) => r.sku);
  await db
    .deleteFrom('product_rates')
    .where('product_id', '=', productId)
    .where((eb) => eb.not(eb('sku', 'in', skus)))
    .execute();
  for (const [position, rate] of rates.entries()) {
    const values = { cost: rate.cost, price: rate.price, is_primary: rate.primary, position };
    const updated = await db
      .updateTable('product_rates')
      .set(values)
      .where('product_id', '=', productId)
      .where('sku', '=', rate.sku)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      await db
        .insertInto('product_rates')
        .values({ tenant_id: tenantId, product_id: productId, sku: rate.sku, ...values })
        .execute();
    }
  }
}

/** Inserts a new product's rates in one statement, in list order. */
export async function insertRates(db: Db, tenantId: string, productId: number, rates: RateValues[]): Promise<void> {
  await db
    .insertInto('product_rates')
    .values(
      rates.map((rate, position) => ({
        tenant_id: tenantId,
        product_id: productId,
        position,
        sku: rate.sku,
        cost: rate.cost,
        price: rate.price,
        is_primary: rate.primary,
      })),
    )
    .execute();
}

/** Which of these references the tenant's products already use. */
export async function takenReferences(db: Db, tenantId: string, references: string[]): Promise<Set<string>> {
  const rows = await findProductsByReferences(db, tenantId, references);
  return new Set(rows.map((r) => r.reference));
}

/** The product owning each of these skus in the tenant (skus nobody uses are absent). */
export async function skuOwners(db: Db, tenantId: string, skus: string[]): Promise<Map<string, number>> {
  if (skus.length === 0) return new Map();
  const rows = await db
    .selectFrom('product_rates')
    .select(['sku', 'product_id'])
    .where('tenant_id', '=', tenantId)
    .where('sku', 'in', skus)
    .execute();
  return new Map(rows.map((r) => [r.sku, r.product_id]));
}

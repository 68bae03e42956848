import type { Product } from '@crm/contracts';
import { writeEvents } from '@crm/events';
import { throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import type { ProductCreate } from './model.ts';
import { presentProducts } from './present.ts';
import {
  ensureVatRate,
  findProductsByReferences,
  insertProduct,
  insertRates,
  type ProductValues,
  skuOwners,
  takenReferences,
} from './repo.ts';
import { normaliseRates, productRuleErrors, skuFields } from './rules.ts';
import { conflictError, inProductTransaction } from './writes.ts';

type Db = Kysely<CatalogDatabase>;

/** Checks new products (422 by their rules first, then 409) and returns each one's category id and stored rates. */
async function prepareNewProducts(db: Db, tenantId: string, items: ProductCreate[], prefixOf: (i: number) => string) {
  const { errors, categoryIds } = await productRuleErrors(
    db,
    tenantId,
    items.map((body, i) => ({ body, prefix: prefixOf(i) })),
  );
  throwIfInvalid(errors);
  const skus = items.flatMap((item, i) => skuFields(item.rates, prefixOf(i)));
  const references = items.map((item, i) => ({ field: `${prefixOf(i)}reference`, value: item.reference }));
  const taken = await takenReferences(
    db,
    tenantId,
    references.map((r) => r.value),
  );
  const owners = await skuOwners(
    db,
    tenantId,
    skus.map((s) => s.value),
  );
  const conflicts = [
    ...references
      .filter((r) => taken.has(r.value))
      .map((r) => ({ field: r.field, message: `${r.value} is already used by another product` })),
    ...skus.filter((s) => owners.has(s.value)).map((s) => ({ field: s.field, message: `${s.value} is already used by another product` })),
  ];
  if (conflicts.length > 0) throw conflictError(conflicts);
  return items.map((item) => ({ item, categoryId: categoryIds.get(item.product_category_ref) as number }));
}

/**
 * Inserts one checked new product and its rates; returns its id. `vatIds` caches the account's
 * VAT rate ids (percentage → id) across the items of one write.
 */
export async function insertNewProduct(
  trx: Db,
  tenantId: string,
  item: ProductCreate,
  categoryId: number,
  vatIds: Map<number, number>,
): Promise<number> {
  const vatId = vatIds.get(item.vat) ?? (await ensureVatRate(trx, tenantId, item.vat));
  vatIds.set(item.vat, vatId);
  const values: ProductValues = {
    name: item.name,
    description: item.description ?? null,
    vat_id: vatId,
    product_category_id: categoryId,
    services: item.services ?? null,
    stock: item.stock ?? null,
  };
  const id = await insertProduct(trx, tenantId, item.reference, values);
  await insertRates(trx, tenantId, id, normaliseRates(item.rates));
  return id;
}

/** Creates products all-or-nothing, each with a product.created event; returns them in order. */
export async function createProducts(
  db: Db,
  tenantId: string,
  items: ProductCreate[],
  prefixOf: (i: number) => string,
): Promise<Product[]> {
  return inProductTransaction(db, async (trx) => {
    const prepared = await prepareNewProducts(trx, tenantId, items, prefixOf);
    const vatIds = new Map<number, number>();
    const created = [];
    for (const { item, categoryId } of prepared) {
      await insertNewProduct(trx, tenantId, item, categoryId, vatIds);
      created.push(item.reference);
    }
    const products = await loadInOrder(trx, tenantId, created);
    await writeEvents(
      trx,
      products.map((data) => ({ tenantId, type: 'product.created' as const, data })),
    );
    return products;
  });
}

/** Presents products in the order of these references. */
export async function loadInOrder(db: Db, tenantId: string, references: string[]): Promise<Product[]> {
  const products = await presentProducts(db, tenantId, await findProductsByReferences(db, tenantId, references));
  const byReference = new Map(products.map((p) => [p.reference, p]));
  return references.map((r) => byReference.get(r) as Product);
}

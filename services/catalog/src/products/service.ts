import type { Product } from '@crm/contracts';
import { inIdOrder, type ListRequest, type PageOfIds } from '@crm/db';
import { writeEvent } from '@crm/events';
import { assertIfMatch, notFound, throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import type { ProductUpdate } from './model.ts';
import { presentProducts, presentProductWithParts } from './present.ts';
import {
  deleteProduct,
  ensureVatRate,
  findProductByReference,
  findProductsByIds,
  findProductWithParts,
  listProductIds,
  type ProductFilters,
  type ProductValues,
  replaceRates,
  skuOwners,
  updateProduct,
} from './repo.ts';
import { normaliseRates, productRuleErrors, skuFields } from './rules.ts';
import { conflictError, inProductTransaction } from './writes.ts';

type Db = Kysely<CatalogDatabase>;

/** The tenant's product with this reference, as the API returns it; 404 when there is none. */
export async function getProduct(db: Db, tenantId: string, reference: string): Promise<Product> {
  const row = await findProductWithParts(db, tenantId, reference);
  if (!row) throw notFound('Product');
  return presentProductWithParts(row);
}

/** One page of the tenant's products as the API returns them (page or cursor mode), and the page's ids. */
export async function listProductPage(
  db: Db,
  tenantId: string,
  request: ListRequest,
  filters: ProductFilters,
): Promise<{ page: PageOfIds; products: Product[] }> {
  const page = await listProductIds(db, tenantId, request, filters);
  const rows = inIdOrder(await findProductsByIds(db, tenantId, page.ids), page.ids);
  return { page, products: await presentProducts(db, tenantId, rows) };
}

/** The stored changes of a partial update; the category is resolved by the caller. */
export async function productChanges(trx: Db, tenantId: string, body: ProductUpdate, categoryId: number | undefined) {
  const changes: Partial<ProductValues> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description;
  if (body.services !== undefined) changes.services = body.services;
  if (body.stock !== undefined) changes.stock = body.stock;
  if (categoryId !== undefined) changes.product_category_id = categoryId;
  if (body.vat !== undefined) changes.vat_id = await ensureVatRate(trx, tenantId, body.vat);
  return changes;
}

/** Checks a partial update (422 by its rules, then 409 for skus of other products); returns the new category id, if any. */
async function checkUpdate(trx: Db, tenantId: string, productId: number, body: ProductUpdate) {
  const { errors, categoryIds } = await productRuleErrors(trx, tenantId, [{ body, prefix: '' }]);
  throwIfInvalid(errors);
  const skus = skuFields(body.rates, '');
  const owners = await skuOwners(
    trx,
    tenantId,
    skus.map((s) => s.value),
  );
  const conflicts = skus
    .filter((s) => owners.has(s.value) && owners.get(s.value) !== productId)
    .map((s) => ({ field: s.field, message: `${s.value} is already used by another product` }));
  if (conflicts.length > 0) throw conflictError(conflicts);
  return body.product_category_ref === undefined ? undefined : categoryIds.get(body.product_category_ref);
}

/**
 * The product locked for a write (its row held until the transaction ends), after `If-Match`
 * (contract §24) was compared with its current representation: 404 when there is none, 412
 * when `ifMatch` names another version. Two writers holding the same ETag queue on the row
 * lock, and the second one sees the first one's version, so only one of them passes.
 */
async function lockedProduct(trx: Db, tenantId: string, reference: string, ifMatch: string | undefined) {
  const row = await findProductByReference(trx, tenantId, reference, { lock: true });
  if (!row) throw notFound('Product');
  if (ifMatch !== undefined) assertIfMatch(ifMatch, (await presentProducts(trx, tenantId, [row]))[0]);
  return row;
}

/** Partially updates a product (rates, when given, replace the list) and records product.updated; `ifMatch` as in §24. */
export async function updateProductByReference(
  db: Db,
  tenantId: string,
  reference: string,
  body: ProductUpdate,
  ifMatch?: string,
): Promise<Product> {
  return inProductTransaction(db, async (trx) => {
    const row = await lockedProduct(trx, tenantId, reference, ifMatch);
    const categoryId = await checkUpdate(trx, tenantId, row.id, body);
    await updateProduct(trx, tenantId, row.id, await productChanges(trx, tenantId, body, categoryId));
    if (body.rates) await replaceRates(trx, tenantId, row.id, normaliseRates(body.rates));
    const product = await getProduct(trx, tenantId, reference);
    await writeEvent(trx, { tenantId, type: 'product.updated', data: product });
    return product;
  });
}

/** Deletes a product and its rates and records product.deleted `{ id, reference }`; `ifMatch` as in §24. */
export async function deleteProductByReference(db: Db, tenantId: string, reference: string, ifMatch?: string): Promise<void> {
  await inProductTransaction(db, async (trx) => {
    const row = await lockedProduct(trx, tenantId, reference, ifMatch);
    await deleteProduct(trx, tenantId, row.id);
    await writeEvent(trx, { tenantId, type: 'product.deleted', data: { id: row.id, reference: row.reference } });
  });
}

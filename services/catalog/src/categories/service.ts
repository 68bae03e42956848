import type { ProductCategoryTree } from '@crm/contracts';
import { inTransaction, isForeignKeyViolation, isUniqueViolation, type ListRequest, type PageOfIds } from '@crm/db';
import { writeEvent } from '@crm/events';
import { AppError, assertIfMatch, notFound, throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import type { ProductCategoryCreate, ProductCategoryUpdate } from './model.ts';
import {
  deleteCategory,
  findCategoriesByReferences,
  findCategoryById,
  findSubtrees,
  hasChildren,
  insertCategory,
  listRootIds,
  lockCategoryTree,
  updateCategory,
} from './repo.ts';
import { parentErrors } from './rules.ts';
import { presentProductCategoryTrees } from './tree.ts';

type Db = Kysely<CatalogDatabase>;

const referenceTaken = (reference: string) =>
  new AppError('conflict', `reference ${reference} is already used by another product category`, [
    { field: 'reference', message: `${reference} is already used by another product category` },
  ]);

/**
 * Runs a category write under the tenant's tree lock; late unique or foreign-key violations
 * become 409. Inside a keyed request's transaction (`write.db`) it is a savepoint of it.
 */
async function inTreeTransaction<T>(db: Db, tenantId: string, work: (trx: Db) => Promise<T>): Promise<T> {
  try {
    return await inTransaction(db, async (trx) => {
      await lockCategoryTree(trx, tenantId);
      return work(trx);
    });
  } catch (error) {
    if (isUniqueViolation(error, 'product_categories_tenant_reference'))
      throw new AppError('conflict', 'reference is already used by another product category');
    if (isForeignKeyViolation(error)) throw new AppError('conflict', 'The product category is in use by products or child categories');
    throw error;
  }
}

/** A category with its whole subtree (one query at any depth); 404 when the tenant has none with this id. */
export async function getCategoryTree(db: Db, tenantId: string, id: number): Promise<ProductCategoryTree> {
  const [tree] = presentProductCategoryTrees(await findSubtrees(db, tenantId, [id]), [id]);
  if (!tree) throw notFound('Product category');
  return tree;
}

/** One page of root categories, each with its full subtree (the page's ids, then one query for all trees). */
export async function listCategoryTrees(
  db: Db,
  tenantId: string,
  request: ListRequest,
): Promise<{ page: PageOfIds; trees: ProductCategoryTree[] }> {
  const page = await listRootIds(db, tenantId, request);
  return { page, trees: presentProductCategoryTrees(await findSubtrees(db, tenantId, page.ids), page.ids) };
}

/**
 * The category a write is about, read under the tenant's tree lock (every category write holds
 * it, so two writers with the same ETag queue and the second sees the first one's version):
 * 404 when there is none, 412 when `ifMatch` names another version of it (contract §24).
 */
async function currentCategory(trx: Db, tenantId: string, id: number, ifMatch: string | undefined) {
  const current = await findCategoryById(trx, tenantId, id);
  if (!current) throw notFound('Product category');
  if (ifMatch !== undefined) assertIfMatch(ifMatch, await getCategoryTree(trx, tenantId, id));
  return current;
}

async function ensureReferenceFree(trx: Db, tenantId: string, reference: string): Promise<void> {
  if ((await findCategoriesByReferences(trx, tenantId, [reference])).length > 0) throw referenceTaken(reference);
}

/** Creates a category (root unless `parent_id` names one; 422 by its rules, 409 on a taken reference) and records product_category.created. */
export async function createCategory(db: Db, tenantId: string, body: ProductCategoryCreate): Promise<ProductCategoryTree> {
  return inTreeTransaction(db, tenantId, async (trx) => {
    throwIfInvalid(await parentErrors(trx, tenantId, body));
    await ensureReferenceFree(trx, tenantId, body.reference);
    const id = await insertCategory(trx, tenantId, { name: body.name, reference: body.reference, parentId: body.parent_id || null });
    const category = await getCategoryTree(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'product_category.created', data: category });
    return category;
  });
}

/** Renames, re-references and/or moves a category; records product_category.updated with its subtree; `ifMatch` as in §24. */
export async function updateCategoryById(
  db: Db,
  tenantId: string,
  id: number,
  body: ProductCategoryUpdate,
  ifMatch?: string,
): Promise<ProductCategoryTree> {
  return inTreeTransaction(db, tenantId, async (trx) => {
    const current = await currentCategory(trx, tenantId, id, ifMatch);
    throwIfInvalid(await parentErrors(trx, tenantId, body, id));
    const changes: { name?: string; reference?: string; parent_id?: number | null } = {};
    if (body.parent_id !== undefined) changes.parent_id = body.parent_id || null;
    if (body.reference !== undefined && body.reference !== current.reference) {
      await ensureReferenceFree(trx, tenantId, body.reference);
      changes.reference = body.reference;
    }
    if (body.name !== undefined) changes.name = body.name;
    await updateCategory(trx, tenantId, id, changes);
    const category = await getCategoryTree(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'product_category.updated', data: category });
    return category;
  });
}

/** Deletes a childless category without products (else 409) and records product_category.deleted; `ifMatch` as in §24. */
export async function deleteCategoryById(db: Db, tenantId: string, id: number, ifMatch?: string): Promise<void> {
  await inTreeTransaction(db, tenantId, async (trx) => {
    const current = await currentCategory(trx, tenantId, id, ifMatch);
    if (current.has_products) throw new AppError('conflict', 'The product category still has products');
    if (await hasChildren(trx, tenantId, id)) throw new AppError('conflict', 'The product category still has child categories');
    await deleteCategory(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'product_category.deleted', data: { id, reference: current.reference } });
  });
}

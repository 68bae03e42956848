// Batch upsert of products (contract §23): each item is matched on its reference or on a sku of
// its rates; a match is updated with PUT semantics, no match is created; all or nothing.
import { createHash } from 'node:crypto';
import type { Product } from '@crm/contracts';
import { inIdOrder, inTransaction } from '@crm/db';
import { writeEvents } from '@crm/events';
import { AppError, throwIfInvalid } from '@crm/http';
import { type Kysely, sql } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { insertNewProduct } from './create.ts';
import type { ProductCreate, ProductUpsert, ProductUpsertItem } from './model.ts';
import { presentProducts } from './present.ts';
import { findProductsByIds, type ProductRow, replaceRates, skuOwners, takenReferences, updateProduct } from './repo.ts';
import { normaliseRates, skuFields } from './rules.ts';
import { productChanges } from './service.ts';
import { findUpsertMatches, MatchesMoved, upsertRuleErrors } from './upsert-rules.ts';
import { conflictError, isRaceViolation, writeError } from './writes.ts';

type Db = Kysely<CatalogDatabase>;

/** How often an upsert that lost a race (a key taken, a sku moved by a single write) starts over. */
const ATTEMPTS = 3;

export interface UpsertResult {
  data: Product[];
  created: boolean[];
}

/** A 64-bit advisory lock key for a name (a collision only makes two writes queue). */
function lockKey(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigInt64BE(0);
}

/**
 * Takes the transaction's advisory locks on every reference and sku the batch names, in one
 * global order (so two upserts cannot deadlock): two upserts racing on the same new reference
 * or sku queue, and the second one finds the first one's product and updates it.
 */
async function lockKeys(trx: Db, tenantId: string, items: ProductUpsertItem[]): Promise<void> {
  const names = items.flatMap((item) => [
    ...(item.reference === undefined ? [] : [`reference:${item.reference}`]),
    ...(item.sku === undefined ? [] : [`sku:${item.sku}`]),
    ...(item.rates ?? []).map((rate) => `sku:${rate.sku}`),
  ]);
  const keys = [...new Set(names.map((name) => lockKey(`catalog-product:${tenantId}:${name}`)))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  if (keys.length === 0) return;
  await sql`select pg_advisory_xact_lock(k) from unnest(${keys.map(String)}::bigint[]) as k`.execute(trx);
}

/** 409 for a reference a created item would take from another product, and for skus of other products. */
async function checkConflicts(trx: Db, tenantId: string, items: ProductUpsertItem[], targets: (ProductRow | undefined)[]) {
  const skus = items.flatMap((item, i) => skuFields(item.rates, `data[${i}].`).map((s) => ({ ...s, target: targets[i]?.id })));
  const owners = await skuOwners(
    trx,
    tenantId,
    skus.map((s) => s.value),
  );
  const newReferences = items.flatMap((item, i) =>
    targets[i] === undefined && item.reference !== undefined ? [{ field: `data[${i}].reference`, value: item.reference }] : [],
  );
  const taken = await takenReferences(
    trx,
    tenantId,
    newReferences.map((r) => r.value),
  );
  const conflicts = [
    ...newReferences
      .filter((r) => taken.has(r.value))
      .map((r) => ({ field: r.field, message: `${r.value} is already used by another product` })),
    ...skus
      .filter((s) => owners.has(s.value) && owners.get(s.value) !== s.target)
      .map((s) => ({ field: s.field, message: `${s.value} is already used by another product` })),
  ];
  if (conflicts.length > 0) throw conflictError(conflicts);
}

async function upsertOnce(trx: Db, tenantId: string, body: ProductUpsert): Promise<UpsertResult> {
  const { id_property: idProperty, data: items } = body;
  await lockKeys(trx, tenantId, items);
  const values = items.flatMap((item) => (typeof item[idProperty] === 'string' ? [item[idProperty] as string] : []));
  const locked = await findUpsertMatches(trx, tenantId, idProperty, values, { lock: true });
  const { errors, categoryIds, matches } = await upsertRuleErrors(trx, tenantId, body, locked);
  throwIfInvalid(errors);
  const targets = items.map((item) => matches.get(item[idProperty] as string));
  await checkConflicts(trx, tenantId, items, targets);

  const vatIds = new Map<number, number>();
  const ids: number[] = [];
  for (const [i, item] of items.entries()) {
    const target = targets[i];
    const categoryId = item.product_category_ref === undefined ? undefined : categoryIds.get(item.product_category_ref);
    if (target) {
      await updateProduct(trx, tenantId, target.id, await productChanges(trx, tenantId, item, categoryId));
      if (item.rates) await replaceRates(trx, tenantId, target.id, normaliseRates(item.rates));
      ids.push(target.id);
    } else {
      // The rules made sure a created item is a full create body.
      ids.push(await insertNewProduct(trx, tenantId, item as ProductCreate, categoryId as number, vatIds));
    }
  }
  const rows = inIdOrder(await findProductsByIds(trx, tenantId, ids), ids);
  const data = await presentProducts(trx, tenantId, rows);
  const created = targets.map((target) => target === undefined);
  await writeEvents(
    trx,
    data.map((product, i) => ({ tenantId, type: created[i] ? ('product.created' as const) : ('product.updated' as const), data: product })),
  );
  return { data, created };
}

/**
 * Upserts up to 100 products in one transaction: 422 by the rules (nothing written), 409 for a
 * reference or sku of another product, else every item created or updated with its
 * product.created / product.updated event, in request order. An attempt that lost a race to
 * another write (a reference or sku taken after the checks, a matched sku moved, a deadlock)
 * starts over, and then sees that write.
 */
export async function upsertProducts(db: Db, tenantId: string, body: ProductUpsert): Promise<UpsertResult> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      // A savepoint per attempt inside a keyed request's transaction: a lost race rolls back to it.
      return await inTransaction(db, (trx) => upsertOnce(trx, tenantId, body));
    } catch (error) {
      // A deadlock (40P01) is possible only against another write that creates the same new VAT
      // rate and a reference this batch creates too; PostgreSQL aborts one of them, which starts over.
      const deadlocked = (error as { code?: string })?.code === '40P01';
      const raced = error instanceof MatchesMoved || isRaceViolation(error) || deadlocked;
      if (raced && attempt < ATTEMPTS) continue;
      if (error instanceof MatchesMoved) throw new AppError('conflict', 'The matched products changed meanwhile; retry');
      throw writeError(error);
    }
  }
}

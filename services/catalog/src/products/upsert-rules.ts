// The rules of `POST /products/batch/upsert` (contract §23) that a schema cannot express. One
// implementation, as for the other product bodies: the route runs it over a body that failed its
// schema (one 422 names every failing field), the service runs it over the typed body inside its
// transaction, with the matches it locked. It tolerates malformed input.
import { type ErrorDetail, isPlainObject, type RuleCheck } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { ID_PROPERTIES, type IdProperty } from './model.ts';
import { findProductsByIds, findProductsByReferences, type ProductRow, skuOwners } from './repo.ts';
import { batchItems, type FieldValue, productRuleErrors, repeatedAcrossItems } from './rules.ts';

type Db = Kysely<CatalogDatabase>;

/** The fields a created item needs besides its id value (a create body, contract §14). */
const CREATE_FIELDS = ['name', 'vat', 'product_category_ref', 'rates'] as const;

/** Thrown when a sku changed product between the lookup and the lock (a concurrent PUT): the upsert starts over. */
export class MatchesMoved extends Error {
  constructor() {
    super('a matched sku moved to another product meanwhile');
  }
}

/** The id_property of an upsert body, if it is a known one. */
export function idPropertyOf(body: unknown): IdProperty | undefined {
  const value = isPlainObject(body) ? body.id_property : undefined;
  return ID_PROPERTIES.find((name) => name === value);
}

/**
 * The products the id values match, value → product: by `reference`, or by `sku` (the product
 * that has a rate with it). With `lock`, the matched rows are held (in id order) until the
 * transaction ends; a sku that moved to another product before its row was locked throws
 * MatchesMoved.
 */
export async function findUpsertMatches(
  db: Db,
  tenantId: string,
  idProperty: IdProperty,
  values: string[],
  { lock = false } = {},
): Promise<Map<string, ProductRow>> {
  const unique = [...new Set(values)];
  if (idProperty === 'reference') {
    const rows = await findProductsByReferences(db, tenantId, unique, { lock });
    return new Map(rows.map((row) => [row.reference, row]));
  }
  const owners = await skuOwners(db, tenantId, unique);
  const rows = new Map((await findProductsByIds(db, tenantId, [...new Set(owners.values())], { lock })).map((row) => [row.id, row]));
  if (lock) {
    const now = await skuOwners(db, tenantId, unique);
    if (now.size !== owners.size || [...now].some(([sku, id]) => owners.get(sku) !== id)) throw new MatchesMoved();
  }
  const matches = new Map<string, ProductRow>();
  for (const [sku, id] of owners) {
    const row = rows.get(id);
    if (row) matches.set(sku, row);
  }
  return matches;
}

/** Details without a second one for a field already named (the first finding of a field wins). */
function onePerField(details: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  return details.filter((d) => !seen.has(d.field) && seen.add(d.field));
}

/**
 * Every rule of an upsert body: each item has its id value, no value repeats, an unmatched item
 * is a full create body (with `sku`: its rates include that sku), a matched item keeps its
 * reference and no two items match one product (`sku`), `sku` only with id_property sku; plus
 * the rules of every product body (categories, primary rates, references and skus repeated).
 * `locked` are the matches the service locked; without them the matches are looked up.
 * Returns the findings, the matches and the category id of each category reference that resolved.
 */
export async function upsertRuleErrors(db: Db, tenantId: string, body: unknown, locked?: Map<string, ProductRow>) {
  const items = batchItems(body);
  const products = await productRuleErrors(db, tenantId, items);
  const idProperty = idPropertyOf(body);
  if (idProperty === undefined) return { errors: products.errors, categoryIds: products.categoryIds, matches: new Map() };

  const errors: ErrorDetail[] = [];
  const keys: FieldValue[] = [];
  for (const { body: item, prefix } of items) {
    if (!isPlainObject(item)) continue;
    const value = item[idProperty];
    if (value === undefined) errors.push({ field: `${prefix}${idProperty}`, message: `is required (it is the id_property)` });
    else if (typeof value === 'string') keys.push({ field: `${prefix}${idProperty}`, value });
    if (idProperty !== 'sku' && item.sku !== undefined)
      errors.push({ field: `${prefix}sku`, message: 'is only accepted with id_property sku' });
  }
  errors.push(...repeatedAcrossItems(keys));

  const matches =
    locked ??
    (await findUpsertMatches(
      db,
      tenantId,
      idProperty,
      keys.map((k) => k.value),
    ));
  const firstMatchOf = new Map<number, string>();
  for (const { body: item, prefix } of items) {
    const value = isPlainObject(item) ? item[idProperty] : undefined;
    if (!isPlainObject(item) || typeof value !== 'string') continue;
    const match = matches.get(value);
    if (match && idProperty === 'sku') {
      const first = firstMatchOf.get(match.id);
      if (first === undefined) firstMatchOf.set(match.id, `${prefix}sku`);
      else errors.push({ field: `${prefix}sku`, message: `matches the same product as ${first}` });
      if (typeof item.reference === 'string' && item.reference !== match.reference)
        errors.push({
          field: `${prefix}reference`,
          message: `must be ${match.reference} (the reference of the product with this sku; a reference does not change) or be left out`,
        });
    } else if (!match) {
      const required = idProperty === 'sku' ? ['reference', ...CREATE_FIELDS] : CREATE_FIELDS;
      for (const field of required)
        if (item[field] === undefined)
          errors.push({ field: `${prefix}${field}`, message: 'is required to create a product (nothing matches)' });
      if (idProperty === 'sku' && Array.isArray(item.rates) && !item.rates.some((rate) => isPlainObject(rate) && rate.sku === value))
        errors.push({ field: `${prefix}rates`, message: 'must include a rate with the item sku to create a product (no product has it)' });
    }
  }
  return { errors: onePerField([...errors, ...products.errors]), categoryIds: products.categoryIds, matches };
}

/** Rules of `POST /products/batch/upsert`, reported with the schema's failures. */
export const upsertRules =
  (db: Db): RuleCheck =>
  async (body, { tenantId }) =>
    (await upsertRuleErrors(db, tenantId, body)).errors;

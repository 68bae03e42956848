// The rules of product bodies that a schema cannot express: the category reference must resolve,
// at most one rate is primary, and no reference or sku repeats inside one request. One
// implementation: the routes run it over a body that failed its schema (so one 422 names every
// failing field) and the services run it over the typed body. It tolerates malformed input.
import { type ErrorDetail, isPlainObject, type RuleCheck } from '@crm/http';
import type { Kysely } from 'kysely';
import { findCategoriesByReferences } from '../categories/repo.ts';
import type { CatalogDatabase } from '../db/database.ts';
import { MAX_BATCH, type RateInput } from './model.ts';
import type { RateValues } from './repo.ts';

type Db = Kysely<CatalogDatabase>;

/** One product body of a request and the prefix of its fields (`''`, or `data[3].` in a batch). */
export interface ProductItem {
  body: unknown;
  prefix: string;
}

/** A string value of a request and the field that carries it (`data[1].rates[0].sku`). */
export interface FieldValue {
  field: string;
  value: string;
}

/** The field error of a rate list with more than one primary rate, if any. */
export function primaryRateErrors(rates: unknown, prefix: string): ErrorDetail[] {
  if (!Array.isArray(rates) || rates.filter((r) => isPlainObject(r) && r.primary === true).length <= 1) return [];
  return [{ field: `${prefix}rates`, message: 'must have at most one primary rate' }];
}

/** The skus of a rate list as fields (`data[1].rates[0].sku`), for repeat and conflict checks. */
export function skuFields(rates: unknown, prefix: string): FieldValue[] {
  if (!Array.isArray(rates)) return [];
  return rates.flatMap((rate, i) =>
    isPlainObject(rate) && typeof rate.sku === 'string' ? [{ field: `${prefix}rates[${i}].sku`, value: rate.sku }] : [],
  );
}

/** The `reference` of each item that has one, as fields (`data[2].reference`). */
export function referenceFields(items: ProductItem[]): FieldValue[] {
  return items.flatMap(({ body, prefix }) =>
    isPlainObject(body) && typeof body.reference === 'string' ? [{ field: `${prefix}reference`, value: body.reference }] : [],
  );
}

/** Field errors for values repeated inside one request (two items with the same reference, a sku twice). */
export function repeatedAcrossItems(values: FieldValue[]): ErrorDetail[] {
  const firstField = new Map<string, string>();
  const errors: ErrorDetail[] = [];
  for (const { field, value } of values) {
    const first = firstField.get(value);
    if (first === undefined) firstField.set(value, field);
    else errors.push({ field, message: `must not repeat ${first}` });
  }
  return errors;
}

/**
 * Every rule of these product bodies: unknown `product_category_ref`, more than one primary
 * rate, a reference or sku repeated inside the request. Also returns the category id of each
 * reference that resolved (one query for all items).
 */
export async function productRuleErrors(db: Db, tenantId: string, items: ProductItem[]) {
  const refs = items.flatMap(({ body, prefix }) =>
    isPlainObject(body) && typeof body.product_category_ref === 'string'
      ? [{ field: `${prefix}product_category_ref`, value: body.product_category_ref }]
      : [],
  );
  const rows = await findCategoriesByReferences(db, tenantId, [...new Set(refs.map((r) => r.value))]);
  const categoryIds = new Map(rows.map((r) => [r.reference, r.id]));
  const errors: ErrorDetail[] = refs
    .filter((r) => !categoryIds.has(r.value))
    .map((r) => ({ field: r.field, message: 'must be the reference of a product category of this account' }));
  const rateLists = items.map(({ body, prefix }) => ({ rates: isPlainObject(body) ? body.rates : undefined, prefix }));
  errors.push(...rateLists.flatMap(({ rates, prefix }) => primaryRateErrors(rates, prefix)));
  errors.push(...repeatedAcrossItems(referenceFields(items)));
  errors.push(...repeatedAcrossItems(rateLists.flatMap(({ rates, prefix }) => skuFields(rates, prefix))));
  return { errors, categoryIds };
}

/**
 * The items of a batch body (`data[i].`); none when `data` is not a list or is over the batch
 * limit (the schema reports `data` itself, and the rules need not query for thousands of items).
 */
export function batchItems(body: unknown): ProductItem[] {
  const data = isPlainObject(body) ? body.data : undefined;
  if (!Array.isArray(data) || data.length > MAX_BATCH) return [];
  return data.map((item, i) => ({ body: item, prefix: `data[${i}].` }));
}

/** Rules of `POST /products` and `PUT|PATCH /products/{reference}`, reported with the schema's failures. */
export const productRules =
  (db: Db): RuleCheck =>
  async (body, { tenantId }) =>
    (await productRuleErrors(db, tenantId, [{ body, prefix: '' }])).errors;

/** Rules of `POST /products/batch`, reported with the schema's failures. */
export const batchRules =
  (db: Db): RuleCheck =>
  async (body, { tenantId }) =>
    (await productRuleErrors(db, tenantId, batchItems(body))).errors;

/** Rates as stored: cost defaults to 0 and the first rate is primary when none is (numeric(14,2) rounds to cents). */
export function normaliseRates(rates: RateInput[]): RateValues[] {
  const anyPrimary = rates.some((r) => r.primary === true);
  return rates.map((rate, i) => ({
    sku: rate.sku,
    cost: rate.cost ?? 0,
    price: rate.price,
    primary: anyPrimary ? rate.primary === true : i === 0,
  }));
}

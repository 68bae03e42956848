import { AppError, type ErrorDetail, validationDetails } from '@crm/http';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Kysely } from 'kysely';
import { resolveContactIdentifier } from '../contacts/identifier.ts';
import type { SalesDatabase } from '../db/database.ts';
import { findUserByEmail } from '../users/repo.ts';
import { type CallContext, lookupProducts } from './lines.ts';
import { existingOpportunityIds } from './repo.ts';
import type { OrdersDeps } from './service.ts';

type Loose = Record<string, unknown>;

const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
const linesOf = (item: Loose): Loose[] => (Array.isArray(item.products) ? item.products.filter(isObject) : []);

/** Schema errors of a body worded like the kit's (`products[2].quantity must be …`); empty when valid. */
export function schemaErrors(schema: TSchema, body: unknown): ErrorDetail[] {
  if (Value.Check(schema, body)) return [];
  return validationDetails([...Value.Errors(schema, body)].map((e) => ({ path: e.path, message: e.message, type: e.type })));
}

async function partyErrors(db: Kysely<SalesDatabase>, tenantId: string, item: Loose, prefix: string, errors: ErrorDetail[]) {
  const identifier = text(item.enterprise_identifier);
  if (identifier && (await resolveContactIdentifier(db, tenantId, identifier)) === undefined)
    errors.push({ field: `${prefix}enterprise_identifier`, message: 'does not match any contact' });
  const email = text(item.user_email);
  if (email && !(await findUserByEmail(db, tenantId, email)))
    errors.push({ field: `${prefix}user_email`, message: 'is not a user of the account' });
  const opportunity = item.opportunity_id;
  if (Number.isInteger(opportunity) && !(await existingOpportunityIds(db, tenantId, [opportunity as number])).has(opportunity as number))
    errors.push({ field: `${prefix}opportunity_id`, message: 'is not an opportunity of the account' });
}

async function lineErrors(deps: OrdersDeps, ctx: CallContext, items: { item: Loose; prefix: string }[], errors: ErrorDetail[]) {
  const references = items.flatMap(({ item }) => linesOf(item).flatMap((line) => text(line.reference) ?? []));
  if (references.length === 0) return;
  const products = await lookupProducts(deps.catalog, ctx, references).catch((error) => {
    if (error instanceof AppError && error.status >= 500) return undefined; // report the field errors we have
    throw error;
  });
  if (!products) return;
  for (const { item, prefix } of items)
    for (const [i, line] of (Array.isArray(item.products) ? item.products : []).entries()) {
      const reference = isObject(line) ? text(line.reference) : undefined;
      if (!reference || !isObject(line)) continue;
      const product = products.get(reference);
      const sku = text(line.rate_sku);
      if (!product) errors.push({ field: `${prefix}products[${i}].reference`, message: 'is not a product of the catalog' });
      else if (sku && !product.rates.some((r) => r.sku === sku))
        errors.push({ field: `${prefix}products[${i}].rate_sku`, message: `is not a rate of product ${product.reference}` });
    }
}

/**
 * For a body that fails its schema: the schema errors plus every reference that does not
 * resolve among the fields that are well-typed, so one 422 names all failing fields at once
 * (`enterprise_identifier`, `products[1].reference` and `products[2].quantity` together).
 * `items` are the order objects inside the body with their field prefix (`data[3].`).
 */
export async function looseOrderErrors(
  deps: OrdersDeps,
  ctx: CallContext,
  schemaDetails: ErrorDetail[],
  items: { item: unknown; prefix: string }[],
): Promise<ErrorDetail[]> {
  const objects = items.flatMap(({ item, prefix }) => (isObject(item) ? [{ item, prefix }] : []));
  const found: ErrorDetail[] = [];
  for (const { item, prefix } of objects) await partyErrors(deps.db, ctx.tenantId, item, prefix, found);
  await lineErrors(deps, ctx, objects, found);
  const taken = new Set(schemaDetails.map((d) => d.field));
  const merged = [...schemaDetails, ...found.filter((d) => !taken.has(d.field))];
  return merged.sort((a, b) => fieldOrder(a.field, b.field));
}

/** Orders fields by item and line index so a batch's errors read in request order. */
function fieldOrder(a: string, b: string): number {
  const key = (f: string) => f.replace(/\d+/g, (n) => n.padStart(6, '0'));
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

// The order rules a schema cannot express: the contact, user, opportunity and catalog products a
// body names must exist, and the line and order totals must stay within 999999999999.99. ONE
// implementation, run on any JSON: by the route's `jsonBody` on a body that fails its schema (so
// one 422 names schema and rule failures together) and by the service on a schema-valid body.
import type { InternalProduct } from '@crm/contracts';
import { AppError, type ErrorDetail, isPlainObject, type RuleCheck } from '@crm/http';
import { type CallContext, lineReferences, lookupProducts, priceOrderLines, requestLines } from './lines.ts';
import type { NewOrderLine } from './repo.ts';
import { checkOpportunity, type OrderParties, resolveOrderParties } from './resolve.ts';
import type { OrdersDeps } from './service.ts';
import { type OrderToTotal, totalErrors } from './totals.ts';

/** One order object inside a request body, with its field prefix (`''`, or `data[3].` in a batch). */
export interface OrderItem {
  item: unknown;
  prefix: string;
}

/** What the rules resolved for one order: its parties (creates only) and its priced lines. */
export interface CheckedOrder {
  parties?: OrderParties;
  lines: NewOrderLine[];
}

export interface RuleOptions {
  /** Resolve `enterprise_identifier` and `user_email` (creates; an update has neither). */
  parties: boolean;
  /** On a body already refused by its schema, a failing catalog only drops the line checks (no 503). */
  catalogOptional?: boolean;
}

async function catalogProducts(deps: OrdersDeps, ctx: CallContext, items: OrderItem[], catalogOptional: boolean) {
  const references = items.flatMap(({ item }) => lineReferences(requestLines(item)));
  if (references.length === 0) return new Map<string, InternalProduct>();
  return lookupProducts(deps.catalog, ctx, references).catch((error) => {
    if (catalogOptional && error instanceof AppError && error.status >= 500) return undefined;
    throw error;
  });
}

/** Field paths in request order: `data[2]…` before `data[10]…`, `products[1]` before `products[12]`. */
function byField(a: ErrorDetail, b: ErrorDetail): number {
  const key = (f: string) => f.replace(/\d+/g, (n) => n.padStart(10, '0'));
  const [x, y] = [key(a.field), key(b.field)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Runs every order rule over the orders of one write: one catalog lookup for all their lines,
 * the parties and opportunity of each, and one totals statement. Nothing is written; every
 * failing field is returned (in request order) with what resolved.
 */
export async function checkOrders(
  deps: OrdersDeps,
  ctx: CallContext,
  items: OrderItem[],
  { parties, catalogOptional = false }: RuleOptions,
): Promise<{ errors: ErrorDetail[]; orders: CheckedOrder[] }> {
  const products = await catalogProducts(deps, ctx, items, catalogOptional);
  const errors: ErrorDetail[] = [];
  const orders: CheckedOrder[] = [];
  const toTotal: OrderToTotal[] = [];
  for (const { item, prefix } of items) {
    const fields = isPlainObject(item) ? item : {};
    const resolved = parties ? await resolveOrderParties(deps.db, ctx.tenantId, fields, prefix, errors) : undefined;
    await checkOpportunity(deps.db, ctx.tenantId, fields.opportunity_id, prefix, errors);
    const priced = products ? priceOrderLines(requestLines(item), products, prefix) : { lines: [], errors: [] };
    errors.push(...priced.errors);
    toTotal.push({ prefix, lines: priced.lines });
    orders.push({ parties: resolved, lines: priced.lines.map(({ line }) => line) });
  }
  errors.push(...(await totalErrors(deps.db, toTotal)));
  return { errors: errors.sort(byField), orders };
}

/** The order items of a body: the body itself, or each element of a batch's `data` (`data[i].`). */
export const singleOrder = (body: unknown): OrderItem[] => [{ item: body, prefix: '' }];
export const batchOrders = (body: unknown): OrderItem[] => {
  const data = isPlainObject(body) ? body.data : undefined;
  return Array.isArray(data) ? data.map((item, i) => ({ item, prefix: `data[${i}].` })) : [];
};

/** The rules as a `jsonBody` rule check: on a body that failed its schema, the rule failures of its well-formed parts. */
export function orderRules(deps: OrdersDeps, itemsOf: (body: unknown) => OrderItem[], options: RuleOptions): RuleCheck {
  return async (body, { tenantId, requestId }) =>
    (await checkOrders(deps, { tenantId, requestId }, itemsOf(body), { ...options, catalogOptional: true })).errors;
}

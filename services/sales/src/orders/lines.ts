import type { InternalProduct, ProductsLookupResponse } from '@crm/contracts';
import { AppError, type ErrorDetail, type InternalClient, isPlainObject, MAX_AMOUNT, schemaErrors } from '@crm/http';
import { OrderLineInput } from './model.ts';
import type { NewOrderLine } from './repo.ts';

const LOOKUP_CHUNK = 500; // the catalog's lookup accepts up to 500 references per call

export interface CallContext {
  tenantId: string;
  requestId: string;
}

/** A priced line with where it came from: its index in the request and the field a total error names. */
export interface PricedLine {
  index: number;
  line: NewOrderLine;
  /** `quantity` when the client gave one, else `price` when given, else `quantity` (the lever left). */
  blame: 'quantity' | 'price';
}

/**
 * The tenant's catalog products for these references, keyed by reference, fetched with one
 * internal call (more only past 500 distinct references). Unknown references are absent.
 * A catalog that is down or failing surfaces as 503 before anything is written.
 */
export async function lookupProducts(
  catalog: InternalClient,
  ctx: CallContext,
  references: string[],
): Promise<Map<string, InternalProduct>> {
  const unique = [...new Set(references)];
  const products = new Map<string, InternalProduct>();
  for (let start = 0; start < unique.length; start += LOOKUP_CHUNK) {
    const chunk = unique.slice(start, start + LOOKUP_CHUNK);
    const response = await catalog<ProductsLookupResponse>('POST', '/internal/products/lookup', { ...ctx, body: { references: chunk } });
    if (response.status !== 200) throw new AppError('service_unavailable', 'The catalog service could not look up products');
    for (const product of response.body.data) products.set(product.reference, product);
  }
  return products;
}

/** A JSON number as an exact decimal string for a Postgres `numeric` (0.1 stays "0.1"). */
export function decimalOf(value: number): string {
  return String(value);
}

const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** The request lines of an order body, as given (any JSON); not an array → none. */
export function requestLines(item: unknown): unknown[] {
  const products = isPlainObject(item) ? item.products : undefined;
  return Array.isArray(products) ? products : [];
}

/** The product references named by these request lines (strings only; malformed lines are the schema's to report). */
export function lineReferences(lines: unknown[]): string[] {
  return lines.flatMap((line) => (isPlainObject(line) ? (text(line.reference) ?? []) : []));
}

/** A rate-derived unit value outside the bounds of §19 (a catalog row older than its constraints). */
function rateValueError(value: number | undefined): string | undefined {
  if (value === undefined) return 'is required (the product has no rate)';
  if (!Number.isFinite(value) || value < 0) return 'must be at least 0';
  return value > MAX_AMOUNT ? `must be at most ${MAX_AMOUNT}` : undefined;
}

/** The rate a line names by sku, or without one the primary rate (else the first). */
function rateOf(product: InternalProduct, sku: string | undefined) {
  return sku === undefined ? (product.rates.find((r) => r.primary) ?? product.rates[0]) : product.rates.find((r) => r.sku === sku);
}

/**
 * Prices request lines from the catalog: `rate_sku` picks the rate (default the primary, else
 * the first), `cost`/`price` default from it, `discount` 0, `quantity` 1. The line keeps a
 * snapshot of the product (id, reference, name). Errors name `<prefix>products[i].field`.
 * Tolerates any JSON: references are checked on every line that names one; only a line that
 * passes its own schema is priced (the schema reports the others).
 */
export function priceOrderLines(
  requested: unknown[],
  products: Map<string, InternalProduct>,
  prefix: string,
): { lines: PricedLine[]; errors: ErrorDetail[] } {
  const lines: PricedLine[] = [];
  const errors: ErrorDetail[] = [];
  requested.forEach((raw, index) => {
    const field = `${prefix}products[${index}]`;
    const reference = isPlainObject(raw) ? text(raw.reference) : undefined;
    if (!isPlainObject(raw) || reference === undefined) return;
    const product = products.get(reference);
    if (!product) {
      errors.push({ field: `${field}.reference`, message: 'is not a product of the catalog' });
      return;
    }
    const sku = text(raw.rate_sku);
    const rate = rateOf(product, sku);
    if (sku !== undefined && !rate) {
      errors.push({ field: `${field}.rate_sku`, message: `is not a rate of product ${product.reference}` });
      return;
    }
    if (schemaErrors(OrderLineInput, raw).length > 0) return;
    const line = raw as OrderLineInput;
    const cost = line.cost ?? rate?.cost;
    const price = line.price ?? rate?.price;
    const costError = line.cost === undefined ? rateValueError(cost) : undefined;
    const priceError = line.price === undefined ? rateValueError(price) : undefined;
    if (costError) errors.push({ field: `${field}.cost`, message: costError });
    if (priceError) errors.push({ field: `${field}.price`, message: priceError });
    if (costError || priceError || cost === undefined || price === undefined) return;
    lines.push({
      index,
      blame: line.quantity === undefined && line.price !== undefined ? 'price' : 'quantity',
      line: {
        product_id: product.id,
        reference: product.reference,
        name: product.name,
        rate_sku: rate?.sku ?? null,
        cost: decimalOf(cost),
        price: decimalOf(price),
        discount: decimalOf(line.discount ?? 0),
        quantity: decimalOf(line.quantity ?? 1),
        comment: line.comment ?? null,
        description: line.description ?? null,
      },
    });
  });
  return { lines, errors };
}

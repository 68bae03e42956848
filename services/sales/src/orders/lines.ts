import type { InternalProduct, ProductsLookupResponse } from '@crm/contracts';
import { AppError, type ErrorDetail, type InternalClient } from '@crm/http';
import type { OrderLineRequest } from './model.ts';
import type { NewOrderLine } from './repo.ts';

const LOOKUP_CHUNK = 500; // the catalog's lookup accepts up to 500 references per call

export interface CallContext {
  tenantId: string;
  requestId: string;
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

/**
 * Prices request lines from the catalog: `rate_sku` picks the rate (default the primary, else
 * the first), `cost`/`price` default from it, `discount` 0, `quantity` 1. The line keeps a
 * snapshot of the product (id, reference, name). Errors name `<prefix>products[i].field`.
 */
export function priceOrderLines(
  requested: OrderLineRequest[],
  products: Map<string, InternalProduct>,
  prefix: string,
): { lines: NewOrderLine[]; errors: ErrorDetail[] } {
  const lines: NewOrderLine[] = [];
  const errors: ErrorDetail[] = [];
  requested.forEach((line, i) => {
    const field = `${prefix}products[${i}]`;
    const product = products.get(line.reference);
    if (!product) {
      errors.push({ field: `${field}.reference`, message: 'is not a product of the catalog' });
      return;
    }
    const rate =
      line.rate_sku === undefined
        ? (product.rates.find((r) => r.primary) ?? product.rates[0])
        : product.rates.find((r) => r.sku === line.rate_sku);
    if (line.rate_sku !== undefined && !rate) {
      errors.push({ field: `${field}.rate_sku`, message: `is not a rate of product ${product.reference}` });
      return;
    }
    const cost = line.cost ?? rate?.cost;
    const price = line.price ?? rate?.price;
    if (cost === undefined) errors.push({ field: `${field}.cost`, message: 'is required (the product has no rate)' });
    if (price === undefined) errors.push({ field: `${field}.price`, message: 'is required (the product has no rate)' });
    if (cost === undefined || price === undefined) return;
    lines.push({
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
    });
  });
  return { lines, errors };
}

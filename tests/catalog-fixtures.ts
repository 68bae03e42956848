import type { TestTenant } from '@crm/testing';

/** A valid product body in category `tools` with one rate (`<reference>-A`); `extra` overrides fields. */
export const product = (reference: string, extra: Record<string, unknown> = {}) => ({
  reference,
  name: `Product ${reference}`,
  vat: 21,
  product_category_ref: 'tools',
  rates: [{ sku: `${reference}-A`, cost: 1, price: 2 }],
  ...extra,
});

/** Creates a product through the gateway and returns it, failing loudly on anything but 201. */
export async function create(tenant: TestTenant, body: Record<string, unknown>) {
  const res = await tenant.request('POST', '/v1/products', { body });
  if (res.status !== 201) throw new Error(`product creation failed: ${res.status} ${res.text}`);
  return res.body.data;
}

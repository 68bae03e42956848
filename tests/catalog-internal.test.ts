import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;
let tenant: TestTenant;
let other: TestTenant;

const lookup = (as: TestTenant, references: unknown, headers: Record<string, string> = {}) =>
  stack.call('catalog', 'POST', '/internal/products/lookup', {
    body: { references },
    headers: { 'x-internal-token': stack.internalToken, 'x-tenant-id': as.tenantId, ...headers },
  });

async function seedProduct(as: TestTenant, reference: string, rates: unknown[]) {
  const category = `cat-${crypto.randomUUID().slice(0, 8)}`;
  expect((await as.request('POST', '/v1/product-categories', { body: { name: 'Cat', reference: category } })).status).toBe(201);
  const res = await as.request('POST', '/v1/products', {
    body: { reference, name: `Product ${reference}`, vat: 21, product_category_ref: category, rates },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

beforeAll(async () => {
  stack = await sharedStack();
  [tenant, other] = await Promise.all([stack.createTenant(), stack.createTenant()]);
}, 120_000);

describe('POST /internal/products/lookup', () => {
  test('returns the requested products with their rates; unknown references are absent', async () => {
    const a = await seedProduct(tenant, 'P-1', [
      { sku: 'P1-S', cost: 1.5, price: 10 },
      { sku: 'P1-L', cost: 2, price: 19.99, primary: true },
    ]);
    const b = await seedProduct(tenant, 'Ref with space/ünï', [{ sku: 'P2-S', price: 5 }]);
    const res = await lookup(tenant, ['P-1', 'nope', 'Ref with space/ünï', 'P-1']);
    expect(res.status).toBe(200);
    const byRef = Object.fromEntries(res.body.data.map((p: any) => [p.reference, p]));
    expect(res.body.data).toHaveLength(2);
    expect(byRef['P-1']).toEqual({
      id: a.id,
      reference: 'P-1',
      name: 'Product P-1',
      rates: [
        { id: a.rates[0].id, sku: 'P1-S', cost: 1.5, price: 10, primary: false },
        { id: a.rates[1].id, sku: 'P1-L', cost: 2, price: 19.99, primary: true },
      ],
    });
    expect(byRef['Ref with space/ünï']).toEqual({
      id: b.id,
      reference: 'Ref with space/ünï',
      name: 'Product Ref with space/ünï',
      rates: [{ id: b.rates[0].id, sku: 'P2-S', cost: 0, price: 5, primary: true }],
    });
  });

  test('is scoped by x-tenant-id: another tenant sees only its own P-1', async () => {
    await seedProduct(other, 'P-1', [{ sku: 'OTHER-P1', price: 1 }]);
    const mine = await lookup(tenant, ['P-1']);
    const theirs = await lookup(other, ['P-1']);
    expect(mine.body.data.map((p: any) => p.rates[0].sku)).toEqual(['P1-S']);
    expect(theirs.body.data.map((p: any) => p.rates[0].sku)).toEqual(['OTHER-P1']);
    expect(theirs.body.data[0].id).not.toBe(mine.body.data[0].id);
  });

  test('an empty list answers an empty list', async () => {
    const res = await lookup(tenant, []);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [] });
  });

  test('a malformed body is a 422 and the internal credential is required', async () => {
    const bad = await lookup(tenant, 'P-1');
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].field).toBe('references');
    const noToken = await stack.call('catalog', 'POST', '/internal/products/lookup', {
      body: { references: ['P-1'] },
      headers: { 'x-tenant-id': tenant.tenantId },
    });
    expect(noToken.status).toBe(401);
  });

  test('the gateway does not expose it', async () => {
    const res = await tenant.request('POST', '/internal/products/lookup', { body: { references: ['P-1'] } });
    expect(res.status).toBe(404);
  });
});

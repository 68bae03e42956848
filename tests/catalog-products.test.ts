import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { create, product } from './catalog-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A tenant with categories `tools` (root) and `drills` (its child). */
async function tenantWithCategories() {
  const tenant = await stack.createTenant();
  const tools = await tenant.request('POST', '/v1/product-categories', { body: { name: 'Tools', reference: 'tools' } });
  const drills = await tenant.request('POST', '/v1/product-categories', {
    body: { name: 'Drills', reference: 'drills', parent_id: tools.body.data.id },
  });
  return { tenant, tools: tools.body.data, drills: drills.body.data };
}

const countProducts = async (tenant: TestTenant) =>
  Number((await stack.sql('select count(*) from catalog.products where tenant_id = $1', [tenant.tenantId])).rows[0].count);

describe('create', () => {
  test('201 with every field, category object without children, numbers for money, first rate primary by default', async () => {
    const { tenant, drills } = await tenantWithCategories();
    const res = await tenant.request('POST', '/v1/products', {
      body: {
        reference: 'DR-1',
        name: 'Cordless drill',
        description: 'Drills holes',
        vat: 21,
        product_category_ref: 'drills',
        services: 'warranty',
        stock: 12.5,
        rates: [
          { sku: 'DR-1-S', cost: 10.25, price: 19.999 },
          { sku: 'DR-1-L', cost: 12, price: 30 },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      reference: 'DR-1',
      name: 'Cordless drill',
      description: 'Drills holes',
      vat_id: expect.any(Number),
      product_category_id: drills.id,
      services: 'warranty',
      stock: 12.5,
      rates: [
        { id: expect.any(Number), sku: 'DR-1-S', cost: 10.25, price: 20, primary: true },
        { id: expect.any(Number), sku: 'DR-1-L', cost: 12, price: 30, primary: false },
      ],
      category: { ...drills, has_products: true, updated_at: expect.stringMatching(ISO), children: undefined },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Object.keys(res.body.data.category)).not.toContain('children');
    const stored = await stack.sql('select cost, price, is_primary from catalog.product_rates where product_id = $1 order by position', [
      res.body.data.id,
    ]);
    expect(stored.rows).toEqual([
      { cost: '10.25', price: '20.00', is_primary: true },
      { cost: '12.00', price: '30.00', is_primary: false },
    ]);
  });

  test('optional fields are null when omitted; an explicit primary wins', async () => {
    const { tenant } = await tenantWithCategories();
    const data = await create(
      tenant,
      product('P-1', {
        rates: [
          { sku: 'a', price: 1 },
          { sku: 'b', price: 2, primary: true },
        ],
      }),
    );
    expect(data).toMatchObject({ description: null, services: null, stock: null });
    expect(data.rates.map((r: any) => [r.sku, r.cost, r.primary])).toEqual([
      ['a', 0, false],
      ['b', 0, true],
    ]);
  });

  test('vat → the tenant VAT rate of that percentage, created on first use and shared', async () => {
    const [{ tenant }, { tenant: other }] = await Promise.all([tenantWithCategories(), tenantWithCategories()]);
    const a = await create(tenant, product('A', { vat: 21 }));
    const b = await create(tenant, product('B', { vat: 21 }));
    const c = await create(tenant, product('C', { vat: 10 }));
    const d = await create(other, product('A', { vat: 21 }));
    expect(b.vat_id).toBe(a.vat_id);
    expect(c.vat_id).not.toBe(a.vat_id);
    expect(d.vat_id).not.toBe(a.vat_id);
    const rows = await stack.sql('select id, percentage from catalog.vat_rates where tenant_id = $1 order by id', [tenant.tenantId]);
    expect(rows.rows).toEqual([
      { id: a.vat_id, percentage: '21.00' },
      { id: c.vat_id, percentage: '10.00' },
    ]);
  });

  test('missing required fields are all named in one 422, nothing written', async () => {
    const { tenant } = await tenantWithCategories();
    const res = await tenant.request('POST', '/v1/products', { body: { description: 'x', colour: 'red' } });
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('validation_error');
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'colour',
      'name',
      'product_category_ref',
      'rates',
      'reference',
      'vat',
    ]);
    for (const field of ['name', 'vat', 'rates']) expect(res.body.error.message).toContain(`${field} is required`);
    expect(await countProducts(tenant)).toBe(0);
  });

  test('bad values are named with their paths', async () => {
    const { tenant } = await tenantWithCategories();
    const res = await tenant.request('POST', '/v1/products', {
      body: product('X', {
        vat: 101,
        stock: -1,
        rates: [
          { sku: 'ok', price: 1 },
          { sku: '', price: -1, cost: 'a' },
        ],
      }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'rates[1].cost',
      'rates[1].price',
      'rates[1].sku',
      'stock',
      'vat',
    ]);
    const empty = await tenant.request('POST', '/v1/products', { body: product('X', { rates: [] }) });
    expect(empty.body.error.details).toEqual([{ field: 'rates', message: expect.stringContaining('at least 1') }]);
    expect(await countProducts(tenant)).toBe(0);
  });

  test('unknown category, two primaries and a repeated sku are reported together', async () => {
    const { tenant } = await tenantWithCategories();
    const res = await tenant.request('POST', '/v1/products', {
      body: product('X', {
        product_category_ref: 'nope',
        rates: [
          { sku: 's1', price: 1, primary: true },
          { sku: 's1', price: 1, primary: true },
        ],
      }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual(['product_category_ref', 'rates', 'rates[1].sku']);
    expect(await countProducts(tenant)).toBe(0);
  });

  test('duplicate reference or sku in the tenant → 409; another tenant may reuse both', async () => {
    const [{ tenant }, { tenant: other }] = await Promise.all([tenantWithCategories(), tenantWithCategories()]);
    await create(tenant, product('P-1', { rates: [{ sku: 'SKU-1', price: 1 }] }));
    const dupRef = await tenant.request('POST', '/v1/products', { body: product('P-1', { rates: [{ sku: 'SKU-2', price: 1 }] }) });
    expect(dupRef.status).toBe(409);
    expect(dupRef.body.error.type).toBe('conflict');
    const dupSku = await tenant.request('POST', '/v1/products', { body: product('P-2', { rates: [{ sku: 'SKU-1', price: 1 }] }) });
    expect(dupSku.status).toBe(409);
    expect(dupSku.body.error.details).toEqual([{ field: 'rates[0].sku', message: expect.any(String) }]);
    expect(await countProducts(tenant)).toBe(1);
    await create(other, product('P-1', { rates: [{ sku: 'SKU-1', price: 1 }] }));
  });
});

describe('references in paths', () => {
  test('spaces, encoded slashes and non-ASCII work for GET, PUT and DELETE through the gateway', async () => {
    const { tenant } = await tenantWithCategories();
    for (const reference of ['With space', 'a/b/c', 'Crème brûlée Ø', '50% off+more?', 'batch']) {
      const made = await create(tenant, product(reference, { rates: [{ sku: `sku ${reference}`, price: 1 }] }));
      const path = `/v1/products/${encodeURIComponent(reference)}`;
      const got = await tenant.request('GET', path);
      expect(got.status).toBe(200);
      expect(got.body.data.id).toBe(made.id);
      const put = await tenant.request('PUT', path, { body: { name: 'Renamed' } });
      expect(put.body.data).toMatchObject({ reference, name: 'Renamed' });
      expect((await tenant.request('DELETE', path)).body).toEqual({ deleted: true });
      expect((await tenant.request('GET', path)).status).toBe(404);
    }
  });
});

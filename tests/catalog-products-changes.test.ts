import { beforeAll, describe, expect, test } from 'bun:test';
import { type EventType, eventPayloadErrors } from '@crm/contracts';
import { type Stack, sharedStack } from '@crm/testing';
import { create, ofType, product, settledFeed } from './catalog-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

async function tenantWithCategories() {
  const tenant = await stack.createTenant();
  const tools = (await tenant.request('POST', '/v1/product-categories', { body: { name: 'Tools', reference: 'tools' } })).body.data;
  const paint = (await tenant.request('POST', '/v1/product-categories', { body: { name: 'Paint', reference: 'paint' } })).body.data;
  return { tenant, tools, paint };
}

const refs = (res: { body: any }) => res.body.data.map((p: any) => p.reference);

describe('list', () => {
  test('paginates by id and filters by q, product_category_id, updated_since; sorts', async () => {
    const { tenant, paint } = await tenantWithCategories();
    await create(tenant, product('HAM-1', { name: 'Claw hammer' }));
    await create(tenant, product('SAW-1', { name: 'Hand saw' }));
    await create(tenant, product('PNT-1', { name: 'White paint 100%', product_category_ref: 'paint' }));
    const all = await tenant.request('GET', '/v1/products?per_page=2');
    expect(all.status).toBe(200);
    expect(refs(all)).toEqual(['HAM-1', 'SAW-1']);
    expect(all.body.pagination).toEqual({
      total: 3,
      per_page: 2,
      current_page: 1,
      last_page: 2,
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect(all.body.data[0].rates).toHaveLength(1);
    expect(all.body.data[0].category.reference).toBe('tools');
    expect(refs(await tenant.request('GET', '/v1/products?q=HAMMER'))).toEqual(['HAM-1']);
    expect(refs(await tenant.request('GET', '/v1/products?q=saw-'))).toEqual(['SAW-1']);
    expect(refs(await tenant.request('GET', '/v1/products?q=100%25'))).toEqual(['PNT-1']);
    expect(refs(await tenant.request('GET', '/v1/products?q=_'))).toEqual([]);
    expect(refs(await tenant.request('GET', `/v1/products?product_category_id=${paint.id}`))).toEqual(['PNT-1']);
    expect(refs(await tenant.request('GET', '/v1/products?sort=-name'))).toEqual(['PNT-1', 'SAW-1', 'HAM-1']);
    expect(refs(await tenant.request('GET', '/v1/products?sort=reference&unknown=1'))).toEqual(['HAM-1', 'PNT-1', 'SAW-1']);

    const cutoff = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await tenant.request('PUT', '/v1/products/SAW-1', { body: { stock: 3 } });
    expect(refs(await tenant.request('GET', `/v1/products?updated_since=${encodeURIComponent(cutoff)}`))).toEqual(['SAW-1']);

    for (const [query, field] of [
      ['sort=price', 'sort'],
      ['updated_since=yesterday', 'updated_since'],
      ['product_category_id=abc', 'product_category_id'],
    ]) {
      const bad = await tenant.request('GET', `/v1/products?${query}`);
      expect(bad.status).toBe(422);
      expect(bad.body.error.details.map((d: any) => d.field)).toEqual([field]);
    }
    const perPage = await tenant.request('GET', '/v1/products?per_page=101');
    expect(perPage.status).toBe(422);
    expect(perPage.body.error.details).toEqual([{ field: 'per_page', message: 'must be at most 100' }]);
  });
});

describe('update', () => {
  test('PUT is partial: omitted fields kept, null clears, vat and category re-resolved', async () => {
    const { tenant, paint } = await tenantWithCategories();
    const made = await create(tenant, product('P-1', { description: 'Desc', services: 'svc', stock: 4 }));
    const res = await tenant.request('PUT', '/v1/products/P-1', {
      body: { name: 'New name', description: null, vat: 10, product_category_ref: 'paint' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: made.id,
      reference: 'P-1',
      name: 'New name',
      description: null,
      services: 'svc',
      stock: 4,
      product_category_id: paint.id,
      category: { id: paint.id, reference: 'paint', has_products: true },
      rates: made.rates,
    });
    expect(res.body.data.vat_id).not.toBe(made.vat_id);
    expect((await tenant.request('GET', '/v1/product-categories')).body.data.map((c: any) => [c.reference, c.has_products])).toEqual([
      ['tools', false],
      ['paint', true],
    ]);
    const patch = await tenant.request('PATCH', '/v1/products/P-1', { body: { vat: 21 } });
    expect(patch.body.data.vat_id).toBe(made.vat_id);
    expect((await tenant.request('GET', '/v1/products/P-1')).body.data).toEqual(patch.body.data);
  });

  test('PUT with rates replaces the list; a rate whose sku stays keeps its id', async () => {
    const { tenant } = await tenantWithCategories();
    const made = await create(
      tenant,
      product('P-1', {
        rates: [
          { sku: 'keep', price: 1 },
          { sku: 'drop', price: 2, primary: true },
        ],
      }),
    );
    const [keep, drop] = made.rates;
    const res = await tenant.request('PUT', '/v1/products/P-1', {
      body: {
        rates: [
          { sku: 'new', price: 5, cost: 3 },
          { sku: 'keep', price: 9.5 },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.rates).toEqual([
      { id: expect.any(Number), sku: 'new', cost: 3, price: 5, primary: true },
      { id: keep.id, sku: 'keep', cost: 0, price: 9.5, primary: false },
    ]);
    expect(res.body.data.rates[0].id).not.toBe(drop.id);
    const stored = await stack.sql('select sku from catalog.product_rates where product_id = $1 order by position', [made.id]);
    expect(stored.rows.map((r) => r.sku)).toEqual(['new', 'keep']);
    // The dropped sku is free again.
    await create(tenant, product('P-2', { rates: [{ sku: 'drop', price: 1 }] }));
  });

  test('rate rules on PUT: 409 for another product sku, 422 for two primaries or empty list; nothing changes', async () => {
    const { tenant } = await tenantWithCategories();
    const made = await create(tenant, product('P-1', { rates: [{ sku: 'mine', price: 1 }] }));
    await create(tenant, product('P-2', { rates: [{ sku: 'theirs', price: 1 }] }));
    const taken = await tenant.request('PUT', '/v1/products/P-1', {
      body: {
        name: 'X',
        rates: [
          { sku: 'mine', price: 1 },
          { sku: 'theirs', price: 1 },
        ],
      },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error.details).toEqual([{ field: 'rates[1].sku', message: expect.any(String) }]);
    const twoPrimaries = await tenant.request('PUT', '/v1/products/P-1', {
      body: {
        product_category_ref: 'none',
        rates: [
          { sku: 'a', price: 1, primary: true },
          { sku: 'b', price: 1, primary: true },
        ],
      },
    });
    expect(twoPrimaries.status).toBe(422);
    expect(twoPrimaries.body.error.details.map((d: any) => d.field).sort()).toEqual(['product_category_ref', 'rates']);
    expect((await tenant.request('PUT', '/v1/products/P-1', { body: { rates: [] } })).status).toBe(422);
    expect((await tenant.request('PUT', '/v1/products/P-1', { body: { reference: 'P-9' } })).status).toBe(422);
    expect((await tenant.request('GET', '/v1/products/P-1')).body.data).toEqual(made);
  });
});

describe('races', () => {
  test('two creates with the same reference and sku at once: one 201, one 409', async () => {
    const { tenant } = await tenantWithCategories();
    const results = await Promise.all([0, 1, 2].map(() => tenant.request('POST', '/v1/products', { body: product('RACE') })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(refs(await tenant.request('GET', '/v1/products'))).toEqual(['RACE']);
  });
});

describe('delete', () => {
  test('DELETE removes the product and its rates; then 404', async () => {
    const { tenant } = await tenantWithCategories();
    const made = await create(tenant, product('P-1'));
    const res = await tenant.request('DELETE', '/v1/products/P-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true });
    expect((await tenant.request('GET', '/v1/products/P-1')).status).toBe(404);
    expect((await tenant.request('DELETE', '/v1/products/P-1')).status).toBe(404);
    expect((await stack.sql('select count(*) from catalog.product_rates where product_id = $1', [made.id])).rows[0].count).toBe(0);
  });
});

describe('batch', () => {
  test('creates 1..100 in order → 201', async () => {
    const { tenant } = await tenantWithCategories();
    const items = Array.from({ length: 100 }, (_, i) => product(`B-${i}`, { vat: i % 2 ? 21 : 4 }));
    const res = await tenant.request('POST', '/v1/products/batch', { body: { data: items } });
    expect(res.status).toBe(201);
    expect(refs(res)).toEqual(items.map((i) => i.reference));
    expect(new Set(res.body.data.map((p: any) => p.vat_id)).size).toBe(2);
    expect(res.body.data[5]).toEqual((await tenant.request('GET', '/v1/products/B-5')).body.data);
  });

  test('all or nothing: errors of every item as data[i].field, nothing written', async () => {
    const { tenant } = await tenantWithCategories();
    await create(tenant, product('EXISTING', { rates: [{ sku: 'USED', price: 1 }] }));
    const invalid = await tenant.request('POST', '/v1/products/batch', {
      body: { data: [product('OK-1'), product('BAD', { name: '' }), product('OK-2'), { ...product('X'), rates: [{ price: 1 }] }] },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.map((d: any) => d.field).sort()).toEqual(['data[1].name', 'data[3].rates[0].sku']);
    const semantic = await tenant.request('POST', '/v1/products/batch', {
      body: { data: [product('OK-1'), product('OK-1'), product('C', { product_category_ref: 'nope' })] },
    });
    expect(semantic.status).toBe(422);
    expect(semantic.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'data[1].rates[0].sku',
      'data[1].reference',
      'data[2].product_category_ref',
    ]);
    const conflict = await tenant.request('POST', '/v1/products/batch', {
      body: { data: [product('OK-1'), product('OK-2', { rates: [{ sku: 'USED', price: 1 }] }), product('EXISTING')] },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.details.map((d: any) => d.field).sort()).toEqual(['data[1].rates[0].sku', 'data[2].reference']);
    expect((await tenant.request('POST', '/v1/products/batch', { body: { data: [] } })).status).toBe(422);
    const tooMany = Array.from({ length: 101 }, (_, i) => product(`T-${i}`));
    expect((await tenant.request('POST', '/v1/products/batch', { body: { data: tooMany } })).status).toBe(422);
    expect(refs(await tenant.request('GET', '/v1/products'))).toEqual(['EXISTING']);
  });
});

describe('events', () => {
  test('product.created/updated/deleted with the resource as returned (as the events feed lists them), none for failed writes', async () => {
    const { tenant } = await tenantWithCategories();
    const made = await create(tenant, product('EV-1'));
    const updated = (await tenant.request('PUT', '/v1/products/EV-1', { body: { rates: [{ sku: 'EV-1-B', price: 3 }] } })).body.data;
    expect((await tenant.request('POST', '/v1/products', { body: product('EV-1') })).status).toBe(409);
    expect((await tenant.request('PUT', '/v1/products/EV-1', { body: { product_category_ref: 'nope' } })).status).toBe(422);
    await tenant.request('DELETE', '/v1/products/EV-1');
    const batch = (await tenant.request('POST', '/v1/products/batch', { body: { data: [product('EV-2'), product('EV-3')] } })).body.data;
    expect((await tenant.request('POST', '/v1/products', { body: product('EV-4', { product_category_ref: 'nope' }) })).status).toBe(422);
    const events = ofType(await settledFeed(tenant), 'product.');
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'product.created', data: made },
      { type: 'product.updated', data: updated },
      { type: 'product.deleted', data: { id: made.id, reference: 'EV-1' } },
      { type: 'product.created', data: batch[0] },
      { type: 'product.created', data: batch[1] },
    ]);
    for (const event of events) expect(eventPayloadErrors(event.type as EventType, event.data)).toEqual([]);
  });
});

describe('isolation', () => {
  test("another tenant's products are invisible and untouchable; its categories cannot be used", async () => {
    const [{ tenant }, { tenant: other }] = await Promise.all([tenantWithCategories(), tenantWithCategories()]);
    const mine = await create(tenant, product('P-1'));
    expect((await other.request('GET', '/v1/products/P-1')).status).toBe(404);
    expect((await other.request('PUT', '/v1/products/P-1', { body: { name: 'Hacked' } })).status).toBe(404);
    expect((await other.request('DELETE', '/v1/products/P-1')).status).toBe(404);
    expect((await other.request('GET', '/v1/products')).body.data).toEqual([]);
    expect((await other.request('GET', `/v1/products?product_category_id=${mine.product_category_id}`)).body.data).toEqual([]);
    const theirCategory = await other.request('POST', '/v1/product-categories', {
      body: { name: 'Only theirs', reference: 'only-theirs' },
    });
    expect(theirCategory.status).toBe(201);
    const useForeign = await tenant.request('POST', '/v1/products', { body: product('P-2', { product_category_ref: 'only-theirs' }) });
    expect(useForeign.status).toBe(422);
    expect((await tenant.request('GET', '/v1/products/P-1')).body.data).toEqual(mine);
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack } from '@crm/testing';
import { createOrder, createProduct, OWNER, orderBody, orderEvents, orderWorld, storedOrderCount } from './orders-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 180_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('create and read', () => {
  test('POST 201 with a generated reference, lines priced from the primary rate, one state entry', async () => {
    const { tenant, contactId, userId } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ comments: 'rush', extra_fields: { channel: 'web' }, products: [{ reference: 'WIDGET', quantity: 4 }] }),
    });
    expect(res.status).toBe(201);
    const order = res.body.data;
    expect(order).toEqual({
      id: expect.any(Number),
      reference: 'ORD-000001',
      enterprise_id: contactId,
      user_id: userId,
      opportunity_id: null,
      date_limit: '2026-12-31',
      state: 1,
      comments: 'rush',
      extra_fields: { channel: 'web' },
      total: 0.4,
      states: [{ id: expect.any(Number), state: 1, amount: 0.4, created_at: expect.stringMatching(ISO) }],
      products: [
        {
          id: expect.any(Number),
          reference: 'WIDGET',
          name: 'Widget',
          pivot: { cost: 1.5, price: 0.1, discount: 0, quantity: 4, comment: null, description: null, rate_sku: 'WIDGET-STD' },
        },
      ],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const read = await tenant.request('GET', '/v1/orders/ORD-000001');
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(order);
  });

  test('rate_sku selects the rate; given cost, price, discount, comment and description win', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, {
      products: [
        { reference: 'WIDGET', rate_sku: 'WIDGET-PRO' },
        { reference: 'GADGET', price: 10, cost: 4, discount: 25, quantity: 2, comment: 'gift', description: 'blue' },
      ],
    });
    expect(order.products.map((p: any) => p.pivot)).toEqual([
      { cost: 2, price: 0.2, discount: 0, quantity: 1, comment: null, description: null, rate_sku: 'WIDGET-PRO' },
      { cost: 4, price: 10, discount: 25, quantity: 2, comment: 'gift', description: 'blue', rate_sku: 'GADGET-1' },
    ]);
    expect(order.total).toBe(15.2); // 0.2 + 10 × 2 × 0.75
  });

  test('totals are exact decimals: 0.1 + 0.2 = 0.3, 1.005 rounds to 1.01, discounts round once', async () => {
    const { tenant } = await orderWorld(stack);
    const tenths = await createOrder(tenant, {
      products: [
        { reference: 'WIDGET', price: 0.1 },
        { reference: 'WIDGET', price: 0.2 },
      ],
    });
    expect(tenths.total).toBe(0.3);
    expect(tenths.states[0].amount).toBe(0.3);
    const halfCent = await createOrder(tenant, { products: [{ reference: 'WIDGET', price: 1.005 }] });
    expect(halfCent.total).toBe(1.01); // binary floats give 1.00
    const discounted = await createOrder(tenant, {
      products: [
        { reference: 'GADGET', quantity: 3, discount: 15 }, // 19.99 × 3 × 0.85 = 50.9745
        { reference: 'WIDGET', price: 0.7, quantity: 3, discount: 10 }, // 1.89
      ],
    });
    expect(discounted.total).toBe(52.86); // 52.8645 rounded once
    const { rows } = await stack.sql('select total::text from sales.orders where id = $1', [discounted.id]);
    expect(rows[0].total).toBe('52.86');
  });

  test('one catalog lookup per write, however many lines or orders it has', async () => {
    const { tenant } = await orderWorld(stack);
    const lookups = async () => {
      const metrics = (await stack.call('catalog', 'GET', '/metrics')).text;
      const lines = metrics.split('\n').filter((l) => l.startsWith('http_requests_total{') && l.includes('/internal/products/lookup'));
      return lines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    };
    const before = await lookups();
    const lines = [{ reference: 'WIDGET' }, { reference: 'GADGET' }, { reference: 'WIDGET', rate_sku: 'WIDGET-PRO' }];
    await createOrder(tenant, { products: lines });
    expect(await lookups()).toBe(before + 1);
    const batch = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody({ products: lines }), orderBody({ products: lines }), orderBody({ products: lines })] },
    });
    expect(batch.status).toBe(201);
    expect(await lookups()).toBe(before + 2);
  });

  test('an order without products has total 0; a percent-encoded reference works in paths', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { reference: 'PO 2026/7%' });
    expect(order.total).toBe(0);
    expect(order.products).toEqual([]);
    const read = await tenant.request('GET', `/v1/orders/${encodeURIComponent('PO 2026/7%')}`);
    expect(read.status).toBe(200);
    expect(read.body.data.id).toBe(order.id);
  });

  test('unknown reference → 404 for GET, PUT, PATCH and DELETE', async () => {
    const { tenant } = await orderWorld(stack);
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const res = await tenant.request(method, '/v1/orders/NOPE', method.startsWith('P') ? { body: { state: 2 } } : {});
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('not_found');
    }
  });
});

describe('validation', () => {
  test('every unresolvable field is named in one 422 and nothing is written', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({
        enterprise_identifier: 'Nobody Inc',
        user_email: 'ghost@acme.test',
        opportunity_id: 999999,
        products: [{ reference: 'WIDGET' }, { reference: 'MISSING' }, { reference: 'WIDGET', rate_sku: 'NO-SUCH-SKU' }],
      }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('validation_error');
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual(
      ['enterprise_identifier', 'opportunity_id', 'products[1].reference', 'products[2].rate_sku', 'user_email'].sort(),
    );
    for (const field of ['enterprise_identifier', 'user_email', 'products[1].reference']) expect(res.body.error.message).toContain(field);
    expect(await storedOrderCount(stack, tenant.tenantId)).toBe(0);
    expect(await orderEvents(tenant)).toEqual([]);
  });

  test('line values out of range name their index: products[2].quantity, products[1].discount', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({
        products: [{ reference: 'WIDGET' }, { reference: 'WIDGET', discount: 150 }, { reference: 'WIDGET', quantity: 0 }],
      }),
    });
    expect(res.status).toBe(422);
    const fields = res.body.error.details.map((d: any) => d.field);
    expect(fields).toContain('products[2].quantity');
    expect(fields).toContain('products[1].discount');
    const negative = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ products: [{ reference: 'WIDGET', price: -1, cost: -2 }] }),
    });
    expect(negative.body.error.details.map((d: any) => d.field).sort()).toEqual(['products[0].cost', 'products[0].price']);
  });

  test('schema errors and unresolvable references come together in one 422', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({
        enterprise_identifier: 'Nobody Inc',
        products: [
          { reference: 'WIDGET', rate_sku: 'NOPE' },
          { reference: 'MISSING', discount: 150 },
          { reference: 'WIDGET', quantity: 0 },
        ],
      }),
    });
    expect(res.status).toBe(422);
    // Schema failures first, then the rule failures of the well-formed parts (contract §3: one 422).
    expect(res.body.error.details.map((d: any) => d.field)).toEqual([
      'products[1].discount',
      'products[2].quantity',
      'enterprise_identifier',
      'products[0].rate_sku',
      'products[1].reference',
    ]);
    const batch = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody({ user_email: 'ghost@acme.test' }), orderBody({ state: 'open', products: [{ reference: 'GONE' }] })] },
    });
    expect(batch.status).toBe(422);
    expect(batch.body.error.details.map((d: any) => d.field)).toEqual([
      'data[1].state',
      'data[0].user_email',
      'data[1].products[0].reference',
    ]);
    const order = await createOrder(tenant);
    const update = await tenant.request('PUT', `/v1/orders/${order.reference}`, {
      body: { opportunity_id: 987654, products: [{ reference: 'GONE', quantity: -1 }] },
    });
    expect(update.body.error.details.map((d: any) => d.field)).toEqual(['products[0].quantity', 'opportunity_id', 'products[0].reference']);
    expect(await storedOrderCount(stack, tenant.tenantId)).toBe(1);
  });

  test('required fields, types and unknown fields', async () => {
    const { tenant } = await orderWorld(stack);
    const missing = await tenant.request('POST', '/v1/orders', { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.map((d: any) => d.field).sort()).toEqual(
      ['date_limit', 'enterprise_identifier', 'state', 'user_email'].sort(),
    );
    const wrong = await tenant.request('POST', '/v1/orders', { body: orderBody({ state: -1, date_limit: '31/12/2026', colour: 'red' }) });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details.map((d: any) => d.field).sort()).toEqual(['colour', 'date_limit', 'state']);
    expect(wrong.body.error.message).toContain('state must be at least 0');
    const stringly = await tenant.request('POST', '/v1/orders', { body: orderBody({ state: '3', opportunity_id: '1' }) });
    expect(stringly.body.error.details).toEqual([
      { field: 'opportunity_id', message: expect.any(String) },
      { field: 'state', message: 'must be an integer' },
    ]);
    const put = await tenant.request('PUT', '/v1/orders/x', { body: { enterprise_identifier: 'Acme Ltd' } });
    expect(put.status).toBe(422);
  });

  test('the contact identifier rule resolves id, name, e-mail and CIF; the user e-mail is case-insensitive', async () => {
    const { tenant, contactId } = await orderWorld(stack);
    for (const identifier of [String(contactId), 'Acme Ltd', 'B123']) {
      const order = await createOrder(tenant, { enterprise_identifier: identifier, user_email: OWNER.toUpperCase() });
      expect(order.enterprise_id).toBe(contactId);
    }
  });
});

describe('references', () => {
  test('a given reference is unique per tenant (409) but free in another tenant', async () => {
    const a = await orderWorld(stack);
    const b = await orderWorld(stack);
    await createOrder(a.tenant, { reference: 'PO-1' });
    const dup = await a.tenant.request('POST', '/v1/orders', { body: orderBody({ reference: 'PO-1' }) });
    expect(dup.status).toBe(409);
    expect(dup.body.error.type).toBe('conflict');
    await createOrder(b.tenant, { reference: 'PO-1' });
    expect(await storedOrderCount(stack, a.tenant.tenantId)).toBe(1);
  });

  test('a given ORD-style reference moves the sequence past it; deleted numbers are never reissued', async () => {
    const { tenant } = await orderWorld(stack);
    expect((await createOrder(tenant)).reference).toBe('ORD-000001');
    expect((await createOrder(tenant, { reference: 'ORD-000005' })).reference).toBe('ORD-000005');
    expect((await createOrder(tenant, { reference: 'ORD-000003' })).reference).toBe('ORD-000003');
    const sixth = await createOrder(tenant);
    expect(sixth.reference).toBe('ORD-000006');
    expect((await tenant.request('DELETE', '/v1/orders/ORD-000006')).status).toBe(200);
    expect((await createOrder(tenant)).reference).toBe('ORD-000007');
    const other = await orderWorld(stack);
    expect((await createOrder(other.tenant)).reference).toBe('ORD-000001');
  });

  test('50 parallel creates get 50 distinct consecutive references', async () => {
    const { tenant } = await orderWorld(stack);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => tenant.request('POST', '/v1/orders', { body: orderBody({ products: [{ reference: 'WIDGET' }] }) })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
    const references = results.map((r) => r.body.data.reference).sort();
    expect(new Set(references).size).toBe(50);
    expect(references).toEqual(Array.from({ length: 50 }, (_, i) => `ORD-${String(i + 1).padStart(6, '0')}`));
  });
});

describe('snapshot', () => {
  test('renaming, repricing or deleting the product later leaves the order unchanged', async () => {
    const { tenant } = await orderWorld(stack);
    await createProduct(tenant, 'TEMP', 'Temporary', [{ sku: 'TEMP-1', cost: 1, price: 5 }]);
    const order = await createOrder(tenant, { products: [{ reference: 'TEMP', quantity: 2 }] });
    const renamed = await tenant.request('PUT', '/v1/products/TEMP', {
      body: { name: 'Renamed', rates: [{ sku: 'TEMP-1', cost: 9, price: 99 }] },
    });
    expect(renamed.status).toBe(200);
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
    expect((await tenant.request('DELETE', '/v1/products/TEMP')).status).toBe(200);
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
  });

  test('deleting the contact keeps its orders readable with their enterprise_id', async () => {
    const { tenant, contactId } = await orderWorld(stack);
    const order = await createOrder(tenant);
    expect((await tenant.request('DELETE', `/v1/contacts/${contactId}`)).status).toBe(200);
    const read = await tenant.request('GET', `/v1/orders/${order.reference}`);
    expect(read.status).toBe(200);
    expect(read.body.data.enterprise_id).toBe(contactId);
    const listed = await tenant.request('GET', `/v1/orders?enterprise_id=${contactId}`);
    expect(listed.body.data.map((o: any) => o.id)).toEqual([order.id]);
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack } from '@crm/testing';
import { createOrder, orderBody, orderEvents, orderWorld, storedOrderCount } from './orders-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 180_000);

describe('update', () => {
  test('a state change appends one entry with the current total; a PUT without one appends none', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { state: 0, products: [{ reference: 'GADGET' }] });
    const path = `/v1/orders/${order.reference}`;

    const sameState = await tenant.request('PUT', path, { body: { state: 0, comments: 'checked' } });
    expect(sameState.status).toBe(200);
    expect(sameState.body.data.states).toEqual(order.states);
    expect(sameState.body.data.comments).toBe('checked');

    const noState = await tenant.request('PUT', path, { body: { products: [{ reference: 'GADGET', quantity: 2 }] } });
    expect(noState.body.data.total).toBe(39.98);
    expect(noState.body.data.states).toEqual(order.states);

    const changed = await tenant.request('PATCH', path, { body: { state: 3 } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.state).toBe(3);
    expect(changed.body.data.states).toEqual([
      order.states[0],
      { id: expect.any(Number), state: 3, amount: 39.98, created_at: expect.any(String) },
    ]);
    expect(changed.body.data.states[1].id).toBeGreaterThan(order.states[0].id);
    const read = await tenant.request('GET', path);
    expect(read.body.data).toEqual(changed.body.data);
  });

  test('state change and new lines in one PUT: the entry carries the new total', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { state: 1, products: [{ reference: 'WIDGET' }] });
    const res = await tenant.request('PUT', `/v1/orders/${order.reference}`, {
      body: { state: 2, products: [{ reference: 'WIDGET', price: 0.1, quantity: 3 }] },
    });
    expect(res.body.data.states.map((s: any) => [s.state, s.amount])).toEqual([
      [1, 0.1],
      [2, 0.3],
    ]);
  });

  test('PUT with products replaces all lines; omitted fields are kept; null clears nullable ones', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, {
      comments: 'first',
      extra_fields: { a: 1 },
      products: [{ reference: 'WIDGET' }, { reference: 'GADGET' }],
    });
    const res = await tenant.request('PUT', `/v1/orders/${order.reference}`, {
      body: { comments: null, extra_fields: null, date_limit: '2027-01-15', products: [{ reference: 'GADGET', comment: 'only' }] },
    });
    expect(res.status).toBe(200);
    const updated = res.body.data;
    expect(updated.products).toHaveLength(1);
    expect(updated.products[0].reference).toBe('GADGET');
    expect(updated.products[0].pivot.comment).toBe('only');
    expect(updated.total).toBe(19.99);
    expect(updated).toMatchObject({ comments: null, extra_fields: null, date_limit: '2027-01-15', state: order.state });
    expect(updated.enterprise_id).toBe(order.enterprise_id);
    expect(new Date(updated.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(order.updated_at).getTime());
    const { rows } = await stack.sql('select count(*)::int as n from sales.order_lines where order_id = $1', [order.id]);
    expect(rows[0].n).toBe(1);

    const cleared = await tenant.request('PUT', `/v1/orders/${order.reference}`, { body: { products: [] } });
    expect(cleared.body.data.products).toEqual([]);
    expect(cleared.body.data.total).toBe(0);
  });

  test('update validation: unknown opportunity, unknown product and sku, all in one 422; order unchanged', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { products: [{ reference: 'WIDGET' }] });
    const res = await tenant.request('PUT', `/v1/orders/${order.reference}`, {
      body: { opportunity_id: 424242, products: [{ reference: 'NOPE' }, { reference: 'GADGET', rate_sku: 'WIDGET-PRO' }] },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'opportunity_id',
      'products[0].reference',
      'products[1].rate_sku',
    ]);
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
  });
});

describe('opportunities', () => {
  test('opportunity_id must be one of the tenant’s opportunities; the list filters by it', async () => {
    const { tenant } = await orderWorld(stack);
    const other = await orderWorld(stack);
    const opp = await tenant.request('POST', '/v1/opportunities', { body: { name: 'Big deal', enterprise_identifier: 'Acme Ltd' } });
    expect(opp.status).toBe(201);
    const foreign = await other.tenant.request('POST', '/v1/opportunities', {
      body: { name: 'Theirs', enterprise_identifier: 'Acme Ltd' },
    });
    const withOpp = await createOrder(tenant, { opportunity_id: opp.body.data.id });
    expect(withOpp.opportunity_id).toBe(opp.body.data.id);
    await createOrder(tenant);
    const rejected = await tenant.request('POST', '/v1/orders', { body: orderBody({ opportunity_id: foreign.body.data.id }) });
    expect(rejected.status).toBe(422);
    expect(rejected.body.error.details).toEqual([{ field: 'opportunity_id', message: expect.any(String) }]);
    const listed = await tenant.request('GET', `/v1/orders?opportunity_id=${opp.body.data.id}`);
    expect(listed.body.data.map((o: any) => o.id)).toEqual([withOpp.id]);
  });
});

describe('list', () => {
  test('filters enterprise_id, state, updated_since; sort; pagination', async () => {
    const { tenant, contactId } = await orderWorld(stack);
    const second = await tenant.request('POST', '/v1/contacts', { body: { name: 'Beta SA', type: 'client' } });
    const a = await createOrder(tenant, { state: 1 });
    const b = await createOrder(tenant, { state: 2, enterprise_identifier: 'Beta SA' });
    const c = await createOrder(tenant, { state: 2 });
    const ids = async (query: string) => (await tenant.request('GET', `/v1/orders${query}`)).body.data.map((o: any) => o.id);

    expect(await ids('')).toEqual([a.id, b.id, c.id]);
    expect(await ids(`?enterprise_id=${contactId}`)).toEqual([a.id, c.id]);
    expect(await ids(`?enterprise_id=${second.body.data.id}`)).toEqual([b.id]);
    expect(await ids('?state=2')).toEqual([b.id, c.id]);
    expect(await ids('?sort=-id')).toEqual([c.id, b.id, a.id]);
    expect(await ids('?sort=-reference&state=2&unknown=1')).toEqual([c.id, b.id]);

    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await tenant.request('PUT', `/v1/orders/${a.reference}`, { body: { comments: 'touched' } });
    expect(await ids(`?updated_since=${encodeURIComponent(since)}`)).toEqual([a.id]);

    const page = await tenant.request('GET', '/v1/orders?per_page=2&page=2');
    expect(page.body.data.map((o: any) => o.id)).toEqual([c.id]);
    expect(page.body.data[0].states).toHaveLength(1);
    expect(page.body.pagination).toEqual({ total: 3, per_page: 2, current_page: 2, last_page: 2, has_more: false, next_cursor: null });

    const bad = await tenant.request('GET', '/v1/orders?sort=colour&per_page=0');
    expect(bad.status).toBe(422);
  });
});

describe('batch', () => {
  test('creates 1..100 orders in request order (201)', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody({ products: [{ reference: 'WIDGET' }] }), orderBody({ reference: 'B-2', state: 4 }), orderBody()] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((o: any) => o.reference)).toEqual(['ORD-000001', 'B-2', 'ORD-000002']);
    expect(res.body.data[0].products[0].reference).toBe('WIDGET');
    expect(res.body.data[1].states[0].state).toBe(4);
  });

  test('all or nothing: failing items are named data[i].field and nothing is written', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders/batch', {
      body: {
        data: [
          orderBody(),
          orderBody({ enterprise_identifier: 'Nobody', products: [{ reference: 'WIDGET' }, { reference: 'GONE' }] }),
          orderBody({ user_email: 'ghost@acme.test' }),
        ],
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field)).toEqual([
      'data[1].enterprise_identifier',
      'data[1].products[1].reference',
      'data[2].user_email',
    ]);
    const schema = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody(), orderBody({ products: [{ reference: 'WIDGET', quantity: -1 }] })] },
    });
    expect(schema.body.error.details.map((d: any) => d.field)).toEqual(['data[1].products[0].quantity']);
    const duplicate = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody({ reference: 'X' }), orderBody({ reference: 'X' })] },
    });
    expect(duplicate.status).toBe(409);
    expect(await storedOrderCount(stack, tenant.tenantId)).toBe(0);
    expect(await orderEvents(tenant)).toEqual([]);
    expect((await createOrder(tenant)).reference).toBe('ORD-000001');
    expect((await tenant.request('POST', '/v1/orders/batch', { body: { data: [] } })).status).toBe(422);
    const tooMany = await tenant.request('POST', '/v1/orders/batch', { body: { data: Array.from({ length: 101 }, () => orderBody()) } });
    expect(tooMany.status).toBe(422);
  });
});

describe('events', () => {
  test('created, updated, state_changed (with previous_state) and deleted are published, in that order', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { state: 1, products: [{ reference: 'WIDGET' }] });
    const edited = (await tenant.request('PUT', `/v1/orders/${order.reference}`, { body: { comments: 'x' } })).body.data;
    const moved = (await tenant.request('PUT', `/v1/orders/${order.reference}`, { body: { state: 5 } })).body.data;
    expect((await tenant.request('DELETE', `/v1/orders/${order.reference}`)).body).toEqual({ deleted: true });

    const events = await orderEvents(tenant);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.updated', 'order.updated', 'order.state_changed', 'order.deleted']);
    expect(events[0]?.data).toEqual(order);
    expect(events[1]?.data).toEqual(edited);
    expect(events[2]?.data).toEqual(moved);
    expect(events[3]?.data).toEqual({ ...moved, previous_state: 1 });
    expect(events[4]?.data).toEqual({ id: order.id, reference: order.reference });
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).status).toBe(404);
    const { rows } = await stack.sql('select count(*)::int as n from sales.order_states where order_id = $1', [order.id]);
    expect(rows[0].n).toBe(0);
  });
});

describe('isolation', () => {
  test("another tenant's orders, contacts and products are invisible", async () => {
    const a = await orderWorld(stack);
    const b = await orderWorld(stack);
    const order = await createOrder(a.tenant, { reference: 'SECRET-1' });
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const res = await b.tenant.request(method, '/v1/orders/SECRET-1', method.startsWith('P') ? { body: { state: 9 } } : {});
      expect(res.status).toBe(404);
    }
    expect((await b.tenant.request('GET', '/v1/orders')).body.data).toEqual([]);
    expect((await b.tenant.request('GET', `/v1/orders?enterprise_id=${a.contactId}`)).body.data).toEqual([]);
    await a.tenant.request('POST', '/v1/products', {
      body: { reference: 'ONLY-A', name: 'Only A', vat: 21, product_category_ref: 'tools', rates: [{ sku: 'ONLY-A-1', price: 1 }] },
    });
    const res = await b.tenant.request('POST', '/v1/orders', {
      body: orderBody({ enterprise_identifier: String(a.contactId), products: [{ reference: 'ONLY-A' }] }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field)).toEqual(['enterprise_identifier', 'products[0].reference']);
    expect((await a.tenant.request('GET', '/v1/orders/SECRET-1')).body.data).toEqual(order);
  });
});

// Contract §19 on the order routes: every class of malformed input gets a 4xx naming the field,
// and a refused write leaves nothing behind (no order, no event, no reference number).
import { beforeAll, describe, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { outboxMigration } from '@crm/events';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { sql } from 'kysely';
import { m0010Orders } from '../services/sales/src/db/migrations/0010_orders.ts';
import { m0021OrdersInputBounds } from '../services/sales/src/db/migrations/0021_orders_input_bounds.ts';
import { createOrder, orderBody, orderEvents, orderWorld, storedOrderCount } from './orders-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 180_000);

const MAX = 999_999_999_999.99;
const LINE_RULE = 'the line total (price × quantity × (1 − discount/100)) must be at most 999999999999.99';
const ORDER_RULE = 'the order total (Σ price × quantity × (1 − discount/100)) must be at most 999999999999.99';

/** The details of a 422 validation_error (fails the test on any other answer). */
function detailsOf(res: { status: number; body: any; text: string }) {
  expect(res.status, res.text).toBe(422);
  expect(res.body.error.type).toBe('validation_error');
  return res.body.error.details as { field: string; message: string }[];
}

/** Nothing of the tenant's orders was written: no row, no event, and the next generated reference is the first. */
async function expectNothingWritten(tenant: TestTenant) {
  expect(await storedOrderCount(stack, tenant.tenantId)).toBe(0);
  expect(await orderEvents(tenant)).toEqual([]);
  expect((await createOrder(tenant)).reference).toBe('ORD-000001');
}

describe('computed totals (the poisoned order of issue 12)', () => {
  test('a line total above 999999999999.99 → 422 naming the line; no row, event or reference number', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ products: [{ reference: 'WIDGET' }, { reference: 'GADGET', price: MAX, quantity: 2 }] }),
    });
    expect(detailsOf(res)).toEqual([{ field: 'products[1].quantity', message: LINE_RULE }]);
    const batch = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody(), orderBody({ products: [{ reference: 'WIDGET', price: 500_000_000_000, quantity: 1_000_000_000 }] })] },
    });
    expect(detailsOf(batch)).toEqual([{ field: 'data[1].products[0].quantity', message: LINE_RULE }]);
    await expectNothingWritten(tenant);
  });

  test('an order total above the bound names the line that takes it past; exactly the bound is stored and listed', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({
        products: [
          { reference: 'WIDGET', price: 600_000_000_000 },
          { reference: 'WIDGET', price: 1 },
          { reference: 'GADGET', price: 400_000_000_000 },
          { reference: 'WIDGET', price: 9 },
        ],
      }),
    });
    expect(detailsOf(res)).toEqual([{ field: 'products[2].price', message: ORDER_RULE }]);
    // Rounding as stored: 0.005 past the bound rounds up past it; 0.004 rounds back to it.
    const halfCent = await tenant.request('POST', '/v1/orders', {
      body: orderBody({
        products: [
          { reference: 'WIDGET', price: 999_999_999_999.99 },
          { reference: 'WIDGET', price: 0.005 },
        ],
      }),
    });
    expect(detailsOf(halfCent)).toEqual([{ field: 'products[1].price', message: ORDER_RULE }]);
    await expectNothingWritten(tenant);

    const atBound = await createOrder(tenant, {
      products: [
        { reference: 'WIDGET', price: 333_333_333_333.33, quantity: 3 },
        { reference: 'WIDGET', price: 0.004 },
      ],
    });
    expect(atBound.total).toBe(MAX);
    expect(atBound.states[0].amount).toBe(MAX);
    const list = await tenant.request('GET', '/v1/orders');
    expect(list.status).toBe(200);
    expect(list.body.data.map((o: any) => o.total)).toEqual([0, MAX]);
  });

  test('a PUT whose lines overflow → 422, the order unchanged, no event; the list keeps answering 200', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { products: [{ reference: 'WIDGET' }] });
    const events = await orderEvents(tenant);
    const res = await tenant.request('PUT', `/v1/orders/${order.reference}`, {
      body: { state: 9, products: [{ reference: 'GADGET', price: MAX, quantity: 1_000_000_000 }] },
    });
    expect(detailsOf(res)).toEqual([{ field: 'products[0].quantity', message: LINE_RULE }]);
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
    expect(await orderEvents(tenant)).toEqual(events);
    const list = await tenant.request('GET', '/v1/orders?per_page=100');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([order]);
  });

  test('the issue-12 body (1e200 × 1e200) is refused by the line bounds, together with the rule failures', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ user_email: 'ghost@acme.test', products: [{ reference: 'WIDGET', price: 1e200, quantity: 1e200 }] }),
    });
    expect(detailsOf(res)).toEqual([
      { field: 'products[0].price', message: 'must be at most 999999999999.99' },
      { field: 'products[0].quantity', message: 'must be at most 1000000000' },
      { field: 'user_email', message: 'is not a user of the account' },
    ]);
    await expectNothingWritten(tenant);
  });
});

describe('numbers and integers', () => {
  test('line bounds: finite, price/cost 0..999999999999.99, quantity >0..1000000000, discount 0..100', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({
        products: [
          { reference: 'WIDGET', price: 1_000_000_000_000, cost: -0.01 },
          { reference: 'WIDGET', quantity: 1_000_000_001, discount: 100.5 },
          { reference: 'WIDGET', quantity: 0 },
        ],
      }),
    });
    expect(detailsOf(res)).toEqual([
      { field: 'products[0].cost', message: 'must be at least 0' },
      { field: 'products[0].price', message: 'must be at most 999999999999.99' },
      { field: 'products[1].discount', message: 'must be at most 100' },
      { field: 'products[1].quantity', message: 'must be at most 1000000000' },
      { field: 'products[2].quantity', message: 'must be greater than 0' },
    ]);
    const infinite = await tenant.request('POST', '/v1/orders', {
      raw: JSON.stringify(orderBody({ products: [{ reference: 'WIDGET', price: 1 }] })).replace('"price":1', '"price":1e400'),
      headers: { 'content-type': 'application/json' },
    });
    expect(detailsOf(infinite)).toEqual([{ field: 'products[0].price', message: 'must be a finite number' }]);
    await expectNothingWritten(tenant);
  });

  test('state and opportunity_id past 2147483647 → 422 stating the maximum (create, batch, update)', async () => {
    const { tenant } = await orderWorld(stack);
    const big = 2_147_483_648;
    const create = await tenant.request('POST', '/v1/orders', { body: orderBody({ state: big, opportunity_id: 99_999_999_999 }) });
    expect(detailsOf(create)).toEqual([
      { field: 'opportunity_id', message: 'must be at most 2147483647' },
      { field: 'state', message: 'must be at most 2147483647' },
    ]);
    const batch = await tenant.request('POST', '/v1/orders/batch', { body: { data: [orderBody({ state: -1, opportunity_id: 0 })] } });
    expect(detailsOf(batch)).toEqual([
      { field: 'data[0].opportunity_id', message: 'must be at least 1' },
      { field: 'data[0].state', message: 'must be at least 0' },
    ]);
    await expectNothingWritten(tenant);
    const order = await createOrder(tenant, { state: 2_147_483_647 });
    expect(order.state).toBe(2_147_483_647);
    const update = await tenant.request('PATCH', `/v1/orders/${order.reference}`, { body: { state: big, opportunity_id: big } });
    expect(detailsOf(update)).toEqual([
      { field: 'opportunity_id', message: 'must be at most 2147483647' },
      { field: 'state', message: 'must be at most 2147483647' },
    ]);
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
  });
});

describe('dates', () => {
  test('date_limit must exist in the calendar (0001-01-01..9999-12-31); updated_since must be RFC 3339', async () => {
    const { tenant } = await orderWorld(stack);
    const message = 'must be a calendar date YYYY-MM-DD between 0001-01-01 and 9999-12-31';
    for (const date_limit of ['2026-02-30', '2027-02-29', '0000-12-31', '10000-01-01', '2026-13-01', '2026-1-1']) {
      const res = await tenant.request('POST', '/v1/orders', { body: orderBody({ date_limit }) });
      expect(detailsOf(res), date_limit).toEqual([{ field: 'date_limit', message }]);
    }
    await expectNothingWritten(tenant);
    const leap = await createOrder(tenant, { date_limit: '2028-02-29' });
    const first = await createOrder(tenant, { date_limit: '0001-01-01' });
    expect(first.date_limit).toBe('0001-01-01');
    const update = await tenant.request('PUT', `/v1/orders/${leap.reference}`, { body: { date_limit: '2026-02-29' } });
    expect(detailsOf(update)).toEqual([{ field: 'date_limit', message }]);
    const last = await tenant.request('PUT', `/v1/orders/${leap.reference}`, { body: { date_limit: '9999-12-31' } });
    expect(last.body.data.date_limit).toBe('9999-12-31');

    for (const since of ['2026-02-30T00:00:00Z', '2026-01-01T00:00:00', '2026-01-01', '2026-01-01T24:00:00Z']) {
      const res = await tenant.request('GET', `/v1/orders?updated_since=${encodeURIComponent(since)}`);
      expect(detailsOf(res), since).toEqual([
        { field: 'updated_since', message: 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset' },
      ]);
    }
    const offset = await tenant.request('GET', `/v1/orders?updated_since=${encodeURIComponent('2000-01-01T00:00:00+02:00')}`);
    expect(offset.body.data).toHaveLength(3);
  });
});

describe('unknown fields and content types', () => {
  test('unknown fields are refused at every depth (order, line, batch item)', async () => {
    const { tenant } = await orderWorld(stack);
    const res = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ colour: 'red', products: [{ reference: 'WIDGET', discount_pct: 5 }] }),
    });
    expect(detailsOf(res)).toEqual([
      { field: 'colour', message: 'is not a known field' },
      { field: 'products[0].discount_pct', message: 'is not a known field' },
    ]);
    const batch = await tenant.request('POST', '/v1/orders/batch', {
      body: { data: [orderBody({ products: [{ reference: 'WIDGET', qty: 2 }] })], extra: 1 },
    });
    expect(detailsOf(batch)).toEqual([
      { field: 'extra', message: 'is not a known field' },
      { field: 'data[0].products[0].qty', message: 'is not a known field' },
    ]);
    await expectNothingWritten(tenant);
    const order = (await tenant.request('GET', '/v1/orders/ORD-000001')).body.data;
    const update = await tenant.request('PUT', '/v1/orders/ORD-000001', { body: { products: [{ reference: 'WIDGET', note: 'x' }] } });
    expect(detailsOf(update)).toEqual([{ field: 'products[0].note', message: 'is not a known field' }]);
    expect((await tenant.request('GET', '/v1/orders/ORD-000001')).body.data).toEqual(order);
  });

  test('a form or multipart body on a JSON route → 400, nothing written', async () => {
    const { tenant } = await orderWorld(stack);
    const form = new FormData();
    for (const [key, value] of Object.entries(orderBody())) form.set(key, String(value));
    const multipart = await tenant.request('POST', '/v1/orders', { raw: form });
    expect(multipart.status).toBe(400);
    expect(multipart.body.error.type).toBe('bad_request');
    const urlencoded = await tenant.request('POST', '/v1/orders/batch', {
      raw: 'data=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(urlencoded.status).toBe(400);
    await expectNothingWritten(tenant);
  });
});

describe('text: NUL anywhere', () => {
  test('in a body string, a path reference or any query value → 422 naming it; nothing written', async () => {
    const { tenant } = await orderWorld(stack);
    const body = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ comments: 'a\u0000b', products: [{ reference: 'WID\u0000GET' }] }),
    });
    expect(detailsOf(body).map((d) => d.field)).toEqual(['comments', 'products[0].reference']);
    const batch = await tenant.request('POST', '/v1/orders/batch', { body: { data: [orderBody({ reference: 'PO\u00001' })] } });
    expect(detailsOf(batch).map((d) => d.field)).toEqual(['data[0].reference']);
    await expectNothingWritten(tenant);
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const res = await tenant.request(method, '/v1/orders/ORD%00-000001', method.startsWith('P') ? { body: { state: 2 } } : {});
      expect(
        detailsOf(res).map((d) => d.field),
        method,
      ).toEqual(['reference']);
    }
    const query = await tenant.request('GET', '/v1/orders?sort=id&utm=%00&state=1%00');
    expect(detailsOf(query).map((d) => d.field)).toEqual(['utm', 'state']);
    expect(await orderEvents(tenant)).toHaveLength(1);
  });
});

describe('list query', () => {
  test('per_page, page, sort and every filter are checked with their bounds in one 422', async () => {
    const { tenant } = await orderWorld(stack);
    await createOrder(tenant);
    const res = await tenant.request(
      'GET',
      '/v1/orders?per_page=101&page=2147483648&sort=colour&enterprise_id=0&state=2147483648&opportunity_id=99999999999',
    );
    expect(detailsOf(res)).toEqual([
      { field: 'per_page', message: 'must be at most 100' },
      { field: 'page', message: 'must be at most 2147483647' },
      { field: 'enterprise_id', message: 'must be at least 1' },
      { field: 'state', message: 'must be at most 2147483647' },
      { field: 'opportunity_id', message: 'must be at most 2147483647' },
      { field: 'sort', message: 'must be one of id, reference, date_limit, state, created_at, updated_at (prefix - for descending)' },
    ]);
    const words = await tenant.request('GET', '/v1/orders?page=two&per_page=0&state=-1');
    expect(detailsOf(words)).toEqual([
      { field: 'per_page', message: 'must be at least 1' },
      { field: 'page', message: 'must be an integer' },
      { field: 'state', message: 'must be at least 0' },
    ]);
    const last = await tenant.request('GET', '/v1/orders?page=2147483647&state=2147483647&enterprise_id=2147483647');
    expect(last.status).toBe(200);
    expect(last.body.data).toEqual([]);
    expect(last.body.pagination).toEqual({
      total: 0,
      per_page: 15,
      current_page: 2147483647,
      last_page: 1,
      has_more: false,
      next_cursor: null,
    });
  });
});

describe('the database holds the same bounds', () => {
  test('direct SQL writes outside the bounds are refused by CHECK constraints', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { products: [{ reference: 'WIDGET' }] });
    const refused = async (statement: string, params: unknown[] = []) => {
      const error = await stack.sql(statement, params).then(
        () => undefined,
        (e: { code?: string; constraint?: string }) => e,
      );
      expect(error?.code, statement).toBe('23514');
      return error?.constraint;
    };
    const line = `insert into sales.order_lines (order_id, position, product_id, reference, name, cost, price, discount, quantity)
      values ($1, 1, 1, 'X', 'X', $2, $3, $4, $5)`;
    expect(await refused(line, [order.id, 0, 1_000_000_000_000, 0, 1])).toBe('order_lines_bounds');
    expect(await refused(line, [order.id, -1, 1, 0, 1])).toBe('order_lines_bounds');
    expect(await refused(line, [order.id, 0, 1, 101, 1])).toBe('order_lines_bounds');
    expect(await refused(line, [order.id, 0, 1, 0, 0])).toBe('order_lines_bounds');
    expect(await refused(line, [order.id, 0, 1, 0, 1_000_000_001])).toBe('order_lines_bounds');
    expect(await refused(line, [order.id, 0, 'NaN', 0, 1])).toBe('order_lines_bounds');
    expect(await refused(line, [order.id, 0, MAX, 0, 2])).toBe('order_lines_bounds');
    const id = [order.id];
    expect(await refused('update sales.orders set total = 1e13 where id = $1', id)).toBe('orders_total_range');
    expect(await refused('update sales.orders set state = -1 where id = $1', id)).toBe('orders_state_range');
    expect(await refused('update sales.orders set opportunity_id = 0 where id = $1', id)).toBe('orders_opportunity_id_range');
    expect(await refused("update sales.orders set date_limit = '10000-01-01' where id = $1", id)).toBe('orders_date_limit_range');
    expect(await refused("update sales.orders set extra_fields = '[1]' where id = $1", id)).toBe('orders_extra_fields_object');
    expect(await refused('update sales.order_states set amount = 1e300 where order_id = $1', id)).toBe('order_states_amount_range');
    expect(await refused('update sales.order_states set state = -5 where order_id = $1', id)).toBe('order_states_state_range');
    // Every refused statement changed nothing.
    expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
  });

  test('migration 0021 deletes orders holding money out of bounds (with order.deleted events) and clamps the rest', async () => {
    // The orders tables as 0010 left them, in a scratch schema of the run's database, holding
    // what the old code stored; then 0021 runs over them.
    const schema = `orders_repair_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const { db } = createDb<any>({ url: stack.databaseUrl, schema, max: 1 });
    try {
      await migrate(db, schema, [outboxMigration, m0010Orders]);
      const order = (reference: string, total: string, extra: Record<string, unknown> = {}) =>
        db
          .insertInto('orders')
          .values({ tenant_id: 't1', reference, enterprise_id: 1, user_id: 1, date_limit: '2026-12-31', state: 1, total, ...extra })
          .returning('id')
          .executeTakeFirstOrThrow()
          .then((r: { id: number }) => r.id);
      const line = (order_id: number, price: string, quantity: string) =>
        db
          .insertInto('order_lines')
          .values({ order_id, position: 0, product_id: 1, reference: 'W', name: 'W', cost: '0', price, discount: '0', quantity })
          .execute();
      const state = (order_id: number, amount: string, value = 1) =>
        db.insertInto('order_states').values({ order_id, state: value, amount }).execute();

      const poisoned = await order('ORD-000001', '1e600'); // the issue-12 order: 1e300 × 1e300
      await line(poisoned, '1e300', '1e300');
      await state(poisoned, '1e600');
      const huge = await order('ORD-000002', '10000000000000'); // readable, but past today's bounds
      await line(huge, '10000000000000', '1');
      await state(huge, '10000000000000');
      const fixedLater = await order('ORD-000003', '5'); // a PUT replaced the lines; the history kept the amount
      await line(fixedLater, '5', '1');
      await state(fixedLater, '1e600');
      const clamped = await order('ORD-000004', '2', {
        state: -3,
        opportunity_id: 0,
        date_limit: '10000-01-01',
        extra_fields: JSON.stringify(['not', 'an', 'object']),
      });
      await line(clamped, '2', '1');
      await state(clamped, '2', -3);
      const fine = await order('ORD-000005', '999999999999.99', { opportunity_id: 7, extra_fields: JSON.stringify({ a: 1 }) });
      await line(fine, '333333333333.33', '3');
      await state(fine, '999999999999.99');

      expect(await migrate(db, schema, [outboxMigration, m0010Orders, m0021OrdersInputBounds])).toEqual(['0021_orders_input_bounds']);

      const orders = await db.selectFrom('orders').selectAll().orderBy('id').execute();
      expect(orders.map((o: any) => o.reference)).toEqual(['ORD-000004', 'ORD-000005']);
      expect(orders[0]).toMatchObject({ state: 0, opportunity_id: null, date_limit: '9999-12-31', extra_fields: null, total: '2' });
      expect(orders[1]).toMatchObject({ state: 1, opportunity_id: 7, date_limit: '2026-12-31', extra_fields: { a: 1 } });
      const states = await db.selectFrom('order_states').select(['order_id', 'state', 'amount']).orderBy('id').execute();
      expect(states).toEqual([
        { order_id: clamped, state: 0, amount: '2' },
        { order_id: fine, state: 1, amount: '999999999999.99' },
      ]);
      expect(await db.selectFrom('order_lines').select('order_id').orderBy('order_id').execute()).toEqual([
        { order_id: clamped },
        { order_id: fine },
      ]);
      // A migration runs before any relay of this scratch schema, so its events are read where it
      // writes them: no consumer could see them (the service's own relay publishes them after boot).
      const events = await db.selectFrom('outbox').select(['id', 'tenant_id', 'type', 'payload']).orderBy('seq').execute();
      expect(events).toEqual(
        [poisoned, huge, fixedLater].map((id, i) => ({
          id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
          tenant_id: 't1',
          type: 'order.deleted',
          payload: { id, reference: `ORD-00000${i + 1}` },
        })),
      );
      const error = await line(fine, '1', '0').catch((e) => e);
      expect(error.constraint).toBe('order_lines_bounds');
    } finally {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      await db.destroy();
    }
  });
});

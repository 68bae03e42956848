import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, startStack } from '@crm/testing';
import { createOrder, orderBody, orderEvents, orderWorld, storedOrderCount } from './orders-fixtures.ts';

// Stops the catalog process, so this file runs a stack of its own.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('catalog unavailable during an order write → 503 service_unavailable and nothing is written', async () => {
  const { tenant } = await orderWorld(stack);
  const order = await createOrder(tenant, { products: [{ reference: 'WIDGET' }] });
  const before = await orderEvents(tenant);

  await stack.stopProcess('catalog');

  const created = await tenant.request('POST', '/v1/orders', { body: orderBody({ products: [{ reference: 'WIDGET' }] }) });
  expect(created.status).toBe(503);
  expect(created.body.error.type).toBe('service_unavailable');

  const batch = await tenant.request('POST', '/v1/orders/batch', { body: { data: [orderBody({ products: [{ reference: 'GADGET' }] })] } });
  expect(batch.status).toBe(503);

  const updated = await tenant.request('PUT', `/v1/orders/${order.reference}`, { body: { state: 7, products: [{ reference: 'GADGET' }] } });
  expect(updated.status).toBe(503);
  expect(updated.body.error.type).toBe('service_unavailable');

  expect(await storedOrderCount(stack, tenant.tenantId)).toBe(1);
  expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
  expect(await orderEvents(tenant)).toEqual(before);

  // Writes that need no catalog lookup still work while it is down.
  const withoutLines = await tenant.request('PUT', `/v1/orders/${order.reference}`, { body: { comments: 'catalog down' } });
  expect(withoutLines.status).toBe(200);

  await stack.restartProcess('catalog');
  // The failed creates consumed no reference number.
  expect((await createOrder(tenant, { products: [{ reference: 'WIDGET' }] })).reference).toBe('ORD-000002');
}, 120_000);

test('an upstream 5xx is not stored under its Idempotency-Key: the retry after recovery executes', async () => {
  const { tenant } = await orderWorld(stack);
  const key = `order-${crypto.randomUUID()}`;
  const body = orderBody({ products: [{ reference: 'WIDGET' }] });

  await stack.stopProcess('catalog');
  // This 503 comes from sales (the upstream), not from the gateway: the key must be released.
  const failed = await tenant.request('POST', '/v1/orders', { body, headers: { 'idempotency-key': key } });
  expect(failed.status).toBe(503);
  expect(failed.headers.get('idempotent-replayed')).toBeNull();
  const stored = await stack.sql(
    'select count(*)::int as n from gateway.idempotency_keys where tenant_id = $1 and key = $2 and status is not null',
    [tenant.tenantId, key],
  );
  expect(stored.rows[0].n).toBe(0);

  await stack.restartProcess('catalog');
  const retried = await tenant.request('POST', '/v1/orders', { body, headers: { 'idempotency-key': key } });
  expect(retried.status).toBe(201);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
  const replayed = await tenant.request('POST', '/v1/orders', { body, headers: { 'idempotency-key': key } });
  expect(replayed.status).toBe(201);
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body).toEqual(retried.body);
  expect(await storedOrderCount(stack, tenant.tenantId)).toBe(1);
}, 120_000);

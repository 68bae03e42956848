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
  const before = await orderEvents(stack, tenant.tenantId);

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
  expect(await orderEvents(stack, tenant.tenantId)).toEqual(before);

  // Writes that need no catalog lookup still work while it is down.
  const withoutLines = await tenant.request('PUT', `/v1/orders/${order.reference}`, { body: { comments: 'catalog down' } });
  expect(withoutLines.status).toBe(200);

  await stack.restartProcess('catalog');
  // The failed creates consumed no reference number.
  expect((await createOrder(tenant, { products: [{ reference: 'WIDGET' }] })).reference).toBe('ORD-000002');
}, 120_000);

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { pollUntil, type Stack, startStack } from '@crm/testing';
import { rawExchange, statusesOf } from './raw-http.ts';

// The same code runs under Deno (from the npm package `deno`): the gateway and every service
// are started with `deno run`, and an authenticated request goes through the gateway to each.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ runtime: 'deno' });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

test('gateway and all four services answer under Deno', async () => {
  const tenant = await stack.createTenant({ users: [{ email: 'deno@example.test', name: 'Dee No' }] });
  const probes: [string, string][] = [
    ['sales', '/v1/users'],
    ['catalog', '/v1/product-categories'],
    ['documents', '/v1/document-categories'],
    ['webhooks', '/v1/webhooks/event-types'],
  ];
  for (const [service, path] of probes) {
    const res = await tenant.request('GET', path);
    expect({ service, status: res.status }).toEqual({ service, status: 200 });
    expect(res.body.data).toBeDefined();
  }
  const health = await tenant.request('GET', '/v1/health');
  expect(health.body.data.services).toEqual({ gateway: 'up', sales: 'up', catalog: 'up', documents: 'up', webhooks: 'up' });
  const version = await stack.call('gateway', 'GET', '/livez');
  expect(version.status).toBe(200);
});

test('under Deno a keyed write runs once, names its users, replays from the service record and publishes its event', async () => {
  const tenant = await stack.createTenant({ users: [{ email: 'deno@example.test', name: 'Dee No' }] });
  const key = crypto.randomUUID();
  const body = { name: 'Deno Ltd', type: 'client', users: ['DENO@example.test'] };
  const first = await tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } });
  expect(first.status).toBe(201);
  expect(first.body.data.users.map((u: { email: string }) => u.email)).toEqual(['deno@example.test']);
  // The gateway's record gone, the retry is answered from sales' own record (its prepared statements).
  await stack.sql('delete from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, key]);
  const retry = await tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } });
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.body.data.id).toBe(first.body.data.id);
  // The outbox relay (its statements prepared on its connection) publishes the one event.
  const published = async () => (await stack.sql('select published_at from sales.outbox where tenant_id = $1', [tenant.tenantId])).rows;
  const rows = await pollUntil('the outbox rows to be published', published, (outbox) => !outbox.some((r) => r.published_at === null), {
    timeoutMs: 5_000,
    everyMs: 50,
  });
  expect(rows.length).toBe(1);
  expect(rows[0]?.published_at).not.toBeNull();
});

test("under Deno the reads in one statement (a product's rates and category, an order's lines and states) answer what the writes answered", async () => {
  const tenant = await stack.createTenant({ users: [{ email: 'deno@example.test', name: 'Dee No' }] });
  const created = async (path: string, body: unknown) => {
    const res = await tenant.request('POST', path, { body });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  await created('/v1/contacts', { name: 'Deno Buyer', type: 'client' });
  await created('/v1/product-categories', { name: 'Tools', reference: 'tools' });
  const product = await created('/v1/products', {
    reference: 'DENO-1',
    name: 'Deno product',
    vat: 21,
    product_category_ref: 'tools',
    rates: [
      { sku: 'DENO-1-B', cost: 2.5, price: 3.75 },
      { sku: 'DENO-1-A', cost: 1, price: 19.99, primary: true },
    ],
  });
  const order = await created('/v1/orders', {
    enterprise_identifier: 'Deno Buyer',
    user_email: 'deno@example.test',
    date_limit: '2026-12-31',
    state: 1,
    products: [{ reference: 'DENO-1', quantity: 3 }],
  });
  // The read by reference is one statement (rates and states as JSON); the write's answer was not.
  expect((await tenant.request('GET', '/v1/products/DENO-1')).body.data).toEqual(product);
  expect((await tenant.request('GET', `/v1/orders/${order.reference}`)).body.data).toEqual(order);
  expect(order.states[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  expect((await tenant.request('GET', '/v1/products?per_page=5')).body.data).toEqual([product]);
  expect((await tenant.request('GET', '/v1/orders?per_page=5')).body.data).toEqual([order]);
});

test('under Deno requests pipelined on one connection are answered, in order (Bun closes such a connection: gateway README)', async () => {
  const tenant = await stack.createTenant();
  const paths = ['/v1/users', '/v1/contacts/0', '/v1/webhooks/event-types'];
  const requests = paths.map((path) => `GET ${path} HTTP/1.1\r\nhost: gateway\r\nx-api-key: ${tenant.apiKey}\r\n\r\n`).join('');
  const { text, statuses, closed } = await rawExchange(stack.gatewayUrl, requests, {
    // The last answer (the event types) is complete once its body's closing bracket arrived.
    done: (answer) => statusesOf(answer).length === paths.length && answer.endsWith('}'),
  });
  if (!closed) throw new Error(`no answer: ${text.slice(0, 200)}`);
  expect(statuses).toEqual([200, 404, 200]);
  expect(text).toContain('"contact.created"');
});

test('the processes really are Deno', async () => {
  const { readFileSync } = await import('node:fs');
  for (const proc of Object.values(stack.processes)) {
    const cmdline = readFileSync(`/proc/${proc.child.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('deno');
  }
});

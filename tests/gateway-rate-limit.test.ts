import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack } from '@crm/testing';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 180_000);

const contact = (i: number) => ({ name: `Rate ${i} ${crypto.randomUUID().slice(0, 6)}`, type: 'client' });

describe('rate limits (contract §7)', () => {
  test('30 writes pass, the 31st gets 429 rate_limited with Retry-After; headers on every response', async () => {
    const tenant = await stack.createTenant({ limits: { write_per_minute: 30 } });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await tenant.request('POST', '/v1/contacts', { body: contact(i) });
      statuses.push(res.status);
      expect(res.headers.get('ratelimit-policy')).toBe('"write";q=30;w=60');
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"write";r=${29 - i};t=\\d+$`));
    }
    expect(statuses.every((s) => s === 201)).toBe(true);
    const refused = await tenant.request('POST', '/v1/contacts', { body: contact(31) });
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe('rate_limited');
    expect(refused.body.error.request_id).toBe(refused.headers.get('x-request-id'));
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    expect(refused.headers.get('ratelimit')).toMatch(/^"write";r=0;t=(59|60)$/);
    // The refused write did not reach sales.
    const list = await tenant.request('GET', '/v1/contacts?per_page=1');
    expect(list.body.pagination.total).toBe(30);
  });

  test('two gateway replicas share one budget: 60 concurrent writes over both → exactly 30 pass', async () => {
    const replica = await stack.startGatewayReplica();
    const tenant = await stack.createTenant({ limits: { write_per_minute: 30 } });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        fetch(`${i % 2 === 0 ? stack.gatewayUrl : replica.url}/v1/contacts`, {
          method: 'POST',
          headers: { 'x-api-key': tenant.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify(contact(i)),
        }).then(async (r) => {
          await r.text();
          return r.status;
        }),
      ),
    );
    expect(results.filter((s) => s === 201).length).toBe(30);
    expect(results.filter((s) => s === 429).length).toBe(30);
    await replica.stop();
  });

  test('reads and writes have separate budgets; another tenant is unaffected', async () => {
    const tenant = await stack.createTenant({ limits: { write_per_minute: 2, read_per_minute: 3 } });
    const other = await stack.createTenant({ limits: { write_per_minute: 2, read_per_minute: 3 } });
    for (let i = 0; i < 2; i++) expect((await tenant.request('POST', '/v1/contacts', { body: contact(i) })).status).toBe(201);
    expect((await tenant.request('POST', '/v1/contacts', { body: contact(3) })).status).toBe(429);
    // Writes exhausted, reads still available (3), then refused.
    for (let i = 0; i < 3; i++) {
      const read = await tenant.request('GET', '/v1/users');
      expect(read.status).toBe(200);
      expect(read.headers.get('ratelimit-policy')).toBe('"read";q=3;w=60');
    }
    expect((await tenant.request('GET', '/v1/users')).status).toBe(429);
    expect((await other.request('POST', '/v1/contacts', { body: contact(9) })).status).toBe(201);
    expect((await other.request('GET', '/v1/users')).status).toBe(200);
  });

  test('recovery after Retry-After', async () => {
    const tenant = await stack.createTenant({ limits: { write_per_minute: 30 } });
    await stack.admin('PUT', `/admin/tenants/${tenant.tenantId}/limits`, { write_per_minute: 60 });
    await new Promise((r) => setTimeout(r, 200)); // the limit change is announced to every replica over NATS
    const sent = await Promise.all(Array.from({ length: 61 }, (_, i) => tenant.request('DELETE', `/v1/contacts/none-${i}`)));
    const refused = sent.filter((r) => r.status === 429);
    expect(refused.length).toBe(1);
    const retryAfter = Number(refused[0]?.headers.get('retry-after'));
    expect(retryAfter).toBe(1); // one request per second refills at 60/min
    expect((await tenant.request('DELETE', '/v1/contacts/none-x')).status).toBe(429);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 50));
    const again = await tenant.request('DELETE', '/v1/contacts/none-y');
    expect(again.status).toBe(404);
    expect(again.headers.get('ratelimit')).toMatch(/^"write";r=0;t=\d+$/);
  });

  test('a limit changed by the operator applies at once', async () => {
    const tenant = await stack.createTenant({ limits: { read_per_minute: 1000 } });
    expect((await tenant.request('GET', '/v1/users')).headers.get('ratelimit-policy')).toBe('"read";q=1000;w=60');
    await stack.admin('PUT', `/admin/tenants/${tenant.tenantId}/limits`, { read_per_minute: 5 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await tenant.request('GET', '/v1/users')).headers.get('ratelimit-policy')).toBe('"read";q=5;w=60');
  });

  test('requests without a valid key are limited per client address, not per tenant', async () => {
    // A replica that trusts this machine as a proxy, so X-Forwarded-For picks the client address
    // and the test does not spend the budget of 127.0.0.1 that other tests share.
    const replica = await stack.startGatewayReplica({ TRUSTED_PROXIES: '127.0.0.1,::1', UNAUTHENTICATED_PER_MINUTE: '5' });
    const address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const guess = (n: number) =>
      fetch(`${replica.url}/v1/users`, { headers: { 'x-api-key': `crm_${String(n).padStart(43, 'A')}`, 'x-forwarded-for': address } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await guess(i)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const refused = await guess(7);
    expect(refused.status).toBe(429);
    expect((await refused.json()).error.type).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address and a valid key are unaffected.
    const other = await fetch(`${replica.url}/v1/users`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(other.status).toBe(401);
    const tenant = await stack.createTenant();
    const valid = await fetch(`${replica.url}/v1/users`, { headers: { 'x-api-key': tenant.apiKey, 'x-forwarded-for': address } });
    expect(valid.status).toBe(200);
    await replica.stop();
  });
});

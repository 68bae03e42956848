import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;
let tenant: TestTenant;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant({ users: [{ email: 'ann@acme.test', name: 'Ann Lee' }] });
}, 180_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('authentication', () => {
  test('missing key → 401 unauthorized in the envelope', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/users`);
    const body = await res.json();
    expect(res.status).toBe(401);
    expect(body.error.type).toBe('unauthorized');
    expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
  });

  test('unknown key of the right shape → 401', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/users`, { headers: { 'x-api-key': `crm_${'A'.repeat(43)}` } });
    expect(res.status).toBe(401);
  });

  test('valid key → the account users', async () => {
    const res = await tenant.request('GET', '/v1/users');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ id: expect.any(Number), name: 'Ann Lee', email: 'ann@acme.test' }]);
    expect(res.body.pagination).toEqual({ total: 1, per_page: 15, current_page: 1, last_page: 1, has_more: false, next_cursor: null });
  });
});

describe('request ids', () => {
  test('a client UUID is echoed', async () => {
    const id = crypto.randomUUID();
    const res = await tenant.request('GET', '/v1/users', { headers: { 'x-request-id': id } });
    expect(res.headers.get('x-request-id')).toBe(id);
  });

  test('a non-UUID is replaced by a generated UUID', async () => {
    const res = await tenant.request('GET', '/v1/users', { headers: { 'x-request-id': 'not-a-uuid' } });
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    expect(res.headers.get('x-request-id')).not.toBe('not-a-uuid');
  });
});

describe('health', () => {
  test('GET /v1/health reports every service', async () => {
    const res = await tenant.request('GET', '/v1/health');
    expect(res.status).toBe(200);
    expect(res.body.data.services).toEqual({ gateway: 'up', sales: 'up', catalog: 'up', documents: 'up', webhooks: 'up' });
  });
});

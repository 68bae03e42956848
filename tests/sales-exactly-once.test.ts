import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, startStack, type TestTenant } from '@crm/testing';

// Contract §21: the service records a keyed write's answer in the write's own transaction, so a
// retry whose gateway record was lost (a gateway that died between the service's commit and its
// own store) still gets the one resource, not a second.
let stack: Stack;
let tenant: TestTenant;

beforeAll(async () => {
  stack = await startStack();
  tenant = await stack.createTenant();
}, 180_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

/** Forgets the gateway's own record of a key, as if the gateway had died before storing it. */
async function forgetGatewayRecord(key: string) {
  await stack.sql('delete from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, key]);
}

async function contactCount(): Promise<number> {
  const res = await tenant.request('GET', '/v1/contacts?per_page=1');
  return res.body.pagination.total;
}

describe('exactly-once writes (contract §21)', () => {
  test('a retried create whose gateway record was lost is answered from the service record: one contact', async () => {
    const key = crypto.randomUUID();
    const body = { name: 'Once Ltd', type: 'client', email: 'once@example.test' };
    const first = await tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    await forgetGatewayRecord(key);
    const retry = await tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await contactCount()).toBe(1);
  });

  test('the same key with another body is refused by the service too, and writes nothing', async () => {
    const key = crypto.randomUUID();
    expect(
      (await tenant.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client' }, headers: { 'idempotency-key': key } })).status,
    ).toBe(201);
    await forgetGatewayRecord(key);
    const other = await tenant.request('POST', '/v1/contacts', {
      body: { name: 'B', type: 'client' },
      headers: { 'idempotency-key': key },
    });
    expect(other.status).toBe(422);
    expect(other.body.error.type).toBe('idempotency_key_reused');
    expect(await contactCount()).toBe(2);
  });

  test('a refused write records nothing: the same key with a corrected body then creates', async () => {
    const key = crypto.randomUUID();
    const bad = await tenant.request('POST', '/v1/contacts', {
      body: { name: 'C', type: 'no-such-type' },
      headers: { 'idempotency-key': key },
    });
    expect(bad.status).toBe(422);
    const good = await tenant.request('POST', '/v1/contacts', { body: { name: 'C', type: 'client' }, headers: { 'idempotency-key': key } });
    expect(good.status).toBe(201);
    expect(await contactCount()).toBe(3);
  });
});

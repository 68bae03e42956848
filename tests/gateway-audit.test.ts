import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, startStack } from '@crm/testing';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('audit log on the shared stack (contract §9)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await sharedStack();
  }, 180_000);

  async function auditRows(tenantId: string, expected: number) {
    for (let i = 0; i < 50; i++) {
      const { rows } = await stack.sql('select * from gateway.audit_logs where tenant_id = $1 order by id', [tenantId]);
      if (rows.length >= expected) return rows;
      await sleep(100);
    }
    throw new Error(`fewer than ${expected} audit rows`);
  }

  test('one record per request, with what happened and never the key; secret query values redacted', async () => {
    const tenant = await stack.createTenant({ limits: { write_per_minute: 2 } });
    const requestId = crypto.randomUUID();
    await tenant.request('GET', '/v1/users?api_key=s3cret&token=t0k&password=pw&page=1&x=y', {
      headers: { 'x-request-id': requestId, 'user-agent': 'audit-test/1.0' },
    });
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Audited', type: 'client' }, headers: { 'idempotency-key': 'k-1' } });
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Audited', type: 'client' }, headers: { 'idempotency-key': 'k-1' } });
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Limited', type: 'client' } });
    const rows = await auditRows(tenant.tenantId, 4);
    expect(rows.length).toBe(4);
    const [read, created, replayed, limited] = rows;
    expect(read).toMatchObject({
      request_id: requestId,
      tenant_id: tenant.tenantId,
      method: 'GET',
      path: '/v1/users',
      query: 'api_key=[REDACTED]&token=[REDACTED]&password=[REDACTED]&page=1&x=y',
      status: 200,
      user_agent: 'audit-test/1.0',
      replayed: false,
      error_type: null,
    });
    expect(read.key_id).toMatch(/^key_/);
    expect(read.client_ip).toMatch(/127\.0\.0\.1|::1/);
    expect(read.duration_ms).toBeGreaterThan(0);
    expect(created).toMatchObject({ method: 'POST', status: 201, idempotency_key: 'k-1', replayed: false });
    expect(replayed).toMatchObject({ status: 201, idempotency_key: 'k-1', replayed: true });
    expect(limited).toMatchObject({ status: 429, error_type: 'rate_limited' });
    const everything = JSON.stringify(rows);
    expect(everything).not.toContain(tenant.apiKey);
    expect(everything).not.toContain('s3cret');
    expect(everything).not.toContain('t0k');
  });

  test('401s are recorded without a tenant', async () => {
    const requestId = crypto.randomUUID();
    const badKey = `crm_${'Z'.repeat(43)}`;
    const res = await fetch(`${stack.gatewayUrl}/v1/contacts?secret=abc`, { headers: { 'x-api-key': badKey, 'x-request-id': requestId } });
    expect(res.status).toBe(401);
    let rows: any[] = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      await sleep(100);
      rows = (await stack.sql('select * from gateway.audit_logs where request_id = $1', [requestId])).rows;
    }
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ tenant_id: null, key_id: null, status: 401, error_type: 'unauthorized', query: 'secret=[REDACTED]' });
    expect(JSON.stringify(rows[0])).not.toContain(badKey);
  });

  test('GET /v1/audit-logs: own records only, newest first, paginated, with filters', async () => {
    const tenant = await stack.createTenant();
    const other = await stack.createTenant();
    await other.request('GET', '/v1/users');
    const before = new Date();
    for (let i = 0; i < 3; i++) await tenant.request('GET', `/v1/users?page=${i + 1}`);
    await tenant.request('POST', '/v1/contacts', { body: { type: 'client' } }); // 422
    await tenant.request('GET', '/v1/contacts/missing'); // 404
    await auditRows(tenant.tenantId, 5);

    const all = await tenant.request('GET', '/v1/audit-logs?per_page=2');
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ total: 5, per_page: 2, current_page: 1, last_page: 3, has_more: true });
    expect(all.body.data.map((r: any) => r.path)).toEqual(['/v1/contacts/missing', '/v1/contacts']);
    expect(all.body.data.every((r: any) => r.tenant_id === tenant.tenantId)).toBe(true);
    const page3 = await tenant.request('GET', '/v1/audit-logs?per_page=2&page=3');
    expect(page3.body.data.map((r: any) => r.query)).toEqual(['page=1']);

    const filter = async (query: string) => (await tenant.request('GET', `/v1/audit-logs?${query}`)).body.data.map((r: any) => r.status);
    expect(await filter('status=422')).toEqual([422]);
    expect(await filter('method=post')).toEqual([422]);
    expect(await filter('path=/v1/users')).toEqual([200, 200, 200]);
    expect(await filter('path=/v1/contacts*')).toEqual([404, 422]);
    expect(await filter(`from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(
      (await filter(`from=${encodeURIComponent(before.toISOString())}&to=${encodeURIComponent(new Date().toISOString())}`)).length,
    ).toBe(5);
    const invalid = await tenant.request('GET', '/v1/audit-logs?per_page=500&from=yesterday');
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.type).toBe('validation_error');

    const others = await other.request('GET', '/v1/audit-logs');
    expect(others.body.data.every((r: any) => r.tenant_id === other.tenantId)).toBe(true);
  });
});

describe('audit log survives SIGTERM (own stack)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { AUDIT_FLUSH_MS: '60000', AUDIT_BATCH_SIZE: '5000' } });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  test('500 requests, then SIGTERM: 500 records', async () => {
    const tenant = await stack.createTenant();
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(Array.from({ length: 50 }, () => tenant.request('GET', '/v1/users')));
      expect(results.every((r) => r.status === 200)).toBe(true);
    }
    // Buffered in memory: the flush interval is a minute, so nothing is written yet.
    const early = await stack.sql('select count(*)::int as n from gateway.audit_logs where tenant_id = $1', [tenant.tenantId]);
    expect(early.rows[0].n).toBe(0);
    expect(await stack.stopProcess('gateway')).toBe(0);
    const { rows } = await stack.sql('select count(*)::int as n from gateway.audit_logs where tenant_id = $1', [tenant.tenantId]);
    expect(rows[0].n).toBe(500);
    await stack.restartProcess('gateway');
  }, 120_000);
});

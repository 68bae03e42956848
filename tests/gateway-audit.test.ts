import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createDb } from '@crm/db';
import { type ApiResponse, pollUntil, type Stack, sharedStack, startStack, type TestTenant } from '@crm/testing';
import { insertAuditEntries } from '../services/gateway/src/audit/repo.ts';
import { auditRowsUntil } from './audit-rows.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('audit log on the shared stack (contract §9)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await sharedStack();
  }, 180_000);

  test('one record per request, with what happened and never the key; secret query values redacted', async () => {
    const tenant = await stack.createTenant({ limits: { write_per_minute: 2 } });
    const requestId = crypto.randomUUID();
    await tenant.request('GET', '/v1/users?api_key=s3cret&token=t0k&password=pw&page=1&x=y', {
      headers: { 'x-request-id': requestId, 'user-agent': 'audit-test/1.0' },
    });
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Audited', type: 'client' }, headers: { 'idempotency-key': 'k-1' } });
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Audited', type: 'client' }, headers: { 'idempotency-key': 'k-1' } });
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Limited', type: 'client' } });
    const rows = await auditRowsUntil(stack, 'tenant_id = $1', [tenant.tenantId], 4);
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

  test('the batch insert stores every value as given: quotes, backslashes, braces, commas, "NULL", empty, non-ASCII, nulls', async () => {
    const { db } = createDb<any>({ url: stack.databaseUrl, schema: 'gateway', max: 1 });
    const tenantId = `audit-literal-${crypto.randomUUID()}`;
    const awkward = ['a"b', 'back\\slash\\', '{x,y}', 'NULL', '', ' spaced ', 'ñandú 🦤', '\\"', 'tab\there', 'line\nbreak', ',', '}'];
    const entries = awkward.map((text, i) => ({
      occurred_at: new Date(Date.UTC(2026, 10, 24, 1, 2, 3, i)),
      request_id: `${tenantId}-${i}`,
      tenant_id: tenantId,
      key_id: i % 2 ? null : text,
      method: 'GET',
      path: `/v1/${text}`,
      query: i % 3 ? text : null,
      status: 200 + i,
      duration_ms: i + 0.25,
      client_ip: null,
      user_agent: text,
      idempotency_key: i % 2 ? text : null,
      replayed: i % 2 === 1,
      error_type: i % 4 ? null : text,
    }));
    try {
      await insertAuditEntries(db, entries);
      const { rows } = await stack.sql(
        `select occurred_at, request_id, tenant_id, key_id, method, path, query, status, duration_ms, client_ip, user_agent,
           idempotency_key, replayed, error_type from gateway.audit_logs where tenant_id = $1 order by request_id`,
        [tenantId],
      );
      const byId = new Map(rows.map((row) => [row.request_id, row]));
      for (const entry of entries) expect(byId.get(entry.request_id)).toEqual(entry);
      expect(rows.length).toBe(awkward.length);
    } finally {
      await stack.sql('delete from gateway.audit_logs where tenant_id = $1', [tenantId]);
      await db.destroy();
    }
  });

  test('401s are recorded without a tenant', async () => {
    const requestId = crypto.randomUUID();
    const badKey = `crm_${'Z'.repeat(43)}`;
    const res = await fetch(`${stack.gatewayUrl}/v1/contacts?secret=abc`, { headers: { 'x-api-key': badKey, 'x-request-id': requestId } });
    expect(res.status).toBe(401);
    const rows = await auditRowsUntil(stack, 'request_id = $1', [requestId], 1);
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
    await auditRowsUntil(stack, 'tenant_id = $1', [tenant.tenantId], 5);

    const all = await tenant.request('GET', '/v1/audit-logs?per_page=2');
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({
      total: 5,
      per_page: 2,
      current_page: 1,
      last_page: 3,
      has_more: true,
      next_cursor: expect.any(String),
    });
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

  /** Audit records written straight into the table: `at` in microseconds after `base`, so several share one instant. */
  async function insertRecords(tenantId: string, path: string, base: Date, micros: number[]): Promise<number[]> {
    const { rows } = await stack.sql<{ id: string }>(
      `insert into gateway.audit_logs (occurred_at, request_id, tenant_id, method, path, status, duration_ms)
       select $2::timestamptz + make_interval(secs => m / 1e6), gen_random_uuid()::text, $1, 'GET', $3, 200, 1
       from unnest($4::bigint[]) as m returning id`,
      [tenantId, base.toISOString(), path, micros],
    );
    return rows.map((r) => Number(r.id));
  }

  /** Walks a list from `first` by following each page's Link rel="next"; `between` runs before each next page. */
  async function walk(tenant: TestTenant, first: string, between: (n: number) => Promise<void>) {
    const seen: number[] = [];
    let url: string | null = first;
    for (let n = 0; url; n++) {
      if (n > 100) throw new Error('the walk does not end');
      if (n > 0) await between(n - 1);
      const res: ApiResponse = await tenant.request('GET', url);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((r: any) => r.id));
      const { pagination } = res.body;
      const link = res.headers.get('link') ?? '';
      if (n > 0) {
        // Cursor pages never count; their Link has only rel="next", exactly while there is more.
        expect(pagination).toMatchObject({ total: null, current_page: null, last_page: null });
        expect(link).not.toContain('rel="first"');
      }
      expect(pagination.next_cursor === null).toBe(!pagination.has_more);
      url = /<([^>]+)>; rel="next"/.exec(link)?.[1] ?? null;
      expect(url === null).toBe(!pagination.has_more);
      if (url) expect(new URL(url, 'http://h').searchParams.get('cursor') ?? pagination.next_cursor).toBe(pagination.next_cursor);
      // From the first page on, continue with the cursor (page mode's Link would go on by page number).
      if (url && n === 0) url = `${first}&cursor=${pagination.next_cursor}`;
    }
    return seen;
  }

  test('GET /v1/audit-logs cursor mode: a walk with inserts and deletes between pages finds every stable record once (§22)', async () => {
    const tenant = await stack.createTenant({ limits: { read_per_minute: 10_000 } });
    const path = `/v1/probe-${crypto.randomUUID().slice(0, 8)}`;
    const base = new Date(Date.now() - 3_600_000);
    // 30 records, three to an instant (ties broken by id), instants microseconds apart (a JS Date would round them).
    const micros = Array.from({ length: 30 }, (_, i) => Math.floor(i / 3) * 1_234 + 7);
    for (const sort of ['-occurred_at', 'occurred_at']) {
      const initial = await insertRecords(tenant.tenantId, path, base, micros);
      const stable = new Set(initial);
      const remaining = () => initial.filter((id) => stable.has(id));
      let inserted: number[] = [];
      const seen = await walk(tenant, `/v1/audit-logs?per_page=4&sort=${sort}&path=${encodeURIComponent(path)}`, async (n) => {
        // Between pages: one record at a middle instant (before or after the position), one existing record deleted.
        inserted = inserted.concat(await insertRecords(tenant.tenantId, path, base, [((n * 7) % 10) * 1_234 + 7]));
        const victim = remaining()[(n * 5) % remaining().length];
        if (victim !== undefined && n % 2 === 0) {
          stable.delete(victim);
          await stack.sql('delete from gateway.audit_logs where id = $1', [victim]);
        }
      });
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of stable) expect(seen).toContain(id);
      expect(seen.every((id) => initial.includes(id) || inserted.includes(id))).toBe(true);
      // The order is the sort's, ties by id in the same direction.
      const { rows } = await stack.sql<{ id: string }>(
        `select id from gateway.audit_logs where id = any($1::bigint[]) order by occurred_at ${sort.startsWith('-') ? 'desc' : 'asc'}, id ${sort.startsWith('-') ? 'desc' : 'asc'}`,
        [seen],
      );
      expect(seen.filter((id) => !initial.includes(id) || stable.has(id))).toEqual(rows.map((r) => Number(r.id)));
      await stack.sql('delete from gateway.audit_logs where tenant_id = $1 and path = $2', [tenant.tenantId, path]);
    }
  });

  test('GET /v1/audit-logs: page and cursor walks agree; Link rels; cursors bound to sort and filters (§22)', async () => {
    const tenant = await stack.createTenant({ limits: { read_per_minute: 10_000 } });
    const path = `/v1/probe-${crypto.randomUUID().slice(0, 8)}`;
    const ids = await insertRecords(tenant.tenantId, path, new Date(Date.now() - 60_000), [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]);
    const query = `per_page=3&path=${encodeURIComponent(path)}&status=200`;
    const byPages: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await tenant.request('GET', `/v1/audit-logs?${query}&page=${page}`);
      byPages.push(...res.body.data.map((r: any) => r.id));
      expect(res.body.pagination).toMatchObject({ total: 11, current_page: page, last_page: 4, has_more: page < 4 });
      const link = res.headers.get('link') ?? '';
      const rels = [...link.matchAll(/rel="(\w+)"/g)].map((m) => m[1]);
      expect(rels).toEqual(['first', ...(page > 1 ? ['prev'] : []), ...(page < 4 ? ['next'] : []), 'last']);
      expect(link).toContain(`</v1/audit-logs?per_page=3&path=${encodeURIComponent(path)}&status=200&page=1>; rel="first"`);
      expect(link).toContain('page=4>; rel="last"');
      if (page < 4) expect(res.body.pagination.next_cursor).toEqual(expect.any(String));
      else expect(res.body.pagination.next_cursor).toBeNull();
    }
    expect(byPages).toEqual([...ids].reverse());
    const byCursor = await walk(tenant, `/v1/audit-logs?${query}`, async () => {});
    expect(byCursor).toEqual(byPages);

    const first = await tenant.request('GET', `/v1/audit-logs?${query}`);
    const cursor = first.body.pagination.next_cursor;
    const refused = async (q: string) => {
      const res = await tenant.request('GET', `/v1/audit-logs?${q}`);
      expect(res.status).toBe(422);
      expect(res.body.error.type).toBe('validation_error');
      return res.body.error.details.map((d: any) => d.field);
    };
    expect(await refused(`${query}&cursor=${cursor}&page=2`)).toEqual(['cursor']);
    expect(await refused(`${query}&cursor=${cursor}&sort=occurred_at`)).toEqual(['cursor']);
    expect(await refused(`per_page=3&path=${encodeURIComponent(path)}&status=201&cursor=${cursor}`)).toEqual(['cursor']);
    expect(await refused(`${query}&cursor=${cursor}&from=2020-01-01T00:00:00Z`)).toEqual(['cursor']);
    expect(await refused(`${query}&cursor=not-a-cursor`)).toEqual(['cursor']);
    expect(await refused(`${query}&cursor=${'A'.repeat(3000)}`)).toEqual(['cursor']);
    // Another per_page is fine: the position does not depend on it.
    const wider = await tenant.request('GET', `/v1/audit-logs?per_page=100&path=${encodeURIComponent(path)}&status=200&cursor=${cursor}`);
    expect(wider.body.data.map((r: any) => r.id)).toEqual(byPages.slice(3));
    expect(wider.body.pagination).toEqual({
      total: null,
      per_page: 100,
      current_page: null,
      last_page: null,
      has_more: false,
      next_cursor: null,
    });
    expect(wider.headers.get('link')).toBeNull();
  });
});

describe('audit records are listed soon after the answer (issue 16)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await sharedStack();
  }, 180_000);

  test('200 requests on an idle stack: each record is listed by GET /v1/audit-logs within a second of its answer (p99)', async () => {
    const tenant = await stack.createTenant();
    const tag = crypto.randomUUID().slice(0, 8);
    const latencies: number[] = [];
    // Four clients one request after another (50 each), each polling the log until its record is there.
    const client = async (c: number) => {
      for (let i = 0; i < 50; i++) {
        // A path of its own (an unknown contact, 404), so the record is found by the `path` filter.
        const path = `/v1/contacts/latency-${tag}-${c}-${i}`;
        expect((await tenant.request('GET', path)).status).toBe(404);
        const answered = performance.now();
        for (;;) {
          const listed = await tenant.request('GET', `/v1/audit-logs?path=${encodeURIComponent(path)}`);
          expect(listed.status).toBe(200);
          if (listed.body.data.length > 0) break;
          if (performance.now() - answered > 10_000) throw new Error(`the record of ${path} is not listed after 10 s`);
          await sleep(10);
        }
        latencies.push(performance.now() - answered);
      }
    };
    await Promise.all([0, 1, 2, 3].map(client));
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] as number;
    console.log(
      `[audit latency] answer → listed by GET /v1/audit-logs, 200 requests: p50 ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, ` +
        `p99 ${at(0.99).toFixed(0)} ms, max ${at(1).toFixed(0)} ms`,
    );
    expect(at(0.99)).toBeLessThan(1000);
  }, 120_000);
});

describe('audit log: retention and SIGTERM (own stack)', () => {
  let stack: Stack;
  beforeAll(async () => {
    // Writes at most once a minute (the first at once), and a purge every 300 ms.
    stack = await startStack({ env: { AUDIT_FLUSH_MS: '60000', AUDIT_BATCH_SIZE: '5000', AUDIT_PURGE_INTERVAL_MS: '300' } });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  /** `n` records of tenant `tenantId` made `days` days ago (a minute apart), straight into the table. */
  const insertAged = (tenantId: string, n: number, days: number) =>
    stack.sql(
      `insert into gateway.audit_logs (occurred_at, request_id, tenant_id, method, path, status, duration_ms)
       select now() - make_interval(days => $2, mins => i), gen_random_uuid()::text, $1, 'GET', '/v1/aged-' || $2, 200, 1
       from generate_series(1, $3) as i`,
      [tenantId, days, n],
    );
  const countByAge = async (tenantId: string) => {
    const { rows } = await stack.sql<{ path: string; n: number }>(
      'select path, count(*)::int as n from gateway.audit_logs where tenant_id = $1 group by path order by path',
      [tenantId],
    );
    return Object.fromEntries(rows.map((r) => [r.path, r.n]));
  };

  test('retention: the gateway’s job deletes records older than AUDIT_RETENTION_DAYS (90), in batches; newer ones stay', async () => {
    const tenant = await stack.createTenant();
    await insertAged(tenant.tenantId, 2500, 91);
    await insertAged(tenant.tenantId, 10, 89);
    await pollUntil(
      'the purge of 2500 expired records',
      () => countByAge(tenant.tenantId),
      (counts) => counts['/v1/aged-91'] === undefined,
      { timeoutMs: 15_000 },
    );
    expect(await countByAge(tenant.tenantId)).toEqual({ '/v1/aged-89': 10 });
    const listed = await tenant.request('GET', '/v1/audit-logs?per_page=100');
    expect(listed.body.pagination.total).toBe(10);
  }, 60_000);

  test('retention is configurable: with AUDIT_RETENTION_DAYS=30 the 89-day-old records go too', async () => {
    const tenant = await stack.createTenant();
    await insertAged(tenant.tenantId, 10, 89);
    await insertAged(tenant.tenantId, 5, 29);
    expect(await stack.stopProcess('gateway')).toBe(0);
    await stack.restartProcess('gateway', { AUDIT_RETENTION_DAYS: '30' });
    await pollUntil(
      'the purge with a 30-day retention',
      () => countByAge(tenant.tenantId),
      (counts) => counts['/v1/aged-89'] === undefined,
      { timeoutMs: 15_000 },
    );
    expect(await countByAge(tenant.tenantId)).toEqual({ '/v1/aged-29': 5 });
    expect(await stack.stopProcess('gateway')).toBe(0);
    await stack.restartProcess('gateway');
  }, 120_000);

  test('500 requests, then SIGTERM: 500 records', async () => {
    const tenant = await stack.createTenant();
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(Array.from({ length: 50 }, () => tenant.request('GET', '/v1/users')));
      expect(results.every((r) => r.status === 200)).toBe(true);
    }
    // Buffered in memory: the first write went at once (an idle gateway writes its first record
    // straight away), the next may only start a minute later — so at least 450 are still waiting.
    const early = await stack.sql('select count(*)::int as n from gateway.audit_logs where tenant_id = $1', [tenant.tenantId]);
    expect(early.rows[0].n).toBeLessThanOrEqual(50);
    expect(await stack.stopProcess('gateway')).toBe(0);
    const { rows } = await stack.sql('select count(*)::int as n from gateway.audit_logs where tenant_id = $1', [tenant.tenantId]);
    expect(rows[0].n).toBe(500);
    await stack.restartProcess('gateway');
  }, 120_000);
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { pollUntil, type Stack, sharedStack, until } from '@crm/testing';
import pg from 'pg';

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

  test('RATE_LIMIT_COALESCE_MS: reads arriving within the window after a grant share the next one', async () => {
    const replica = await stack.startGatewayReplica({ RATE_LIMIT_COALESCE_MS: '1000' });
    try {
      const tenant = await stack.createTenant({ limits: { read_per_minute: 100 } });
      const statements = async () =>
        Number(/^db_queries_total\{[^}]*\} (\d+)$/m.exec(await (await fetch(`${replica.opsUrl}/metrics`)).text())?.[1]);
      const read = () => fetch(`${replica.url}/v1/users`, { headers: { 'x-api-key': tenant.apiKey } });
      expect((await read()).status).toBe(200); // an idle bucket: at once
      const before = await statements();
      // Five reads 50 ms apart, all within the window after that grant: one grant statement for the
      // five (with the default 2 ms, five). The rest of the count is the audit log's batches (≤ 2).
      const reads: Promise<Response>[] = [];
      for (let i = 0; i < 5; i++) {
        reads.push(read());
        await new Promise((r) => setTimeout(r, 50));
      }
      const answers = await Promise.all(reads);
      expect(answers.map((r) => r.status)).toEqual(Array(5).fill(200));
      // Granted in arrival order, one interval apart (the bucket refills meanwhile: 100/min is one per 600 ms).
      const left = answers.map((r) => Number(/;r=(\d+);/.exec(r.headers.get('ratelimit') ?? '')?.[1]));
      expect(left.slice(1).map((n, i) => (left[i] as number) - n)).toEqual([1, 1, 1, 1]);
      await new Promise((r) => setTimeout(r, 600)); // the audit batch of those answers
      expect((await statements()) - before).toBeLessThanOrEqual(3);
    } finally {
      await replica.stop();
    }
  });

  test('RATE_LIMIT_FULL_BATCH: a full batch goes at once; a smaller one waits for the window', async () => {
    const replica = await stack.startGatewayReplica({ RATE_LIMIT_COALESCE_MS: '1000', RATE_LIMIT_FULL_BATCH: '4' });
    try {
      const tenant = await stack.createTenant({ limits: { read_per_minute: 1000 } });
      const read = () => fetch(`${replica.url}/v1/users`, { headers: { 'x-api-key': tenant.apiKey } });
      /** Milliseconds from a grant of an idle bucket to the answers of `n` concurrent reads sent right after it. */
      async function afterAGrant(n: number): Promise<number> {
        await new Promise((r) => setTimeout(r, 1100)); // the bucket's window is over
        const started = performance.now();
        expect((await read()).status).toBe(200); // goes at once, and opens a 1 s window
        const answers = await Promise.all(Array.from({ length: n }, read));
        expect(answers.map((r) => r.status)).toEqual(Array(n).fill(200));
        return performance.now() - started;
      }
      // Three reads wait for the end of the window (1 s after the grant)…
      expect(await afterAGrant(3)).toBeGreaterThanOrEqual(950);
      // …four fill the batch and go as one statement at once.
      expect(await afterAGrant(4)).toBeLessThan(800);
    } finally {
      await replica.stop();
    }
  });

  describe('a read forwarded while its grant is on the way (the grant decides)', () => {
    /** GETs of one contact that sales has answered so far (its http_requests_total). */
    async function salesContactReads(): Promise<number> {
      const text = (await stack.call('sales', 'GET', '/metrics')).text;
      let total = 0;
      for (const m of text.matchAll(/^http_requests_total\{[^}]*method="GET",route="\/v1\/contacts\/:\w+"[^}]*\} (\d+)$/gm))
        total += Number(m[1]);
      return total;
    }

    /** The stack's gateway's count of reads sent ahead of a grant that refused them. */
    async function refusedAhead(): Promise<number> {
      const text = await (await fetch(`${stack.gatewayOpsUrl}/metrics`)).text();
      return Number(/^gateway_reads_ahead_refused_total\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
    }

    /** Holds the row lock of the tenant's read bucket, so its next grant waits until `release()`. */
    async function holdReadBucket(tenantId: string) {
      const client = new pg.Client({ connectionString: stack.databaseUrl });
      await client.connect();
      await client.query('begin');
      const { rowCount } = await client.query('select 1 from gateway.rate_limits where bucket = $1 for update', [
        `tenant:${tenantId}:read`,
      ]);
      expect(rowCount).toBe(1);
      return {
        /** Whether a gateway statement is waiting for the lock. */
        async waited(): Promise<boolean> {
          const { rows } = await stack.sql(
            `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
          );
          return rows[0].n > 0;
        },
        async release() {
          await client.query('commit');
          await client.end();
        },
      };
    }

    async function contactPath(tenant: Awaited<ReturnType<Stack['createTenant']>>): Promise<string> {
      const created = await tenant.request('POST', '/v1/contacts', { body: contact(0) });
      expect(created.status).toBe(201);
      return `/v1/contacts/${created.body.data.id}`;
    }

    test('with room left, sales answers the read while its grant waits; the client gets it once the grant passes', async () => {
      const tenant = await stack.createTenant({ limits: { read_per_minute: 50 } });
      const path = await contactPath(tenant);
      expect((await tenant.request('GET', path)).headers.get('ratelimit')).toMatch(/^"read";r=49;/);
      const bucket = await holdReadBucket(tenant.tenantId);
      const before = await salesContactReads();
      let answered = false;
      const pending = tenant.request('GET', path).then((r) => {
        answered = true;
        return r;
      });
      await until('the grant to wait for the bucket lock', () => bucket.waited(), { timeoutMs: 5_000, everyMs: 20 });
      await pollUntil('sales to answer the read', salesContactReads, (reads) => reads > before, { timeoutMs: 5_000, everyMs: 20 });
      expect(answered).toBe(false);
      await bucket.release();
      const read = await pending;
      expect(read.status).toBe(200);
      expect(read.headers.get('ratelimit')).toMatch(/^"read";r=48;/);
      expect(read.body.data.name).toStartWith('Rate 0');
    });

    test('near the limit, the read waits for its grant: sales sees nothing before it, nor a refused read', async () => {
      const tenant = await stack.createTenant({ limits: { read_per_minute: 3 } });
      const path = await contactPath(tenant);
      for (const left of [2, 1])
        expect((await tenant.request('GET', path)).headers.get('ratelimit')).toMatch(new RegExp(`^"read";r=${left};`));
      const bucket = await holdReadBucket(tenant.tenantId);
      const before = await salesContactReads();
      const pending = tenant.request('GET', path);
      await until('the grant to wait for the bucket lock', () => bucket.waited(), { timeoutMs: 5_000, everyMs: 20 });
      await new Promise((r) => setTimeout(r, 300));
      expect(await salesContactReads()).toBe(before);
      await bucket.release();
      expect((await pending).status).toBe(200);
      const refused = await tenant.request('GET', path);
      expect(refused.status).toBe(429);
      expect(await salesContactReads()).toBe(before + 1);
    });

    test('a read sent ahead of a grant that refuses it (another replica spent the budget) answers 429, not the read', async () => {
      const replica = await stack.startGatewayReplica();
      try {
        const tenant = await stack.createTenant({ limits: { read_per_minute: 5 } });
        const path = await contactPath(tenant);
        // This replica learns that 4 are left; the other one spends them.
        expect((await tenant.request('GET', path)).headers.get('ratelimit')).toMatch(/^"read";r=4;/);
        for (let i = 0; i < 4; i++) {
          const spent = await fetch(replica.url + path, { headers: { 'x-api-key': tenant.apiKey } });
          expect(spent.status).toBe(200);
          await spent.text();
        }
        // Sent ahead of its grant (this replica still believes 4 are left), refused by it.
        const dropped = await refusedAhead();
        const refused = await tenant.request('GET', path);
        expect(await refusedAhead()).toBe(dropped + 1);
        expect(refused.status).toBe(429);
        expect(refused.body.error.type).toBe('rate_limited');
        expect(refused.body.data).toBeUndefined();
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(refused.headers.get('ratelimit')).toMatch(/^"read";r=0;/);
        expect(refused.headers.get('etag')).toBeNull();
      } finally {
        await replica.stop();
      }
    });
  });
});

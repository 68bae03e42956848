import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createDb } from '@crm/db';
import { writeEvents } from '@crm/events';
import { repoRoot } from '@crm/stack';
import { type NatsServer, pollUntil, type Stack, send, sharedStack, startNatsServer, startStack } from '@crm/testing';
import { connect } from 'nats';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('gateway core on the shared stack', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await sharedStack();
  }, 180_000);

  test('a rotated key is refused on a second gateway replica within 5 s; the new key works on both', async () => {
    const tenant = await stack.createTenant();
    const replica = await stack.startGatewayReplica();
    const viaReplica = (key: string) => send(replica.url, 'GET', '/v1/users', { headers: { 'x-api-key': key } });
    expect((await viaReplica(tenant.apiKey)).status).toBe(200); // now cached on the replica

    const rotated = await stack.admin('POST', `/admin/tenants/${tenant.tenantId}/rotate-key`);
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.data.api_key;
    expect(newKey).toMatch(/^crm_[A-Za-z0-9_-]{43}$/);

    const started = Date.now();
    await pollUntil(
      'the old key refused on the replica',
      async () => (await viaReplica(tenant.apiKey)).status,
      (status) => status === 401,
      { timeoutMs: 5000, show: (status) => `status ${status}` },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await send(stack.gatewayUrl, 'GET', '/v1/users', { headers: { 'x-api-key': tenant.apiKey } })).status).toBe(401);
    expect((await viaReplica(newKey)).status).toBe(200);
    expect((await send(stack.gatewayUrl, 'GET', '/v1/users', { headers: { 'x-api-key': newKey } })).status).toBe(200);
    await replica.stop();
  });

  test('keys are stored only as SHA-256 hashes', async () => {
    const tenant = await stack.createTenant();
    const { rows } = await stack.sql('select key_hash from gateway.api_keys where tenant_id = $1', [tenant.tenantId]);
    const expected = new Bun.CryptoHasher('sha256').update(tenant.apiKey).digest('hex');
    expect(rows).toEqual([{ key_hash: expected }]);
    const dump = await stack.sql('select * from gateway.api_keys');
    expect(JSON.stringify(dump.rows)).not.toContain(tenant.apiKey);
  });

  test('error envelope: 400 malformed JSON, 400 wrong content type, 404 unknown route, 405 wrong method', async () => {
    const tenant = await stack.createTenant();
    const malformed = await tenant.request('POST', '/v1/contacts', { raw: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toEqual({
      type: 'bad_request',
      message: expect.any(String),
      request_id: malformed.headers.get('x-request-id'),
    });

    const wrongType = await tenant.request('POST', '/v1/contacts', { raw: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.type).toBe('bad_request');

    const unknown = await tenant.request('GET', '/v1/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.type).toBe('not_found');
    expect(unknown.body.error.request_id).toBe(unknown.headers.get('x-request-id'));

    const wrongMethod = await tenant.request('DELETE', '/v1/users');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.error.type).toBe('method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toContain('GET');
  });

  test('a JSON body over 1 MB → 413 payload_too_large', async () => {
    const tenant = await stack.createTenant();
    const res = await tenant.request('POST', '/v1/contacts', { body: { name: 'x'.repeat(1024 * 1024 + 1), type: 'client' } });
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe('payload_too_large');
  });

  test('every service refuses calls without a valid internal credential (health endpoints stay open)', async () => {
    for (const name of ['sales', 'catalog', 'documents', 'webhooks'] as const) {
      const bare = await stack.call(name, 'GET', '/v1/users', { headers: { 'x-tenant-id': 'any' } });
      expect(bare.status).toBe(401);
      expect(bare.body.error.type).toBe('unauthorized');
      const wrong = await stack.call(name, 'GET', '/internal/users/by-email?email=a@b.c', {
        headers: { 'x-tenant-id': 'any', 'x-internal-token': 'wrong-token-0000000' },
      });
      expect(wrong.status).toBe(401);
      for (const open of ['/livez', '/readyz', '/metrics']) expect((await stack.call(name, 'GET', open)).status).toBe(200);
    }
  });

  test('/metrics exposes request counts and latency histograms by route and status', async () => {
    const tenant = await stack.createTenant();
    await tenant.request('GET', '/v1/users');
    const metrics = await stack.call('sales', 'GET', '/metrics');
    expect(metrics.text).toContain('http_requests_total{service="sales",method="GET",route="/v1/users",status="200"}');
    expect(metrics.text).toContain(
      'http_request_duration_seconds_bucket{service="sales",method="GET",route="/v1/users",status="200",le="0.005"}',
    );
  });

  test('/v1/users is tenant-scoped', async () => {
    const a = await stack.createTenant({ users: [{ email: 'ann@a.test', name: 'Ann' }] });
    const b = await stack.createTenant({ users: [{ email: 'bob@b.test', name: 'Bob' }] });
    const listA = await a.request('GET', '/v1/users');
    const listB = await b.request('GET', '/v1/users');
    expect(listA.body.data.map((u: { email: string }) => u.email)).toEqual(['ann@a.test']);
    expect(listB.body.data.map((u: { email: string }) => u.email)).toEqual(['bob@b.test']);
  });

  test('admin API: users and limits; admin routes need the admin token', async () => {
    const tenant = await stack.createTenant();
    expect((await send(stack.gatewayUrl, 'POST', '/admin/tenants', { body: { name: 'x' } })).status).toBe(401);
    const user = await stack.admin('POST', `/admin/tenants/${tenant.tenantId}/users`, { email: 'new@t.test', name: 'New Person' });
    expect(user.status).toBe(201);
    expect(user.body.data).toEqual({ id: expect.any(Number), email: 'new@t.test', name: 'New Person' });
    const limits = await stack.admin('PUT', `/admin/tenants/${tenant.tenantId}/limits`, { read_per_minute: 10 });
    expect(limits.status).toBe(200);
    expect(limits.body.data.limits).toEqual({ read_per_minute: 10, write_per_minute: 100_000 });
    expect((await stack.admin('PUT', '/admin/tenants/nope/limits', { read_per_minute: 10 })).status).toBe(404);
    const bad = await stack.admin('POST', '/admin/tenants', { name: '', users: [{ email: 'not-an-email', name: 'X' }] });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'users[0].email']);
  });
});

describe('faults on a private stack with its own NATS', () => {
  let stack: Stack;
  let nats: NatsServer;

  beforeAll(async () => {
    nats = await startNatsServer();
    stack = await startStack({ natsUrl: nats.url });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await nats?.close();
  }, 60_000);

  test('the outbox relay publishes every event exactly once although NATS stops during the writes', async () => {
    const { db } = createDb({ url: stack.databaseUrl, schema: 'sales' });
    const written: string[] = [];
    const writeBatch = async (n: number) => {
      await db.transaction().execute(async (trx) => {
        written.push(
          ...(await writeEvents(
            trx,
            Array.from({ length: n }, (_, i) => ({ tenantId: 't-relay', type: 'contact.deleted' as const, data: { id: i + 1 } })),
          )),
        );
      });
    };
    for (let i = 0; i < 10; i++) await writeBatch(10);
    await sleep(300);
    await nats.stop();
    for (let i = 0; i < 10; i++) {
      await writeBatch(10); // accepted while NATS is down
      await sleep(50);
    }
    await sleep(1000);
    const restarted = nats.start();
    for (let i = 0; i < 10; i++) await writeBatch(10); // while NATS comes back
    await restarted;

    const nc = await connect({ servers: nats.url, waitOnFirstConnect: true });
    const jsm = await nc.jetstreamManager();
    await pollUntil(
      'every event on the stream, none left in the outbox',
      async () => ({
        messages: await jsm.streams
          .info(stack.stream)
          .then((i) => i.state.messages)
          .catch(() => 0),
        unpublished: (await stack.sql('select count(*)::int as n from sales.outbox where published_at is null')).rows[0].n,
      }),
      (s) => s.messages >= written.length && s.unpublished === 0,
      { timeoutMs: 30_000, everyMs: 250 },
    );
    await sleep(1500); // a late duplicate would show up here
    const info = await jsm.streams.info(stack.stream);
    const ids: string[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const msg = await jsm.streams.getMessage(stack.stream, { seq });
      ids.push(msg.json<{ id: string }>().id);
    }
    await nc.close();
    await db.destroy();
    expect(written.length).toBe(300);
    expect(info.state.messages).toBe(300);
    expect(new Set(ids).size).toBe(300);
    expect([...ids].sort()).toEqual([...written].sort());
  }, 90_000);

  test('upstream down → 503 service_unavailable; /v1/health names it; it recovers on restart', async () => {
    const tenant = await stack.createTenant();
    await stack.stopProcess('sales');
    const down = await tenant.request('GET', '/v1/users');
    expect(down.status).toBe(503);
    expect(down.body.error.type).toBe('service_unavailable');
    const health = await tenant.request('GET', '/v1/health');
    expect(health.status).toBe(503);
    expect(health.body.error.message).toContain('sales');
    expect(health.body.error.details).toEqual([{ field: 'sales', message: expect.stringContaining('down') }]);
    await stack.restartProcess('sales');
    expect((await tenant.request('GET', '/v1/users')).status).toBe(200);
  }, 60_000);

  test('upstream slow → 504 upstream_timeout', async () => {
    const replica = await stack.startGatewayReplica({ UPSTREAM_TIMEOUT_MS: '800' });
    const tenant = await stack.createTenant();
    stack.processes.sales.child.kill('SIGSTOP');
    try {
      const res = await send(replica.url, 'GET', '/v1/users', { headers: { 'x-api-key': tenant.apiKey } });
      expect(res.status).toBe(504);
      expect(res.body.error.type).toBe('upstream_timeout');
    } finally {
      stack.processes.sales.child.kill('SIGCONT');
      await replica.stop();
    }
  }, 30_000);

  test('a keyed write to a stalled service → 504 upstream_timeout; its retry with the key gets the one resource', async () => {
    // Keyed writes go through the gateway's own HTTP/1.1 client: its deadline ends the exchange,
    // the gateway releases the key, and the service's own record answers the retry (contract §21).
    const replica = await stack.startGatewayReplica({ UPSTREAM_TIMEOUT_MS: '800' });
    const tenant = await stack.createTenant();
    const name = `Stalled ${crypto.randomUUID()}`;
    const write = () =>
      send(replica.url, 'POST', '/v1/contacts', {
        headers: { 'x-api-key': tenant.apiKey, 'idempotency-key': `stalled-${name}` },
        body: { name, type: 'client' },
      });
    stack.processes.sales.child.kill('SIGSTOP');
    let stalled: Awaited<ReturnType<typeof write>>;
    try {
      stalled = await write();
    } finally {
      stack.processes.sales.child.kill('SIGCONT');
    }
    try {
      expect(stalled.status).toBe(504);
      expect(stalled.body.error.type).toBe('upstream_timeout');
      // The stalled request may still be carried out once sales runs again; the retry answers that one.
      const retried = await write();
      expect(retried.status).toBe(201);
      const again = await write();
      expect(again.status).toBe(201);
      expect(again.body.data.id).toBe(retried.body.data.id);
      const found = await tenant.request('GET', `/v1/contacts?q=${encodeURIComponent(name)}`);
      expect(found.body.data.map((c: { id: number }) => c.id)).toEqual([retried.body.data.id]);
    } finally {
      await replica.stop();
    }
  }, 30_000);

  test('SIGTERM: a service finishes, flushes and exits 0', async () => {
    expect(await stack.stopProcess('webhooks')).toBe(0);
    await stack.restartProcess('webhooks');
  }, 30_000);
});

describe('configuration', () => {
  test('a missing or bad variable stops start-up with its name', () => {
    const result = spawnSync(join(repoRoot, 'node_modules/.bin/bun'), [join(repoRoot, 'services/catalog/src/main.ts')], {
      env: { PATH: process.env.PATH ?? '', CATALOG_PORT: 'not-a-port', DATABASE_URL: 'mysql://nope' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    const output = result.stdout + result.stderr;
    expect(output).toContain('INTERNAL_TOKEN is required');
    expect(output).toContain('CATALOG_PORT');
    expect(output).toContain('DATABASE_URL');
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ServiceProcess } from '@crm/stack';
import { pollUntil, type Stack, send, sharedStack, type TestTenant } from '@crm/testing';
import { untilClaimed } from './exactly-once.ts';

let stack: Stack;
let tenant: TestTenant;
let replica: ServiceProcess;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  replica = await stack.startGatewayReplica();
}, 180_000);

afterAll(async () => {
  await replica?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newKey = () => `key-${crypto.randomUUID()}`;
const keyed = (key: string) => ({ 'idempotency-key': key });

async function contactCount(t: TestTenant, q: string): Promise<number> {
  const res = await t.request('GET', `/v1/contacts?q=${encodeURIComponent(q)}`);
  return res.body.pagination.total;
}

describe('idempotency keys (contract §8)', () => {
  test('a retry replays the same status, body and Location with Idempotent-Replayed and a new request id', async () => {
    const key = newKey();
    const name = `Idem ${crypto.randomUUID()}`;
    const first = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(`"${key}"`) });
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await contactCount(tenant, name)).toBe(1);
  });

  test('canonical JSON: the same fields in another order (at every depth) are the same body', async () => {
    const key = newKey();
    const name = `Canon ${crypto.randomUUID()}`;
    const body = { name, type: 'client', location: { city: 'Vigo', country: 'ES' } };
    const first = await tenant.request('POST', '/v1/contacts', { body, headers: keyed(key) });
    const reordered = `{"location":{"country":"ES","city":"Vigo"},"type":"client","name":${JSON.stringify(name)}}`;
    const second = await tenant.request('POST', '/v1/contacts', {
      raw: reordered,
      headers: { ...keyed(key), 'content-type': 'application/json' },
    });
    expect(first.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await contactCount(tenant, name)).toBe(1);
  });

  test('the same key with another body, path or method → 422 idempotency_key_reused', async () => {
    const key = newKey();
    const name = `Reuse ${crypto.randomUUID()}`;
    expect((await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) })).status).toBe(201);
    const otherBody = await tenant.request('POST', '/v1/contacts', { body: { name: `${name}!`, type: 'client' }, headers: keyed(key) });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error.type).toBe('idempotency_key_reused');
    const otherPath = await tenant.request('POST', '/v1/contacts/batch', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(otherPath.body.error.type).toBe('idempotency_key_reused');
    const otherMethod = await tenant.request('PUT', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(otherMethod.body.error.type).toBe('idempotency_key_reused');
    expect(await contactCount(tenant, name)).toBe(1);
  });

  test('a malformed key is a 400 and nothing is executed', async () => {
    const name = `Bad key ${crypto.randomUUID()}`;
    for (const bad of ['x'.repeat(256), 'naïve', '""']) {
      const res = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(bad) });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe('bad_request');
    }
    expect(await contactCount(tenant, name)).toBe(0);
  });

  test('validation errors are not stored: the corrected request with the same key executes', async () => {
    const key = newKey();
    const name = `Fixed ${crypto.randomUUID()}`;
    const invalid = await tenant.request('POST', '/v1/contacts', { body: { type: 'client' }, headers: keyed(key) });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.type).toBe('validation_error');
    const fixed = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  test('a 412 precondition_failed is not stored: the same key with the fresh ETag executes (§24)', async () => {
    const reference = `IDEM-${crypto.randomUUID().slice(0, 8)}`;
    const created = await tenant.request('POST', '/v1/product-categories', { body: { name: 'Before', reference } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const read = await tenant.request('GET', `/v1/product-categories/${id}`);
    const fresh = read.headers.get('etag') as string;
    expect(fresh).toMatch(/^"[^"]+"$/);
    // Someone else changed it meanwhile: the ETag held is stale.
    const stale = fresh;
    const other = await tenant.request('PUT', `/v1/product-categories/${id}`, { body: { name: 'Changed by someone else' } });
    expect(other.status).toBe(200);
    const current = other.headers.get('etag') as string;
    expect(current).not.toBe(stale);

    const key = newKey();
    const body = { name: 'After' };
    const refused = await tenant.request('PUT', `/v1/product-categories/${id}`, { body, headers: { ...keyed(key), 'if-match': stale } });
    expect(refused.status).toBe(412);
    expect(refused.body.error.type).toBe('precondition_failed');
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    const stored = await stack.sql('select 1 from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, key]);
    expect(stored.rows).toHaveLength(0);
    expect((await tenant.request('GET', `/v1/product-categories/${id}`)).body.data.name).toBe('Changed by someone else');

    // The same key, the same body, the fresh ETag: executed, not a replayed 412.
    const retried = await tenant.request('PUT', `/v1/product-categories/${id}`, { body, headers: { ...keyed(key), 'if-match': current } });
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.data.name).toBe('After');
    const after = retried.headers.get('etag') as string;
    expect(after).not.toBe(current);

    // Its repeat replays the recorded answer with its ETag, before If-Match is looked at (the held tag is stale by now).
    const replayed = await tenant.request('PUT', `/v1/product-categories/${id}`, { body, headers: { ...keyed(key), 'if-match': current } });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('etag')).toBe(after);
    expect(replayed.text).toBe(retried.text);
    expect((await tenant.request('GET', `/v1/product-categories/${id}`)).headers.get('etag')).toBe(after);
  });

  test('a replayed creation carries the ETag of the recorded answer (§24)', async () => {
    const key = newKey();
    const body = { name: 'Tagged', reference: `TAG-${crypto.randomUUID().slice(0, 8)}` };
    const first = await tenant.request('POST', '/v1/product-categories', { body, headers: keyed(key) });
    expect(first.status).toBe(201);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const second = await tenant.request('POST', '/v1/product-categories', { body, headers: keyed(key) });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('etag')).toBe(etag);
    expect((await tenant.request('GET', `/v1/product-categories/${first.body.data.id}`)).headers.get('etag')).toBe(etag);
  });

  test('other 4xx answers of the service are stored and replayed', async () => {
    const key = newKey();
    const first = await tenant.request('DELETE', '/v1/contacts/no-such-contact', { headers: keyed(key) });
    expect(first.status).toBe(404);
    const second = await tenant.request('DELETE', '/v1/contacts/no-such-contact', { headers: keyed(key) });
    expect(second.status).toBe(404);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.error.request_id).toBe(first.body.error.request_id);
  });

  test('gateway-made errors (429, 504) are not stored; the key stays usable', async () => {
    const limited = await stack.createTenant({ limits: { write_per_minute: 1 } });
    expect((await limited.request('DELETE', '/v1/contacts/x')).status).toBe(404);
    const key = newKey();
    const refused = await limited.request('POST', '/v1/contacts', { body: { name: 'Z', type: 'client' }, headers: keyed(key) });
    expect(refused.status).toBe(429);
    const stored = await stack.sql('select 1 from gateway.idempotency_keys where tenant_id = $1', [limited.tenantId]);
    expect(stored.rows.length).toBe(0);

    const impatient = await stack.startGatewayReplica({ UPSTREAM_TIMEOUT_MS: '300' });
    const timeoutKey = newKey();
    const name = `Timeout ${crypto.randomUUID()}`;
    stack.processes.sales.child.kill('SIGSTOP');
    try {
      const timedOut = await send(impatient.url, 'POST', '/v1/contacts', {
        body: { name, type: 'client' },
        headers: { 'x-api-key': tenant.apiKey, ...keyed(timeoutKey) },
      });
      expect(timedOut.status).toBe(504);
    } finally {
      stack.processes.sales.child.kill('SIGCONT');
      await impatient.stop();
    }
    // The gateway released the key; the retry reaches sales, which wrote the contact once at most (§21):
    // whether the stopped request got through before the gateway gave up or not, one contact.
    const retried = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(timeoutKey) });
    expect(retried.status).toBe(201);
    expect(await contactCount(tenant, name)).toBe(1);
    const kept = await stack.sql('select 1 from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, timeoutKey]);
    expect(kept.rows).toHaveLength(1);
  });

  test('keys are scoped per tenant: tenant B reusing tenant A’s key executes normally', async () => {
    const other = await stack.createTenant();
    const key = newKey();
    const a = await tenant.request('POST', '/v1/contacts', { body: { name: 'Scoped A', type: 'client' }, headers: keyed(key) });
    const b = await other.request('POST', '/v1/contacts', { body: { name: 'Scoped B', type: 'lead' }, headers: keyed(key) });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.data.name).toBe('Scoped B');
  });

  test('a duplicate while the first is in flight → 409 idempotency_key_in_use with Retry-After, on another replica too', async () => {
    const key = newKey();
    const name = `Inflight ${crypto.randomUUID()}`;
    stack.processes.sales.child.kill('SIGSTOP');
    let first: Promise<Awaited<ReturnType<TestTenant['request']>>>;
    try {
      first = tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
      await untilClaimed(stack, tenant, key, 20);
      const duplicate = await send(replica.url, 'POST', '/v1/contacts', {
        body: { name, type: 'client' },
        headers: { 'x-api-key': tenant.apiKey, ...keyed(key) },
      });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.error.type).toBe('idempotency_key_in_use');
      expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      stack.processes.sales.child.kill('SIGCONT');
    }
    const done = await first;
    expect(done.status).toBe(201);
    const replayed = await send(replica.url, 'POST', '/v1/contacts', {
      body: { name, type: 'client' },
      headers: { 'x-api-key': tenant.apiKey, ...keyed(key) },
    });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(done.text);
    expect(await contactCount(tenant, name)).toBe(1);
  });

  test('the claim of a killed gateway expires after the upstream timeout plus margin, not 24 h later', async () => {
    const doomed = await stack.startGatewayReplica({ UPSTREAM_TIMEOUT_MS: '1000', IDEMPOTENCY_CLAIM_MARGIN_MS: '1000' });
    const key = newKey();
    const name = `Orphan ${crypto.randomUUID()}`;
    stack.processes.sales.child.kill('SIGSTOP');
    try {
      void send(doomed.url, 'POST', '/v1/contacts', {
        body: { name, type: 'client' },
        headers: { 'x-api-key': tenant.apiKey, ...keyed(key) },
      }).catch(() => {});
      await untilClaimed(stack, tenant, key, 20);
      await doomed.stop('SIGKILL');
    } finally {
      stack.processes.sales.child.kill('SIGCONT');
    }
    const during = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(during.status).toBe(409);
    const { rows } = await stack.sql<{ seconds: number }>(
      `select extract(epoch from locked_until - created_at) as seconds from gateway.idempotency_keys where tenant_id = $1 and key = $2`,
      [tenant.tenantId, key],
    );
    expect(Number(rows[0]?.seconds)).toBeCloseTo(2, 0);
    await sleep(2100);
    // The claim is taken over and the request forwarded; sales had written the contact for the dead
    // gateway's request and answers the key with that write (§21): 201, the same contact, not a second one.
    const after = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(after.status).toBe(201);
    expect(await contactCount(tenant, name)).toBe(1);
    const { rows: claims } = await stack.sql<{ status: number }>(
      'select status from gateway.idempotency_keys where tenant_id = $1 and key = $2',
      [tenant.tenantId, key],
    );
    expect(claims[0]?.status).toBe(201);
  });

  test('records are kept 24 h, then purged; an expired key executes anew', async () => {
    const key = newKey();
    const name = `Old ${crypto.randomUUID()}`;
    expect((await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) })).status).toBe(201);
    // Both records of the key age: the gateway's (§8) and the one sales keeps with the write (§21).
    const aged = async (hours: number) => {
      for (const table of ['gateway.idempotency_keys', 'sales.idempotency_records'])
        await stack.sql(`update ${table} set created_at = now() - $3 * interval '1 hour' where tenant_id = $1 and key = $2`, [
          tenant.tenantId,
          key,
          hours,
        ]);
    };
    await aged(23.9);
    const stillKept = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(stillKept.headers.get('idempotent-replayed')).toBe('true');

    await aged(24.1);
    const purger = await stack.startGatewayReplica({ PURGE_INTERVAL_MS: '200' });
    let remaining: number;
    try {
      remaining = await pollUntil(
        'the purge of the expired key',
        async () =>
          (await stack.sql('select 1 from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, key])).rows.length,
        (n) => n === 0,
        { timeoutMs: 5_000 },
      );
    } finally {
      await purger.stop();
    }
    expect(remaining).toBe(0);
    const anew = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' }, headers: keyed(key) });
    expect(anew.status).toBe(201);
    expect(anew.headers.get('idempotent-replayed')).toBeNull();
    expect(await contactCount(tenant, name)).toBe(2);
  });

  test('multipart uploads are matched on method and path only: another file with the same key replays the first answer', async () => {
    const created = await tenant.request('POST', '/v1/contacts', { body: { name: `Docs ${crypto.randomUUID()}`, type: 'client' } });
    const contactId = created.body.data.id;
    const key = newKey();
    const upload = (text: string) => {
      const form = new FormData();
      form.append('file', new File([text], 'notes.txt', { type: 'text/plain' }));
      return tenant.request('POST', `/v1/contacts/${contactId}/documents`, { raw: form, headers: keyed(key) });
    };
    const first = await upload('first file');
    expect(first.status).toBe(201);
    const second = await upload('a different file');
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    const docs = await tenant.request('GET', `/v1/contacts/${contactId}/documents`);
    expect(docs.body.pagination.total).toBe(1);
  });
});

describe('a keyed write: its grant and its claim in one statement (§7 before §8)', () => {
  test('the write bucket held: the one statement waiting is the grant together with the claim; released, the write goes through', async () => {
    const t = await stack.createTenant({ limits: { write_per_minute: 50 } });
    expect((await t.request('POST', '/v1/contacts', { body: { name: 'Warm', type: 'client' } })).status).toBe(201);
    const pg = (await import('pg')).default;
    const lock = new pg.Client({ connectionString: stack.databaseUrl });
    await lock.connect();
    try {
      await lock.query('begin');
      await lock.query('select 1 from gateway.rate_limits where bucket = $1 for update', [`tenant:${t.tenantId}:write`]);
      const holder = (await lock.query('select pg_backend_pid() as pid')).rows[0].pid as number;
      const key = newKey();
      const pending = t.request('POST', '/v1/contacts', { body: { name: `One ${key}`, type: 'client' }, headers: keyed(key) });
      // Only what waits for this bucket's lock: another statement on rate_limits may be waiting elsewhere.
      const blocked = async (): Promise<string | undefined> => {
        const { rows } = await stack.sql(
          `select query from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and $1 = any(pg_blocking_pids(pid))`,
          [holder],
        );
        return rows[0]?.query;
      };
      const waiting = await pollUntil('a statement to wait on the held lock of the write bucket', blocked, (query) => Boolean(query), {
        timeoutMs: 5_000,
        everyMs: 20,
      });
      // pg_stat_activity keeps the first 1024 bytes: the grant, as the first part of the claim's statement.
      expect(waiting?.trim()).toStartWith('with g as (insert into rate_limits');
      await lock.query('commit');
      const created = await pending;
      expect(created.status).toBe(201);
      expect(created.headers.get('ratelimit')).toMatch(/^"write";r=48;/);
      const replay = await t.request('POST', '/v1/contacts', { body: { name: `One ${key}`, type: 'client' }, headers: keyed(key) });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(created.text);
    } finally {
      await lock.end();
    }
  });

  test('over the limit: 429 before the body or key is judged, and the key is not claimed', async () => {
    const t = await stack.createTenant({ limits: { write_per_minute: 1 } });
    const first = await t.request('POST', '/v1/contacts', { body: { name: 'Only one', type: 'client' }, headers: keyed(newKey()) });
    expect(first.status).toBe(201);
    const key = newKey();
    const refused = await t.request('POST', '/v1/contacts', { body: { name: 'Second', type: 'client' }, headers: keyed(key) });
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe('rate_limited');
    const { rows } = await stack.sql('select 1 from gateway.idempotency_keys where tenant_id = $1 and key = $2', [t.tenantId, key]);
    expect(rows).toHaveLength(0);
    const malformed = await t.request('POST', '/v1/contacts', {
      raw: '{"name": ',
      headers: { ...keyed(newKey()), 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(429);
    const badKey = await t.request('POST', '/v1/contacts', { body: { name: 'Bad key', type: 'client' }, headers: keyed('') });
    expect(badKey.status).toBe(429);
  });

  test('within the limit, a malformed body under a key is 400 and spends the budget, as without a key', async () => {
    const t = await stack.createTenant({ limits: { write_per_minute: 2 } });
    const malformed = await t.request('POST', '/v1/contacts', {
      raw: '{"name": ',
      headers: { ...keyed(newKey()), 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('ratelimit')).toMatch(/^"write";r=1;/);
    const ok = await t.request('POST', '/v1/contacts', { body: { name: 'After', type: 'client' }, headers: keyed(newKey()) });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('ratelimit')).toMatch(/^"write";r=0;/);
  });
});

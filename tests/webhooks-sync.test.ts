// Issue 13 for webhooks: keyset cursors and Link headers on the endpoint list and the delivery log
// (contract §22), ETags and If-Match on webhook endpoints (§24), through the gateway.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ApiResponse, pollUntil, type Receiver, type Stack, sharedStack, startReceiver, type TestTenant } from '@crm/testing';

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await sharedStack();
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
});

/** The `rel` → URL map of a Link header. */
function links(res: ApiResponse): Record<string, string> {
  const header = res.headers.get('link') ?? '';
  return Object.fromEntries([...header.matchAll(/<([^>]*)>;\s*rel="(\w+)"/g)].map((m) => [m[2] as string, m[1] as string]));
}

const fieldsOf = (res: ApiResponse) => (res.body.error?.details ?? []).map((d: { field: string }) => d.field);

async function createEndpoint(t: TestTenant, name: string): Promise<{ id: number; secret: string }> {
  const res = await t.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/${name}`, description: name } });
  if (res.status !== 201) throw new Error(`POST /v1/webhooks → ${res.status} ${res.text}`);
  return res.body.data;
}

/**
 * Walks a list with cursors from its first page (page mode), calling `between` after each page
 * (it inserts and deletes rows); returns the ids in walk order.
 */
async function walk(
  t: TestTenant,
  first: string,
  between: (pageIds: number[], page: number, seen: number[]) => Promise<void>,
): Promise<number[]> {
  const seen: number[] = [];
  let path = first;
  for (let page = 0; ; page++) {
    expect(page).toBeLessThan(30);
    const res = await t.request('GET', path);
    expect(res.status, res.text).toBe(200);
    if (page > 0) expect(res.body.pagination).toMatchObject({ total: null, current_page: null, last_page: null });
    const ids = res.body.data.map((d: { id: number }) => d.id);
    seen.push(...ids);
    const next = res.body.pagination.next_cursor as string | null;
    if (!next) break;
    await between(ids, page, seen);
    path = `${first}&cursor=${encodeURIComponent(next)}`;
  }
  return seen;
}

describe('endpoint list: cursor walks (contract §22)', () => {
  for (const sort of ['id', '-id', 'created_at', '-created_at', 'updated_at']) {
    test(`sort=${sort}: inserts and deletes between pages — every endpoint that stayed is listed once, none twice`, async () => {
      const t = await stack.createTenant();
      const stable = new Set<number>();
      for (let i = 0; i < 10; i++) stable.add((await createEndpoint(t, `walk-${i}`)).id);
      const seen = await walk(t, `/v1/webhooks?per_page=3&sort=${sort}`, async (ids, page, seenSoFar) => {
        // Delete one already listed (an offset walk would skip a row), one not yet listed, and add
        // two (an offset walk would list a row twice).
        const listed = ids[0] as number;
        expect((await t.request('DELETE', `/v1/webhooks/${listed}`)).status).toBe(200);
        stable.delete(listed);
        if (page === 1) {
          const unseen = [...stable].find((id) => !seenSoFar.includes(id));
          if (unseen !== undefined) {
            expect((await t.request('DELETE', `/v1/webhooks/${unseen}`)).status).toBe(200);
            stable.delete(unseen);
          }
        }
        await createEndpoint(t, 'late-a');
        await createEndpoint(t, 'late-b');
      });
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of stable) expect(seen.filter((s) => s === id)).toEqual([id]);
      // Sorted as asked: the stable rows appear in the list's order.
      const ordered = seen.filter((id) => stable.has(id));
      const expected = [...ordered].sort((a, b) => a - b);
      if (sort.startsWith('-')) expected.reverse();
      expect(ordered).toEqual(expected);
    }, 60_000);
  }

  test('Link: page mode first/prev/next/last, cursor mode next only; next_cursor only while there is more', async () => {
    const t = await stack.createTenant();
    for (let i = 0; i < 5; i++) await createEndpoint(t, `link-${i}`);
    const page2 = await t.request('GET', '/v1/webhooks?per_page=2&page=2&sort=-created_at');
    expect(page2.body.pagination).toMatchObject({ total: 5, current_page: 2, last_page: 3, has_more: true });
    const rels = links(page2);
    expect(Object.keys(rels).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect(rels.next).toBe('/v1/webhooks?per_page=2&sort=-created_at&page=3');
    expect(rels.last).toBe('/v1/webhooks?per_page=2&sort=-created_at&page=3');
    const cursor = page2.body.pagination.next_cursor as string;
    const next = await t.request('GET', `/v1/webhooks?per_page=2&sort=-created_at&cursor=${cursor}`);
    expect(next.status).toBe(200);
    expect(next.body.pagination).toEqual({
      total: null,
      per_page: 2,
      current_page: null,
      last_page: null,
      has_more: false,
      next_cursor: null,
    });
    expect(next.headers.get('link')).toBeNull();
    const first = await t.request('GET', '/v1/webhooks?per_page=2');
    const firstCursor = first.body.pagination.next_cursor as string;
    const middle = await t.request('GET', `/v1/webhooks?per_page=2&cursor=${firstCursor}`);
    expect(links(middle)).toEqual({ next: `/v1/webhooks?per_page=2&cursor=${middle.body.pagination.next_cursor}` });
  });

  test('422 on cursor: another sort, another filter, with page, malformed', async () => {
    const t = await stack.createTenant();
    for (let i = 0; i < 3; i++) await createEndpoint(t, `bad-${i}`);
    const first = await t.request('GET', '/v1/webhooks?per_page=1&sort=created_at');
    const cursor = first.body.pagination.next_cursor as string;
    for (const path of [
      `/v1/webhooks?per_page=1&sort=id&cursor=${cursor}`,
      `/v1/webhooks?per_page=1&sort=created_at&updated_since=2020-01-01T00:00:00Z&cursor=${cursor}`,
      `/v1/webhooks?per_page=1&sort=created_at&page=2&cursor=${cursor}`,
      '/v1/webhooks?per_page=1&sort=created_at&cursor=not-a-cursor',
    ]) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(422);
      expect(fieldsOf(res)).toEqual(['cursor']);
    }
    expect((await t.request('GET', `/v1/webhooks?per_page=1&sort=created_at&cursor=${cursor}`)).status).toBe(200);
  });
});

describe('delivery log: cursor walks (contract §22)', () => {
  /** An endpoint with `count` delivered test events; returns its id. */
  async function endpointWithDeliveries(t: TestTenant, count: number): Promise<number> {
    const hook = await createEndpoint(t, `log-${crypto.randomUUID().slice(0, 8)}`);
    for (let i = 0; i < count; i++) expect((await t.request('POST', `/v1/webhooks/${hook.id}/test`)).status).toBe(202);
    await pollUntil(
      `${count} delivered test events`,
      async (): Promise<number> =>
        (await t.request('GET', `/v1/webhooks/${hook.id}/deliveries?status=delivered&per_page=1`)).body.pagination.total,
      (total) => total === count,
      { timeoutMs: 20_000, everyMs: 200 },
    );
    return hook.id;
  }

  /** Copies an attempt row as a new attempt (the log only grows by the worker; this is faster and exact). */
  async function copyAttempt(id: number, createdAt: string): Promise<number> {
    const { rows } = await stack.sql(
      `insert into webhooks.delivery_attempts (tenant_id, task_id, endpoint_id, event_id, event_type, attempt, status, status_code,
         error, response_excerpt, duration_ms, created_at, next_attempt_at)
       select tenant_id, task_id, endpoint_id, event_id, event_type, attempt + 1, status, status_code, error, response_excerpt,
         duration_ms, ${createdAt}, next_attempt_at from webhooks.delivery_attempts where id = $1 returning id`,
      [id],
    );
    return Number(rows[0].id);
  }

  for (const sort of ['id', '-id', 'created_at', '-created_at']) {
    test(`sort=${sort}: attempts added and removed between pages — every stable attempt once, none twice`, async () => {
      const t = await stack.createTenant();
      const hookId = await endpointWithDeliveries(t, 8);
      const all = await t.request('GET', `/v1/webhooks/${hookId}/deliveries?per_page=100`);
      const stable = new Set<number>(all.body.data.map((d: { id: number }) => d.id));
      expect(stable.size).toBe(8);
      const seen = await walk(t, `/v1/webhooks/${hookId}/deliveries?per_page=3&sort=${sort}`, async (ids) => {
        const listed = ids[0] as number;
        await copyAttempt(listed, `now() - interval '1 hour'`); // sorts before the position by created_at
        await copyAttempt(listed, 'now()');
        await stack.sql('delete from webhooks.delivery_attempts where id = $1', [listed]);
        stable.delete(listed);
      });
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of stable) expect(seen.filter((s) => s === id)).toEqual([id]);
    }, 60_000);
  }

  test('a cursor is bound to its endpoint and filters; Link next in cursor mode', async () => {
    const t = await stack.createTenant();
    const hookA = await endpointWithDeliveries(t, 3);
    const hookB = await endpointWithDeliveries(t, 3);
    const first = await t.request('GET', `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered`);
    expect(links(first)).toMatchObject({
      first: `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered&page=1`,
      next: `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered&page=2`,
    });
    const cursor = first.body.pagination.next_cursor as string;
    const same = await t.request('GET', `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered&cursor=${cursor}`);
    expect(same.status).toBe(200);
    expect(same.body.pagination).toMatchObject({ total: null, has_more: true });
    expect(links(same)).toEqual({
      next: `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered&cursor=${same.body.pagination.next_cursor}`,
    });
    for (const path of [
      `/v1/webhooks/${hookB}/deliveries?per_page=1&status=delivered&cursor=${cursor}`,
      `/v1/webhooks/${hookA}/deliveries?per_page=1&status=failed&cursor=${cursor}`,
      `/v1/webhooks/${hookA}/deliveries?per_page=1&cursor=${cursor}`,
      `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered&sort=created_at&cursor=${cursor}`,
      `/v1/webhooks/${hookA}/deliveries?per_page=1&status=delivered&page=1&cursor=${cursor}`,
    ]) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(422);
      expect(fieldsOf(res)).toEqual(['cursor']);
    }
  }, 60_000);
});

describe('webhook endpoints: ETag and If-Match (contract §24)', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await stack.createTenant();
  });

  const get = (id: number) => t.request('GET', `/v1/webhooks/${id}`);

  test('GET, POST, PUT and PATCH carry a strong ETag; If-None-Match → 304 without a body; it changes with the endpoint', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/etag` } });
    expect(created.headers.get('etag')).toMatch(/^"[^"]+"$/);
    const id = created.body.data.id;
    const read = await get(id);
    const etag = read.headers.get('etag') as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await get(id)).headers.get('etag')).toBe(etag);
    const notModified = await t.request('GET', `/v1/webhooks/${id}`, { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await t.request('GET', `/v1/webhooks/${id}`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    const put = await t.request('PUT', `/v1/webhooks/${id}`, { body: { description: 'changed' } });
    expect(put.status).toBe(200);
    const putTag = put.headers.get('etag');
    expect(putTag).not.toBe(etag);
    expect((await get(id)).headers.get('etag')).toBe(putTag);
    const patch = await t.request('PATCH', `/v1/webhooks/${id}`, { body: { enabled: false } });
    expect(patch.headers.get('etag')).not.toBe(putTag);
    expect((await get(id)).headers.get('etag')).toBe(patch.headers.get('etag'));
    // A secret rotation is a new version too.
    expect((await t.request('POST', `/v1/webhooks/${id}/rotate-secret`)).status).toBe(200);
    expect((await get(id)).headers.get('etag')).not.toBe(patch.headers.get('etag'));
  });

  test('If-Match: stale → 412 and nothing changes; current, the creation ETag and * → 200', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/if-match`, description: 'v1' } });
    const id = created.body.data.id;
    // The creation answer (with the secret) names the same version as GET.
    const byCreation = await t.request('PUT', `/v1/webhooks/${id}`, {
      body: { description: 'v2' },
      headers: { 'if-match': created.headers.get('etag') as string },
    });
    expect(byCreation.status).toBe(200);
    const stale = created.headers.get('etag') as string;
    const before = await get(id);
    for (const method of ['PUT', 'PATCH']) {
      const refused = await t.request(method, `/v1/webhooks/${id}`, { body: { description: 'lost' }, headers: { 'if-match': stale } });
      expect(refused.status).toBe(412);
      expect(refused.body.error.type).toBe('precondition_failed');
    }
    const deleteRefused = await t.request('DELETE', `/v1/webhooks/${id}`, { headers: { 'if-match': stale } });
    expect(deleteRefused.status).toBe(412);
    const after = await get(id);
    expect(after.body).toEqual(before.body);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    const { rows } = await stack.sql('select description, updated_at from webhooks.endpoints where id = $1', [id]);
    expect(rows[0].description).toBe('v2');
    expect(new Date(rows[0].updated_at).toISOString()).toBe(before.body.data.updated_at);

    const current = before.headers.get('etag') as string;
    const accepted = await t.request('PUT', `/v1/webhooks/${id}`, { body: { description: 'v3' }, headers: { 'if-match': current } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.description).toBe('v3');
    // A list of tags matches when one of them does; a weak tag never does for If-Match.
    const listed = await t.request('PATCH', `/v1/webhooks/${id}`, {
      body: { description: 'v4' },
      headers: { 'if-match': `"nope", ${accepted.headers.get('etag')}` },
    });
    expect(listed.status).toBe(200);
    const weak = await t.request('PATCH', `/v1/webhooks/${id}`, {
      body: { description: 'v5' },
      headers: { 'if-match': `W/${listed.headers.get('etag')}` },
    });
    expect(weak.status).toBe(412);
    const star = await t.request('PUT', `/v1/webhooks/${id}`, { body: { description: 'v6' }, headers: { 'if-match': '*' } });
    expect(star.status).toBe(200);
    expect((await t.request('DELETE', `/v1/webhooks/${id}`, { headers: { 'if-match': star.headers.get('etag') as string } })).status).toBe(
      200,
    );
    // Gone: 404 whatever the If-Match, `*` included.
    expect((await t.request('DELETE', `/v1/webhooks/${id}`, { headers: { 'if-match': '*' } })).status).toBe(404);
    expect((await t.request('PUT', `/v1/webhooks/${id}`, { body: {}, headers: { 'if-match': '*' } })).status).toBe(404);
  });

  test('a body that fails validation is 422 before If-Match is looked at; another tenant is 404', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/order` } });
    const id = created.body.data.id;
    const invalid = await t.request('PUT', `/v1/webhooks/${id}`, { body: { events: ['nope.nope'] }, headers: { 'if-match': '"stale"' } });
    expect(invalid.status).toBe(422);
    const other = await stack.createTenant();
    expect((await other.request('PUT', `/v1/webhooks/${id}`, { body: {}, headers: { 'if-match': '*' } })).status).toBe(404);
    expect((await other.request('DELETE', `/v1/webhooks/${id}`, { headers: { 'if-match': '*' } })).status).toBe(404);
  });

  test('two concurrent writes with the same ETag: exactly one 200 and one 412', async () => {
    for (let round = 0; round < 4; round++) {
      const id = (await createEndpoint(t, `race-${round}`)).id;
      const etag = (await get(id)).headers.get('etag') as string;
      const headers = { 'if-match': etag };
      const answers = await Promise.all([
        t.request('PUT', `/v1/webhooks/${id}`, { body: { description: 'first writer' }, headers }),
        t.request('PUT', `/v1/webhooks/${id}`, { body: { description: 'second writer' }, headers }),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200) as ApiResponse;
      expect((await get(id)).body.data.description).toBe(winner.body.data.description);
      // A delete racing an update with the same ETag: one of them wins, never both (an update that
      // comes after the delete finds nothing: 404).
      const tag = (await get(id)).headers.get('etag') as string;
      const [deleted, patched] = await Promise.all([
        t.request('DELETE', `/v1/webhooks/${id}`, { headers: { 'if-match': tag } }),
        t.request('PATCH', `/v1/webhooks/${id}`, { body: { description: 'late' }, headers: { 'if-match': tag } }),
      ]);
      if (deleted?.status === 200) expect([404, 412]).toContain(patched?.status as number);
      else {
        expect(deleted?.status).toBe(412);
        expect(patched?.status).toBe(200);
      }
    }
  });

  test('a 412 under an Idempotency-Key does not burn the key: the retry with the fresh ETag succeeds, then replays', async () => {
    const id = (await createEndpoint(t, 'idempotent')).id;
    const stale = (await get(id)).headers.get('etag') as string;
    expect((await t.request('PUT', `/v1/webhooks/${id}`, { body: { description: 'moved on' } })).status).toBe(200);
    const key = `hook-${crypto.randomUUID()}`;
    const body = { description: 'keyed write' };
    const refused = await t.request('PUT', `/v1/webhooks/${id}`, { body, headers: { 'idempotency-key': key, 'if-match': stale } });
    expect(refused.status).toBe(412);
    expect((await get(id)).body.data.description).toBe('moved on');
    const fresh = (await get(id)).headers.get('etag') as string;
    const retried = await t.request('PUT', `/v1/webhooks/${id}`, { body, headers: { 'idempotency-key': key, 'if-match': fresh } });
    expect(retried.status).toBe(200);
    expect(retried.body.data.description).toBe('keyed write');
    const replayed = await t.request('PUT', `/v1/webhooks/${id}`, { body, headers: { 'idempotency-key': key, 'if-match': stale } });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('etag')).toBe(retried.headers.get('etag'));
  });
});

// Issue 13 on sales' opportunities and orders, through the gateway: cursor walks and Link headers
// on both lists (contract §22) and conditional requests on single opportunities and orders (§24),
// including If-Match under concurrency and next to Idempotency-Key.
import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { type Answer, expectExactWalk, links, ok, params, walk } from './list-walk.ts';
import { createOrder, OWNER, orderBody, orderEvents, orderWorld } from './orders-fixtures.ts';
import { settledEvents } from './sales-feed.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 180_000);

/** A tenant with its owner and the contact "Acme Ltd": enough for opportunities and orders without lines. */
async function salesTenant() {
  const tenant = await stack.createTenant({ users: [{ email: OWNER, name: 'Ann Lee' }] });
  const contact = ok(await tenant.request('POST', '/v1/contacts', { body: { name: 'Acme Ltd', type: 'client' } }), 201).data;
  return { tenant, contactId: contact.id as number };
}

/** Every page of a list in page mode at per_page=100 (the finished order to compare a walk with). */
async function finalList(tenant: TestTenant, path: string, key: (item: any) => string): Promise<string[]> {
  const keys: string[] = [];
  for (let page = 1; ; page++) {
    const body = ok(await tenant.request('GET', `${path}&per_page=100&page=${page}`));
    keys.push(...body.data.map(key));
    if (!body.pagination.has_more) return keys;
  }
}

describe('order list cursor walks (§22)', () => {
  const cases = [
    { sort: 'id', filter: '' },
    { sort: '-created_at', filter: '' },
    { sort: 'reference', filter: '' },
    { sort: '-date_limit', filter: '' },
    { sort: '-created_at', filter: '&state=2' },
  ];
  for (const { sort, filter } of cases) {
    test(`sort=${sort}${filter}: inserts, updates and deletes between pages; every stable order once, none twice`, async () => {
      const { tenant } = await salesTenant();
      const initial: { reference: string; state: number }[] = [];
      for (let b = 0; b < 3; b++) {
        // Three batches (ties on created_at inside each), few distinct dates (ties on date_limit), two states.
        const bodies = Array.from({ length: 8 }, (_, i) =>
          orderBody({ reference: `O-${b}${i}`, date_limit: `2026-12-1${(b * 8 + i) % 3}`, state: 1 + ((b + i) % 2) }),
        );
        const made = ok(await tenant.request('POST', '/v1/orders/batch', { body: { data: bodies } }), 201).data;
        initial.push(...made.map((o: any) => ({ reference: o.reference, state: o.state })));
      }
      const deleted = new Set<string>();
      let inserted = 0;
      const seen = await walk(
        tenant,
        `/v1/orders?per_page=${filter ? 3 : 5}&sort=${sort}${filter}`,
        (o) => o.reference,
        async (step) => {
          // New orders on both sides of the walk's position (reference, date and state too), and deletes on both sides.
          for (const [prefix, date] of [
            ['A', '2026-01-01'],
            ['O-1', '2026-12-11'],
            ['Z', '2027-06-30'],
          ]) {
            inserted += 1;
            await createOrder(tenant, { reference: `${prefix}-new-${inserted}`, date_limit: date, state: 1 + (inserted % 2) });
          }
          for (const index of [step, initial.length - 1 - step * 2]) {
            const victim = initial[index]?.reference as string;
            if (deleted.has(victim)) continue;
            ok(await tenant.request('DELETE', `/v1/orders/${victim}`));
            deleted.add(victim);
          }
          // An update that moves no sort key of this walk (updated_at only).
          const touched = initial[12 + (step % 6)]?.reference as string;
          if (!deleted.has(touched)) ok(await tenant.request('PUT', `/v1/orders/${touched}`, { body: { comments: `step ${step}` } }));
        },
      );
      expect(deleted.size).toBeGreaterThan(4);
      const stable = initial.filter((o) => !deleted.has(o.reference) && (filter === '' || o.state === 2)).map((o) => o.reference);
      expect(stable.length).toBeGreaterThan(5);
      expectExactWalk(seen, stable, await finalList(tenant, `/v1/orders?sort=${sort}${filter}`, (o) => o.reference));
    });
  }
});

describe('opportunity list cursor walks (§22)', () => {
  const cases = [
    { sort: 'id', filter: '' },
    { sort: '-name', filter: '' },
    { sort: 'created_at', filter: '' },
    { sort: '-created_at', filter: '' },
    { sort: 'name', filter: '&status=won' },
  ];
  for (const { sort, filter } of cases) {
    test(`sort=${sort}${filter}: inserts, updates and deletes between pages; every stable opportunity once, none twice`, async () => {
      const { tenant } = await salesTenant();
      const initial: { id: number; status: string }[] = [];
      for (let b = 0; b < 3; b++) {
        // Few distinct names (ties broken by id), three batches (ties on created_at), two statuses.
        const bodies = Array.from({ length: 8 }, (_, i) => ({
          name: `N${(b * 8 + i) % 3}`,
          enterprise_identifier: 'Acme Ltd',
          status: (b + i) % 2 === 0 ? 'won' : 'open',
        }));
        const made = ok(await tenant.request('POST', '/v1/opportunities/batch', { body: { data: bodies } }), 201).data;
        initial.push(...made.map((o: any) => ({ id: o.id, status: o.status })));
      }
      const deleted = new Set<number>();
      let inserted = 0;
      const seen = await walk(
        tenant,
        `/v1/opportunities?per_page=${filter ? 3 : 5}&sort=${sort}${filter}`,
        (o) => String(o.id),
        async (step) => {
          for (const name of ['A-new', 'N1', 'Z-new']) {
            inserted += 1;
            const body = { name, enterprise_identifier: 'Acme Ltd', status: inserted % 2 === 0 ? 'won' : 'open' };
            ok(await tenant.request('POST', '/v1/opportunities', { body }), 201);
          }
          for (const index of [step, initial.length - 1 - step * 2]) {
            const victim = initial[index]?.id as number;
            if (deleted.has(victim)) continue;
            ok(await tenant.request('DELETE', `/v1/opportunities/${victim}`));
            deleted.add(victim);
          }
          const touched = initial[12 + (step % 6)]?.id as number;
          if (!deleted.has(touched)) ok(await tenant.request('PATCH', `/v1/opportunities/${touched}`, { body: { amount: step + 1 } }));
        },
      );
      expect(deleted.size).toBeGreaterThan(4);
      const stable = initial.filter((o) => !deleted.has(o.id) && (filter === '' || o.status === 'won')).map((o) => String(o.id));
      expect(stable.length).toBeGreaterThan(5);
      expectExactWalk(seen, stable, await finalList(tenant, `/v1/opportunities?sort=${sort}${filter}`, (o) => String(o.id)));
    });
  }
});

describe('Link headers, next_cursor and cursor errors (§22)', () => {
  test('orders: page mode has first, prev, next, last with the request parameters; cursor mode next only', async () => {
    const { tenant, contactId } = await salesTenant();
    const bodies = Array.from({ length: 7 }, (_, i) => orderBody({ reference: `L-${i}`, state: 2 }));
    ok(await tenant.request('POST', '/v1/orders/batch', { body: { data: [...bodies, orderBody({ reference: 'OTHER', state: 1 })] } }), 201);
    const base = `/v1/orders?per_page=3&sort=-reference&state=2&enterprise_id=${contactId}`;
    const expected = { per_page: '3', sort: '-reference', state: '2', enterprise_id: String(contactId) };

    const first = await tenant.request('GET', base);
    expect(ok(first).pagination).toEqual({
      total: 7,
      per_page: 3,
      current_page: 1,
      last_page: 3,
      has_more: true,
      next_cursor: expect.any(String),
    });
    const firstLinks = links(first);
    expect(Object.keys(firstLinks).sort()).toEqual(['first', 'last', 'next']);
    for (const url of Object.values(firstLinks)) {
      expect(url.startsWith('/v1/orders?')).toBe(true);
      expect(params(url)).toMatchObject(expected);
    }
    expect([firstLinks.first, firstLinks.next, firstLinks.last].map((u) => params(u as string).page)).toEqual(['1', '2', '3']);

    const middle = await tenant.request('GET', firstLinks.next as string);
    expect(ok(middle).data.map((o: any) => o.reference)).toEqual(['L-3', 'L-2', 'L-1']);
    expect(Object.keys(links(middle)).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect(params(links(middle).prev as string).page).toBe('1');
    const last = await tenant.request('GET', links(middle).last as string);
    expect(ok(last).pagination).toMatchObject({ current_page: 3, has_more: false, next_cursor: null });
    expect(Object.keys(links(last)).sort()).toEqual(['first', 'last', 'prev']);

    const cursorPage = await tenant.request('GET', `${base}&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
    expect(ok(cursorPage).data.map((o: any) => o.reference)).toEqual(['L-3', 'L-2', 'L-1']);
    expect(cursorPage.body.pagination).toEqual({
      total: null,
      per_page: 3,
      current_page: null,
      last_page: null,
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect(Object.keys(links(cursorPage))).toEqual(['next']);
    expect(params(links(cursorPage).next as string)).toEqual({ ...expected, cursor: cursorPage.body.pagination.next_cursor });
    const end = await tenant.request('GET', links(cursorPage).next as string);
    expect(ok(end).data.map((o: any) => o.reference)).toEqual(['L-0']);
    expect(end.body.pagination).toMatchObject({ has_more: false, next_cursor: null, total: null });
    expect(end.headers.get('link')).toBeNull();
    // The orders come in full in cursor mode too (lines, states).
    expect(end.body.data[0]).toEqual(ok(await tenant.request('GET', '/v1/orders/L-0')).data);
  });

  test('opportunities: Link rels in both modes', async () => {
    const { tenant } = await salesTenant();
    const data = Array.from({ length: 5 }, (_, i) => ({ name: `Deal ${i}`, enterprise_identifier: 'Acme Ltd' }));
    const made = ok(await tenant.request('POST', '/v1/opportunities/batch', { body: { data } }), 201).data;
    const page2 = await tenant.request('GET', '/v1/opportunities?per_page=2&page=2&q=deal');
    expect(ok(page2).pagination).toMatchObject({ total: 5, current_page: 2, last_page: 3, has_more: true });
    const rels = links(page2);
    expect(Object.keys(rels).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect(Object.values(rels).map((u) => params(u).page)).toEqual(['1', '1', '3', '3']);
    for (const url of Object.values(rels)) expect(params(url)).toMatchObject({ per_page: '2', q: 'deal' });
    const cursorPage = await tenant.request('GET', `/v1/opportunities?per_page=2&q=deal&cursor=${page2.body.pagination.next_cursor}`);
    expect(ok(cursorPage).data.map((o: any) => o.id)).toEqual([made[4].id]);
    expect(cursorPage.body.pagination).toEqual({
      total: null,
      per_page: 2,
      current_page: null,
      last_page: null,
      has_more: false,
      next_cursor: null,
    });
    expect(cursorPage.headers.get('link')).toBeNull();
  });

  test('a cursor is refused with another sort or filters, with page, or malformed → 422 on cursor', async () => {
    const { tenant, contactId } = await salesTenant();
    const orders = Array.from({ length: 3 }, (_, i) => orderBody({ reference: `C-${i}`, state: 2 }));
    ok(await tenant.request('POST', '/v1/orders/batch', { body: { data: orders } }), 201);
    const deals = Array.from({ length: 3 }, (_, i) => ({ name: `Deal ${i}`, enterprise_identifier: 'Acme Ltd', status: 'won' }));
    ok(await tenant.request('POST', '/v1/opportunities/batch', { body: { data: deals } }), 201);
    const since = '2020-01-01T00:00:00Z';
    const refused = async (path: string) => {
      const res = await tenant.request('GET', path);
      if (res.status !== 422) throw new Error(`${path}: expected 422, got ${res.status} ${res.text}`);
      expect(res.body.error.type).toBe('validation_error');
      expect(res.body.error.details.map((d: any) => d.field)).toEqual(['cursor']);
      return res.body.error.details[0].message as string;
    };

    const lists = [
      {
        path: '/v1/orders',
        same: `sort=-created_at&state=2&enterprise_id=${contactId}&updated_since=${since}`,
        // The same sort and filters in another order (and another per_page) are fine.
        reordered: `enterprise_id=${contactId}&updated_since=${since}&state=2&sort=-created_at&per_page=2`,
        others: [
          `sort=created_at&state=2&enterprise_id=${contactId}&updated_since=${since}`,
          `sort=-created_at&state=1&enterprise_id=${contactId}&updated_since=${since}`,
          `sort=-created_at&enterprise_id=${contactId}&updated_since=${since}`,
          `sort=-created_at&state=2&enterprise_id=${contactId}&updated_since=2021-01-01T00:00:00Z`,
          `sort=-created_at&state=2&enterprise_id=${contactId}&updated_since=${since}&opportunity_id=1`,
        ],
      },
      {
        path: '/v1/opportunities',
        same: `sort=name&status=won&q=deal&updated_since=${since}`,
        reordered: `q=deal&status=won&updated_since=${since}&sort=name&per_page=2`,
        others: [
          `sort=-name&status=won&q=deal&updated_since=${since}`,
          `sort=name&status=open&q=deal&updated_since=${since}`,
          `sort=name&status=won&q=dea&updated_since=${since}`,
          `sort=name&status=won&updated_since=${since}`,
          `sort=name&status=won&q=deal&updated_since=${since}&enterprise_id=${contactId}`,
        ],
      },
    ];
    for (const { path, same, reordered, others } of lists) {
      const start = ok(await tenant.request('GET', `${path}?per_page=1&${same}`));
      const cursor = encodeURIComponent(start.pagination.next_cursor);
      expect(ok(await tenant.request('GET', `${path}?${reordered}&cursor=${cursor}`)).data).toHaveLength(2);
      for (const other of others)
        expect(await refused(`${path}?per_page=1&${other}&cursor=${cursor}`)).toContain('another sort or other filters');
      expect(await refused(`${path}?per_page=1&${same}&cursor=${cursor}&page=2`)).toBe('cannot be combined with page');
      expect(await refused(`${path}?per_page=1&${same}&cursor=${cursor}&page=1`)).toBe('cannot be combined with page');
      for (const bad of ['abc', 'not!base64', encodeURIComponent(Buffer.from('{"v":1}').toString('base64url')), 'x'.repeat(2048)])
        expect(await refused(`${path}?${same}&cursor=${bad}`)).toBe('is not a valid cursor');
    }
  });
});

describe('ETags and conditional requests on orders (§24)', () => {
  test('ETag on POST/GET/PUT; If-None-Match → 304; stale If-Match → 412 and nothing changes; current or * → 200', async () => {
    const { tenant } = await orderWorld(stack);
    const created = await tenant.request('POST', '/v1/orders', {
      body: orderBody({ reference: 'E-1', products: [{ reference: 'WIDGET' }] }),
    });
    ok(created, 201);
    const etag0 = created.headers.get('etag') as string;
    expect(etag0).toMatch(/^"[^"]+"$/);
    expect((await tenant.request('GET', '/v1/orders/E-1')).headers.get('etag')).toBe(etag0);
    const notModified = await tenant.request('GET', '/v1/orders/E-1', { headers: { 'if-none-match': etag0 } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag0);
    expect((await tenant.request('GET', '/v1/orders/E-1', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    const put = await tenant.request('PUT', '/v1/orders/E-1', { body: { state: 2 }, headers: { 'if-match': etag0 } });
    expect(ok(put).data.states.map((s: any) => s.state)).toEqual([1, 2]);
    const etag1 = put.headers.get('etag') as string;
    expect(etag1).not.toBe(etag0);
    expect((await tenant.request('GET', '/v1/orders/E-1')).headers.get('etag')).toBe(etag1);
    expect((await tenant.request('GET', '/v1/orders/E-1', { headers: { 'if-none-match': etag0 } })).status).toBe(200);

    // Stale: 412 on every write; the order (lines, states) and the events stay as they were.
    const before = ok(await tenant.request('GET', '/v1/orders/E-1'));
    const eventsBefore = await orderEvents(tenant);
    for (const [method, body] of [
      ['PUT', { state: 3, products: [{ reference: 'GADGET' }] }],
      ['PATCH', { comments: 'lost' }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await tenant.request(method, '/v1/orders/E-1', { body, headers: { 'if-match': etag0 } });
      expect(stale.status).toBe(412);
      expect(stale.body.error.type).toBe('precondition_failed');
    }
    expect(ok(await tenant.request('GET', '/v1/orders/E-1'))).toEqual(before);
    expect(await orderEvents(tenant)).toEqual(eventsBefore);
    // A missing order is 404 whatever the If-Match; an invalid body is still 422 before the precondition.
    expect((await tenant.request('PUT', '/v1/orders/NOPE', { body: { state: 1 }, headers: { 'if-match': '*' } })).status).toBe(404);
    expect((await tenant.request('PUT', '/v1/orders/E-1', { body: { state: -1 }, headers: { 'if-match': etag0 } })).status).toBe(422);

    const patched = await tenant.request('PATCH', '/v1/orders/E-1', {
      body: { comments: 'kept' },
      headers: { 'if-match': `"x", ${etag1}` },
    });
    expect(ok(patched).data.comments).toBe('kept');
    const star = await tenant.request('PUT', '/v1/orders/E-1', {
      body: { products: [{ reference: 'GADGET' }] },
      headers: { 'if-match': '*' },
    });
    expect(ok(star).data.total).toBe(19.99);
    expect(star.headers.get('etag')).not.toBe(patched.headers.get('etag'));
    const removed = await tenant.request('DELETE', '/v1/orders/E-1', { headers: { 'if-match': star.headers.get('etag') as string } });
    expect(ok(removed)).toEqual({ deleted: true });
    expect((await tenant.request('GET', '/v1/orders/E-1')).status).toBe(404);
  });

  test('concurrent PUTs with one ETag: exactly one wins; the losers append no state and write no event', async () => {
    const { tenant } = await orderWorld(stack);
    const order = await createOrder(tenant, { reference: 'RACE-1', products: [{ reference: 'WIDGET' }] });
    const etag = (await tenant.request('GET', '/v1/orders/RACE-1')).headers.get('etag') as string;
    const eventsBefore = await orderEvents(tenant);
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        tenant.request('PUT', '/v1/orders/RACE-1', { body: { state: 10 + i, comments: `writer ${i}` }, headers: { 'if-match': etag } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412]);
    for (const loser of answers.filter((a) => a.status === 412)) expect(loser.body.error.type).toBe('precondition_failed');
    const winner = answers.find((a) => a.status === 200) as Answer;
    const now = ok(await tenant.request('GET', '/v1/orders/RACE-1')).data;
    expect(now).toEqual(winner.body.data);
    expect(now.states).toHaveLength(order.states.length + 1);
    const added = (await orderEvents(tenant)).slice(eventsBefore.length);
    expect(added.map((e) => e.type)).toEqual(['order.updated', 'order.state_changed']);
    expect(added.map((e) => e.data)).toEqual([now, { ...now, previous_state: 1 }]);
  });

  test('a 412 does not burn its Idempotency-Key: the same key with a fresh ETag → 200, then replayed', async () => {
    const { tenant } = await orderWorld(stack);
    await createOrder(tenant, { reference: 'IDEM-1' });
    const etag0 = (await tenant.request('GET', '/v1/orders/IDEM-1')).headers.get('etag') as string;
    ok(await tenant.request('PATCH', '/v1/orders/IDEM-1', { body: { comments: 'moved on' } }));
    const etag1 = (await tenant.request('GET', '/v1/orders/IDEM-1')).headers.get('etag') as string;
    const key = crypto.randomUUID();
    const body = { state: 4 };
    const stale = await tenant.request('PUT', '/v1/orders/IDEM-1', { body, headers: { 'if-match': etag0, 'idempotency-key': key } });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('idempotent-replayed')).toBeNull();
    const fresh = await tenant.request('PUT', '/v1/orders/IDEM-1', { body, headers: { 'if-match': etag1, 'idempotency-key': key } });
    expect(ok(fresh).data.state).toBe(4);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    // The key now holds the 200: a repeat answers it (with its ETag) before If-Match is looked at.
    const replay = await tenant.request('PUT', '/v1/orders/IDEM-1', { body, headers: { 'if-match': etag0, 'idempotency-key': key } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(fresh.body);
    expect(replay.headers.get('etag')).toBe(fresh.headers.get('etag'));
    expect(ok(await tenant.request('GET', '/v1/orders/IDEM-1')).data.states.map((s: any) => s.state)).toEqual([1, 4]);
  });
});

describe('ETags and conditional requests on opportunities (§24)', () => {
  test('ETag on POST/GET/PUT; If-None-Match → 304; stale If-Match → 412 and nothing changes; current or * → 200', async () => {
    const { tenant } = await salesTenant();
    const created = await tenant.request('POST', '/v1/opportunities', { body: { name: 'Deal', enterprise_identifier: 'Acme Ltd' } });
    const id = ok(created, 201).data.id;
    const path = `/v1/opportunities/${id}`;
    const etag0 = created.headers.get('etag') as string;
    expect(etag0).toMatch(/^"[^"]+"$/);
    expect((await tenant.request('GET', path)).headers.get('etag')).toBe(etag0);
    const notModified = await tenant.request('GET', path, { headers: { 'if-none-match': etag0 } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');

    const put = await tenant.request('PUT', path, { body: { amount: 10 }, headers: { 'if-match': etag0 } });
    expect(ok(put).data.amount).toBe(10);
    const etag1 = put.headers.get('etag') as string;
    expect(etag1).not.toBe(etag0);
    expect((await tenant.request('GET', path)).headers.get('etag')).toBe(etag1);

    const before = ok(await tenant.request('GET', path));
    const published = async () => (await settledEvents(tenant)).map((e) => e.id);
    const eventsBefore = await published();
    for (const [method, body] of [
      ['PUT', { amount: 99 }],
      ['PATCH', { status: 'lost' }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await tenant.request(method, path, { body, headers: { 'if-match': etag0 } });
      expect(stale.status).toBe(412);
      expect(stale.body.error.type).toBe('precondition_failed');
    }
    expect(ok(await tenant.request('GET', path))).toEqual(before);
    expect(await published()).toEqual(eventsBefore);
    expect((await tenant.request('DELETE', '/v1/opportunities/2147483647', { headers: { 'if-match': '*' } })).status).toBe(404);

    const star = await tenant.request('PATCH', path, { body: { status: 'won' }, headers: { 'if-match': '*' } });
    expect(ok(star).data.status).toBe('won');
    expect((await tenant.request('DELETE', path, { headers: { 'if-match': etag1 } })).status).toBe(412);
    ok(await tenant.request('DELETE', path, { headers: { 'if-match': star.headers.get('etag') as string } }));
    expect((await tenant.request('GET', path)).status).toBe(404);
  });

  test('concurrent PUTs with one ETag: exactly one wins, with one event', async () => {
    const { tenant } = await salesTenant();
    const id = ok(await tenant.request('POST', '/v1/opportunities', { body: { name: 'Race', enterprise_identifier: 'Acme Ltd' } }), 201)
      .data.id;
    const etag = (await tenant.request('GET', `/v1/opportunities/${id}`)).headers.get('etag') as string;
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        tenant.request('PUT', `/v1/opportunities/${id}`, { body: { name: `Writer ${i}`, amount: i }, headers: { 'if-match': etag } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412]);
    const winner = answers.find((a) => a.status === 200) as Answer;
    expect(ok(await tenant.request('GET', `/v1/opportunities/${id}`)).data).toEqual(winner.body.data);
    expect((await settledEvents(tenant)).filter((e) => e.type === 'opportunity.updated')).toHaveLength(1);
  });
});

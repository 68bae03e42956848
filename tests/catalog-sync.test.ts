// Issue 13 on the catalog, through the gateway: cursor walks and Link headers on both lists
// (contract §22), conditional requests on products and categories (§24) and the products batch
// upsert (§23).
import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { ofType, product, settledFeed } from './catalog-fixtures.ts';
import { type Answer, expectExactWalk, links, ok, params, walk } from './list-walk.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

/** A tenant with the root categories `tools` and `paint`. */
async function tenantWithCategories() {
  const tenant = await stack.createTenant();
  const tools = ok(await tenant.request('POST', '/v1/product-categories', { body: { name: 'Tools', reference: 'tools' } }), 201).data;
  const paint = ok(await tenant.request('POST', '/v1/product-categories', { body: { name: 'Paint', reference: 'paint' } }), 201).data;
  return { tenant, tools, paint };
}

/** Creates products in one batch (one transaction: they share created_at). */
async function batch(tenant: TestTenant, bodies: Record<string, unknown>[]) {
  return ok(await tenant.request('POST', '/v1/products/batch', { body: { data: bodies } }), 201).data as any[];
}

describe('cursor walks (§22)', () => {
  for (const sort of ['id', '-name', 'created_at', '-created_at', 'reference']) {
    test(`products sorted by ${sort}: inserts and deletes between pages; every stable product once, none twice`, async () => {
      const { tenant } = await tenantWithCategories();
      const initial: string[] = [];
      for (let b = 0; b < 3; b++) {
        // Few distinct names (ties broken by id) and three batches (ties on created_at inside each).
        const made = await batch(
          tenant,
          Array.from({ length: 8 }, (_, i) => product(`P-${b}${i}`, { name: `N${(b * 8 + i) % 3}` })),
        );
        initial.push(...made.map((p) => p.reference));
      }
      const deleted = new Set<string>();
      let inserted = 0;
      const seen = await walk(
        tenant,
        `/v1/products?per_page=5&sort=${sort}`,
        (p) => p.reference,
        async (step) => {
          // New products that sort before and after the walk's position, and a deleted one on either side.
          for (const name of ['A-new', 'N1', 'Z-new']) {
            inserted += 1;
            ok(await tenant.request('POST', '/v1/products', { body: product(`Q-${inserted}`, { name }) }), 201);
          }
          for (const index of [step, initial.length - 1 - step * 2]) {
            const victim = initial[index] as string;
            if (deleted.has(victim)) continue;
            ok(await tenant.request('DELETE', `/v1/products/${victim}`));
            deleted.add(victim);
          }
        },
      );
      expect(deleted.size).toBeGreaterThan(4);
      const final = ok(await tenant.request('GET', `/v1/products?per_page=100&sort=${sort}`)).data.map((p: any) => p.reference);
      expectExactWalk(
        seen,
        initial.filter((r) => !deleted.has(r)),
        final,
      );
    });
  }

  test('root categories by name: inserts and deletes between pages; children never listed as roots', async () => {
    const tenant = await stack.createTenant();
    const roots: { id: number; reference: string }[] = [];
    for (let i = 0; i < 14; i++) {
      const root = ok(
        await tenant.request('POST', '/v1/product-categories', { body: { name: `R${i % 4}`, reference: `root-${i}` } }),
        201,
      ).data;
      roots.push(root);
      if (i % 2 === 0)
        ok(
          await tenant.request('POST', '/v1/product-categories', { body: { name: 'Child', reference: `child-${i}`, parent_id: root.id } }),
          201,
        );
    }
    const deleted = new Set<string>();
    let inserted = 0;
    const seen = await walk(
      tenant,
      '/v1/product-categories?per_page=3&sort=name',
      (c) => c.reference,
      async (step) => {
        for (const name of ['A', 'R2', 'Z']) {
          inserted += 1;
          ok(await tenant.request('POST', '/v1/product-categories', { body: { name, reference: `new-${inserted}` } }), 201);
        }
        // Childless roots (odd indexes) can go.
        for (const index of [2 * step + 1, 13 - 2 * step]) {
          const victim = roots[index];
          if (!victim || index % 2 === 0 || deleted.has(victim.reference)) continue;
          ok(await tenant.request('DELETE', `/v1/product-categories/${victim.id}`));
          deleted.add(victim.reference);
        }
      },
    );
    expect(deleted.size).toBeGreaterThan(2);
    expect(seen.some((r) => r.startsWith('child-'))).toBe(false);
    const final = ok(await tenant.request('GET', '/v1/product-categories?per_page=100&sort=name')).data.map((c: any) => c.reference);
    expectExactWalk(
      seen,
      roots.map((r) => r.reference).filter((r) => !deleted.has(r)),
      final,
    );
    // Each root still comes with its subtree in cursor mode.
    const byId = ok(await tenant.request('GET', '/v1/product-categories?per_page=3&sort=id'));
    const next = ok(await tenant.request('GET', `/v1/product-categories?per_page=3&sort=id&cursor=${byId.pagination.next_cursor}`));
    const all = ok(await tenant.request('GET', '/v1/product-categories?per_page=6&sort=id')).data;
    expect([...byId.data, ...next.data]).toEqual(all);
    expect(all[0].children.map((c: any) => c.reference)).toEqual(['child-0']);
  });
});

describe('Link headers and next_cursor (§22)', () => {
  test('page mode: first, prev, next, last with the request parameters; cursor mode: next only', async () => {
    const { tenant, tools } = await tenantWithCategories();
    await batch(
      tenant,
      Array.from({ length: 7 }, (_, i) => product(`L-${i}`, { name: `Drill ${i}` })),
    );
    await batch(tenant, [product('OTHER', { name: 'Saw' })]);
    const base = `/v1/products?per_page=3&sort=-name&q=drill&product_category_id=${tools.id}`;

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
      expect(url.startsWith('/v1/products?')).toBe(true);
      expect(params(url)).toMatchObject({ per_page: '3', sort: '-name', q: 'drill', product_category_id: String(tools.id) });
    }
    expect(params(firstLinks.first as string).page).toBe('1');
    expect(params(firstLinks.next as string).page).toBe('2');
    expect(params(firstLinks.last as string).page).toBe('3');

    const middle = await tenant.request('GET', firstLinks.next as string);
    expect(ok(middle).data.map((p: any) => p.reference)).toEqual(['L-3', 'L-2', 'L-1']);
    expect(Object.keys(links(middle)).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect(params(links(middle).prev as string).page).toBe('1');

    const last = await tenant.request('GET', links(middle).last as string);
    expect(ok(last).pagination).toMatchObject({ current_page: 3, has_more: false, next_cursor: null });
    expect(Object.keys(links(last)).sort()).toEqual(['first', 'last', 'prev']);

    // Cursor mode: no counts, the Link header carries only next (with the same parameters).
    const cursorPage = await tenant.request('GET', `${base}&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
    expect(ok(cursorPage).data.map((p: any) => p.reference)).toEqual(['L-3', 'L-2', 'L-1']);
    expect(cursorPage.body.pagination).toEqual({
      total: null,
      per_page: 3,
      current_page: null,
      last_page: null,
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect(Object.keys(links(cursorPage))).toEqual(['next']);
    expect(params(links(cursorPage).next as string)).toEqual({
      per_page: '3',
      sort: '-name',
      q: 'drill',
      product_category_id: String(tools.id),
      cursor: cursorPage.body.pagination.next_cursor,
    });
    const end = await tenant.request('GET', links(cursorPage).next as string);
    expect(ok(end).data.map((p: any) => p.reference)).toEqual(['L-0']);
    expect(end.body.pagination).toMatchObject({ has_more: false, next_cursor: null, total: null });
    expect(end.headers.get('link')).toBeNull();

    // The category list too.
    const categories = await tenant.request('GET', '/v1/product-categories?per_page=1');
    // (toMatchObject with expect.any would overwrite the received value in this Bun version: compare plainly.)
    const { total, last_page, next_cursor } = ok(categories).pagination;
    expect([total, last_page, typeof next_cursor]).toEqual([2, 2, 'string']);
    expect(Object.keys(links(categories)).sort()).toEqual(['first', 'last', 'next']);
    const secondRoot = await tenant.request('GET', `/v1/product-categories?per_page=1&cursor=${next_cursor}`);
    expect(ok(secondRoot).data.map((c: any) => c.reference)).toEqual(['paint']);
    expect(secondRoot.headers.get('link')).toBeNull();
  });

  test('a cursor is refused with another sort or filters, with page, or malformed → 422 on cursor', async () => {
    const { tenant, tools, paint } = await tenantWithCategories();
    await batch(
      tenant,
      Array.from({ length: 3 }, (_, i) => product(`C-${i}`)),
    );
    const since = '2020-01-01T00:00:00Z';
    const start = ok(
      await tenant.request('GET', `/v1/products?per_page=1&sort=name&q=c-&updated_since=${since}&product_category_id=${tools.id}`),
    );
    const cursor = encodeURIComponent(start.pagination.next_cursor);
    const same = `per_page=1&sort=name&q=c-&updated_since=${since}&product_category_id=${tools.id}`;
    // The same sort and filters in another parameter order (and another per_page) are fine.
    ok(
      await tenant.request(
        'GET',
        `/v1/products?product_category_id=${tools.id}&q=c-&sort=name&updated_since=${since}&per_page=2&cursor=${cursor}`,
      ),
    );
    const refused = async (path: string) => {
      const res = await tenant.request('GET', path);
      if (res.status !== 422) throw new Error(`${path}: expected 422, got ${res.status} ${res.text}`);
      expect(res.body.error.type).toBe('validation_error');
      expect(res.body.error.details.map((d: any) => d.field)).toEqual(['cursor']);
      return res.body.error.details[0].message as string;
    };
    for (const other of [
      `per_page=1&sort=-name&q=c-&updated_since=${since}&product_category_id=${tools.id}`,
      `per_page=1&sort=name&q=c-1&updated_since=${since}&product_category_id=${tools.id}`,
      `per_page=1&sort=name&updated_since=${since}&product_category_id=${tools.id}`,
      `per_page=1&sort=name&q=c-&updated_since=2021-01-01T00:00:00Z&product_category_id=${tools.id}`,
      `per_page=1&sort=name&q=c-&updated_since=${since}&product_category_id=${paint.id}`,
    ])
      expect(await refused(`/v1/products?${other}&cursor=${cursor}`)).toContain('another sort or other filters');
    expect(await refused(`/v1/products?${same}&cursor=${cursor}&page=2`)).toBe('cannot be combined with page');
    for (const bad of ['abc', 'not!base64', encodeURIComponent(Buffer.from('{"v":1}').toString('base64url'))])
      expect(await refused(`/v1/products?${same}&cursor=${bad}`)).toBe('is not a valid cursor');

    const roots = ok(await tenant.request('GET', '/v1/product-categories?per_page=1&sort=name'));
    expect(await refused(`/v1/product-categories?per_page=1&sort=reference&cursor=${roots.pagination.next_cursor}`)).toContain(
      'another sort',
    );
    expect(await refused(`/v1/product-categories?per_page=1&sort=name&page=1&cursor=${roots.pagination.next_cursor}`)).toBe(
      'cannot be combined with page',
    );
    expect(await refused('/v1/product-categories?cursor=%7B%7D')).toBe('is not a valid cursor');
  });
});

/** The tenant's catalog events as the events feed lists them, complete (settledFeed), of types starting with `prefix`. */
async function events(tenant: TestTenant, prefix = '') {
  return ofType(await settledFeed(tenant), prefix).map(({ type, data }) => ({ type, data }));
}

describe('ETags and conditional requests (§24)', () => {
  test('products: ETag on GET/POST/PUT; If-None-Match → 304; If-Match stale → 412 and nothing changes; current or * → 200', async () => {
    const { tenant } = await tenantWithCategories();
    const createdRes = await tenant.request('POST', '/v1/products', { body: product('E-1') });
    ok(createdRes, 201);
    const etag0 = createdRes.headers.get('etag') as string;
    expect(etag0).toMatch(/^"[^"]+"$/);
    const got = await tenant.request('GET', '/v1/products/E-1');
    expect(got.headers.get('etag')).toBe(etag0);

    const notModified = await tenant.request('GET', '/v1/products/E-1', { headers: { 'if-none-match': etag0 } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag0);
    expect((await tenant.request('GET', '/v1/products/E-1', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    const put = await tenant.request('PUT', '/v1/products/E-1', { body: { name: 'Renamed' }, headers: { 'if-match': etag0 } });
    expect(ok(put).data.name).toBe('Renamed');
    const etag1 = put.headers.get('etag') as string;
    expect(etag1).not.toBe(etag0);
    expect((await tenant.request('GET', '/v1/products/E-1')).headers.get('etag')).toBe(etag1);
    expect((await tenant.request('GET', '/v1/products/E-1', { headers: { 'if-none-match': etag0 } })).status).toBe(200);

    // Stale: 412, nothing changed, no event.
    const before = await tenant.request('GET', '/v1/products/E-1');
    const eventsBefore = await events(tenant);
    for (const [method, body] of [
      ['PUT', { name: 'Lost' }],
      ['PATCH', { stock: 9 }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await tenant.request(method, '/v1/products/E-1', { body, headers: { 'if-match': etag0 } });
      expect(stale.status).toBe(412);
      expect(stale.body.error.type).toBe('precondition_failed');
    }
    expect((await tenant.request('GET', '/v1/products/E-1')).body).toEqual(before.body);
    expect(await events(tenant)).toEqual(eventsBefore);
    // A missing resource is 404 whatever the If-Match.
    expect((await tenant.request('PUT', '/v1/products/NOPE', { body: { name: 'x' }, headers: { 'if-match': '*' } })).status).toBe(404);

    const patched = await tenant.request('PATCH', '/v1/products/E-1', { body: { stock: 3 }, headers: { 'if-match': `"x", ${etag1}` } });
    expect(ok(patched).data.stock).toBe(3);
    const star = await tenant.request('PUT', '/v1/products/E-1', { body: { stock: 4 }, headers: { 'if-match': '*' } });
    expect(ok(star).data.stock).toBe(4);
    const removed = await tenant.request('DELETE', '/v1/products/E-1', { headers: { 'if-match': star.headers.get('etag') as string } });
    expect(ok(removed)).toEqual({ deleted: true });
    expect((await tenant.request('GET', '/v1/products/E-1')).status).toBe(404);
  });

  test('categories: the ETag covers the subtree; stale If-Match → 412 on PUT/PATCH/DELETE, nothing changes', async () => {
    const { tenant, tools } = await tenantWithCategories();
    const etag0 = (await tenant.request('GET', `/v1/product-categories/${tools.id}`)).headers.get('etag') as string;
    expect(etag0).toMatch(/^"[^"]+"$/);
    expect((await tenant.request('GET', `/v1/product-categories/${tools.id}`, { headers: { 'if-none-match': etag0 } })).status).toBe(304);
    // A new child changes the representation of its parent (its subtree).
    const child = await tenant.request('POST', '/v1/product-categories', {
      body: { name: 'Drills', reference: 'drills', parent_id: tools.id },
    });
    expect(ok(child, 201) && child.headers.get('etag')).toMatch(/^"/);
    const etag1 = (await tenant.request('GET', `/v1/product-categories/${tools.id}`)).headers.get('etag') as string;
    expect(etag1).not.toBe(etag0);

    const before = (await tenant.request('GET', '/v1/product-categories')).body;
    const eventsBefore = await events(tenant);
    for (const [method, body] of [
      ['PUT', { name: 'Lost' }],
      ['PATCH', { parent_id: 0 }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await tenant.request(method, `/v1/product-categories/${child.body.data.id}`, {
        body,
        headers: { 'if-match': etag0 },
      });
      expect(stale.status).toBe(412);
      expect(stale.body.error.type).toBe('precondition_failed');
    }
    const staleParent = await tenant.request('PUT', `/v1/product-categories/${tools.id}`, {
      body: { name: 'X' },
      headers: { 'if-match': etag0 },
    });
    expect(staleParent.status).toBe(412);
    expect((await tenant.request('GET', '/v1/product-categories')).body).toEqual(before);
    expect(await events(tenant)).toEqual(eventsBefore);

    const renamed = await tenant.request('PUT', `/v1/product-categories/${tools.id}`, {
      body: { name: 'Tools 2' },
      headers: { 'if-match': etag1 },
    });
    expect(ok(renamed).data.name).toBe('Tools 2');
    expect(renamed.headers.get('etag')).toBe((await tenant.request('GET', `/v1/product-categories/${tools.id}`)).headers.get('etag'));
    const childEtag = child.headers.get('etag') as string;
    ok(await tenant.request('DELETE', `/v1/product-categories/${child.body.data.id}`, { headers: { 'if-match': childEtag } }));
    ok(
      await tenant.request('PATCH', `/v1/product-categories/${tools.id}`, { body: { reference: 'tools-2' }, headers: { 'if-match': '*' } }),
    );
  });

  test('concurrent PUTs with one ETag: exactly one wins, the others get 412', async () => {
    const { tenant, paint } = await tenantWithCategories();
    ok(await tenant.request('POST', '/v1/products', { body: product('RACE-1') }), 201);
    const etag = (await tenant.request('GET', '/v1/products/RACE-1')).headers.get('etag') as string;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        tenant.request('PUT', '/v1/products/RACE-1', { body: { name: `Writer ${i}`, stock: i }, headers: { 'if-match': etag } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412]);
    const winner = answers.find((a) => a.status === 200) as Answer;
    expect((await tenant.request('GET', '/v1/products/RACE-1')).body.data).toEqual(winner.body.data);
    expect((await events(tenant, 'product.updated')).length).toBe(1);

    const categoryEtag = (await tenant.request('GET', `/v1/product-categories/${paint.id}`)).headers.get('etag') as string;
    const moves = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        tenant.request('PATCH', `/v1/product-categories/${paint.id}`, {
          body: { name: `Paint ${i}` },
          headers: { 'if-match': categoryEtag },
        }),
      ),
    );
    expect(moves.map((a) => a.status).sort()).toEqual([200, 412, 412, 412]);
    expect((await events(tenant, 'product_category.updated')).length).toBe(1);
  });

  test('with an Idempotency-Key, a 412 is not stored: the same key succeeds with a fresh ETag, then replays with its ETag', async () => {
    const { tenant } = await tenantWithCategories();
    const made = await tenant.request('POST', '/v1/products', { body: product('IDEM-1') });
    const stale = made.headers.get('etag') as string;
    ok(await tenant.request('PUT', '/v1/products/IDEM-1', { body: { stock: 1 } }));
    const key = crypto.randomUUID();
    const body = { name: 'Once' };
    const refused = await tenant.request('PUT', '/v1/products/IDEM-1', { body, headers: { 'if-match': stale, 'idempotency-key': key } });
    expect(refused.status).toBe(412);
    const fresh = (await tenant.request('GET', '/v1/products/IDEM-1')).headers.get('etag') as string;
    const done = await tenant.request('PUT', '/v1/products/IDEM-1', { body, headers: { 'if-match': fresh, 'idempotency-key': key } });
    expect(ok(done).data.name).toBe('Once');
    expect(done.headers.get('idempotent-replayed')).toBeNull();
    // The recorded answer is replayed (with its ETag) before If-Match is looked at.
    const replayed = await tenant.request('PUT', '/v1/products/IDEM-1', { body, headers: { 'if-match': fresh, 'idempotency-key': key } });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('etag')).toBe(done.headers.get('etag'));
    expect(replayed.body).toEqual(done.body);
    expect((await events(tenant, 'product.updated')).length).toBe(2);
  });
});

/** The tenant's products, rates and events (as the feed lists them), to show a refused upsert left nothing. */
async function footprint(tenant: TestTenant) {
  const events = await settledFeed(tenant);
  const { rows } = await stack.sql(
    `select
      (select json_agg(p order by p.id) from catalog.products p where tenant_id = $1)::text as products,
      (select json_agg(r order by r.id) from catalog.product_rates r where tenant_id = $1)::text as rates`,
    [tenant.tenantId],
  );
  return { ...rows[0], events: events.map((event) => event.id) };
}

function expect422(res: Answer, fields: string[]): Record<string, string> {
  if (res.status !== 422) throw new Error(`expected 422, got ${res.status} ${res.text}`);
  expect(res.body.error.type).toBe('validation_error');
  const details: { field: string; message: string }[] = res.body.error.details;
  expect(details.map((d) => d.field).sort()).toEqual([...fields].sort());
  return Object.fromEntries(details.map((d) => [d.field, d.message]));
}

describe('batch upsert (§23)', () => {
  test('by reference: creates and updates in one batch, in request order, with created flags and one event per item', async () => {
    const { tenant, paint } = await tenantWithCategories();
    const [one, two] = await batch(tenant, [
      product('U-1', { description: 'keep me' }),
      product('U-2', {
        rates: [
          { sku: 'U-2-A', price: 1 },
          { sku: 'U-2-B', price: 2 },
        ],
      }),
    ]);
    const eventsBefore = (await events(tenant)).length;
    const res = await tenant.request('POST', '/v1/products/batch/upsert', {
      body: {
        id_property: 'reference',
        data: [
          {
            reference: 'U-2',
            rates: [
              { sku: 'U-2-B', price: 5, primary: true },
              { sku: 'U-2-C', price: 6 },
            ],
          },
          product('U-3', { product_category_ref: 'paint' }),
          { reference: 'U-1', name: 'Updated one', vat: 10 },
        ],
      },
    });
    const body = ok(res);
    expect(body.created).toEqual([false, true, false]);
    expect(body.data.map((p: any) => p.reference)).toEqual(['U-2', 'U-3', 'U-1']);
    const [u2, u3, u1] = body.data;
    expect(u1).toMatchObject({ id: one.id, name: 'Updated one', description: 'keep me', rates: one.rates });
    expect(u1.vat_id).not.toBe(one.vat_id);
    expect(u2.id).toBe(two.id);
    // PUT semantics for rates: the list is replaced, the sku that stays keeps its id.
    expect(u2.rates.map((r: any) => [r.sku, r.price, r.primary])).toEqual([
      ['U-2-B', 5, true],
      ['U-2-C', 6, false],
    ]);
    expect(u2.rates[0].id).toBe(two.rates[1].id);
    expect(u3).toMatchObject({ reference: 'U-3', product_category_id: paint.id, rates: [{ sku: 'U-3-A', primary: true }] });
    for (const p of body.data) expect((await tenant.request('GET', `/v1/products/${p.reference}`)).body.data).toEqual(p);
    expect((await events(tenant)).slice(eventsBefore)).toEqual([
      { type: 'product.updated', data: u2 },
      { type: 'product.created', data: u3 },
      { type: 'product.updated', data: u1 },
    ]);
  });

  test('by sku: the product that has a rate with that sku is updated; no match is created from a full body', async () => {
    const { tenant } = await tenantWithCategories();
    const [x] = await batch(tenant, [
      product('X', {
        rates: [
          { sku: 'X-A', price: 1 },
          { sku: 'X-B', price: 2 },
        ],
      }),
    ]);
    const eventsBefore = (await events(tenant)).length;
    const res = await tenant.request('POST', '/v1/products/batch/upsert', {
      body: {
        id_property: 'sku',
        data: [
          product('NEW', {
            sku: 'NEW-1',
            rates: [
              { sku: 'NEW-0', price: 1 },
              { sku: 'NEW-1', price: 2 },
            ],
          }),
          { sku: 'X-B', reference: 'X', stock: 7 },
        ],
      },
    });
    const body = ok(res);
    expect(body.created).toEqual([true, false]);
    expect(body.data[0]).toMatchObject({ reference: 'NEW', rates: [{ sku: 'NEW-0' }, { sku: 'NEW-1' }] });
    expect(body.data[1]).toMatchObject({ id: x.id, reference: 'X', stock: 7, rates: x.rates });
    expect((await events(tenant)).slice(eventsBefore)).toEqual([
      { type: 'product.created', data: body.data[0] },
      { type: 'product.updated', data: body.data[1] },
    ]);
    // Again: now both match (NEW by its sku NEW-1).
    const again = ok(
      await tenant.request('POST', '/v1/products/batch/upsert', {
        body: {
          id_property: 'sku',
          data: [
            { sku: 'NEW-1', name: 'Renamed' },
            { sku: 'X-A', rates: [{ sku: 'X-A', price: 9 }] },
          ],
        },
      }),
    );
    expect(again.created).toEqual([false, false]);
    expect(again.data[0]).toMatchObject({ id: body.data[0].id, name: 'Renamed' });
    expect(again.data[1].rates).toEqual([{ ...x.rates[0], price: 9 }]);
  });

  test('refuses missing and repeated id values, and every other rule, in one 422 that writes nothing', async () => {
    const { tenant } = await tenantWithCategories();
    await batch(tenant, [
      product('R-1'),
      product('R-2', {
        rates: [
          { sku: 'R-2-A', price: 1 },
          { sku: 'R-2-B', price: 1 },
        ],
      }),
    ]);
    const before = await footprint(tenant);
    const upsert = (body: unknown) => tenant.request('POST', '/v1/products/batch/upsert', { body });

    const byReference = expect422(
      await upsert({
        id_property: 'reference',
        data: [
          { name: 'no reference' },
          { reference: 'R-1', name: 'fine' },
          { reference: 'R-1', name: 'again' },
          { reference: 'NEW-1', name: 'missing vat, category and rates' },
          { reference: 'R-2', sku: 'R-2-A' },
          { reference: 'R-2b', vat: 500, name: 'x', product_category_ref: 'nope', rates: [{ sku: 'R-1-A', price: 1 }] },
        ],
      }),
      [
        'data[0].reference',
        'data[2].reference',
        'data[3].vat',
        'data[3].product_category_ref',
        'data[3].rates',
        'data[4].sku',
        'data[5].vat',
        'data[5].product_category_ref',
      ],
    );
    expect(byReference['data[0].reference']).toBe('is required (it is the id_property)');
    expect(byReference['data[2].reference']).toBe('must not repeat data[1].reference');
    expect(byReference['data[3].rates']).toBe('is required to create a product (nothing matches)');
    expect(byReference['data[4].sku']).toBe('is only accepted with id_property sku');
    expect(byReference['data[5].vat']).toBe('must be at most 100');

    const bySku = expect422(
      await upsert({
        id_property: 'sku',
        data: [
          { reference: 'R-1', name: 'no sku' },
          { sku: 'R-2-A', name: 'first' },
          { sku: 'R-2-B', name: 'same product' },
          { sku: 'R-2-A', name: 'repeated' },
          { sku: 'R-1-A', reference: 'R-9' },
          product('N-1', { sku: 'N-1-X' }),
          { sku: 'N-2', name: 'x', vat: 1, product_category_ref: 'tools', rates: [{ sku: 'N-2', price: 1 }] },
        ],
      }),
      ['data[0].sku', 'data[2].sku', 'data[3].sku', 'data[4].reference', 'data[5].rates', 'data[6].reference'],
    );
    expect(bySku['data[0].sku']).toBe('is required (it is the id_property)');
    expect(bySku['data[2].sku']).toBe('matches the same product as data[1].sku');
    expect(bySku['data[3].sku']).toBe('must not repeat data[1].sku');
    expect(bySku['data[4].reference']).toContain('must be R-1');
    expect(bySku['data[5].rates']).toContain('must include a rate with the item sku');

    expect422(await upsert({ id_property: 'email', data: [{ reference: 'R-1' }] }), ['id_property']);
    expect422(await upsert({ id_property: 'reference', data: [] }), ['data']);
    expect(await footprint(tenant)).toEqual(before);
  });

  test('all or nothing: a 409 on one item (another product sku) leaves every other item unwritten', async () => {
    const { tenant } = await tenantWithCategories();
    await batch(tenant, [product('A-1'), product('A-2')]);
    const before = await footprint(tenant);
    const res = await tenant.request('POST', '/v1/products/batch/upsert', {
      body: {
        id_property: 'reference',
        data: [{ reference: 'A-1', name: 'would change' }, product('A-3'), { reference: 'A-2', rates: [{ sku: 'A-1-A', price: 1 }] }],
      },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual([{ field: 'data[2].rates[0].sku', message: 'A-1-A is already used by another product' }]);
    expect(await footprint(tenant)).toEqual(before);
  });

  test('concurrent upserts of the same new reference or sku create one product; the others update it', async () => {
    const { tenant } = await tenantWithCategories();
    const byReference = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        tenant.request('POST', '/v1/products/batch/upsert', {
          body: { id_property: 'reference', data: [product('SAME', { name: `Writer ${i}` })] },
        }),
      ),
    );
    expect(byReference.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(byReference.filter((r) => r.body.created[0] === true)).toHaveLength(1);
    const bySku = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        tenant.request('POST', '/v1/products/batch/upsert', {
          body: { id_property: 'sku', data: [product('BY-SKU', { sku: 'BY-SKU-A', stock: i })] },
        }),
      ),
    );
    expect(bySku.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(bySku.filter((r) => r.body.created[0] === true)).toHaveLength(1);
    const all = ok(await tenant.request('GET', '/v1/products?sort=reference'));
    expect(all.data.map((p: any) => p.reference)).toEqual(['BY-SKU', 'SAME']);
    const created = await events(tenant, 'product.created');
    expect(created.map((e) => e.data.reference).sort()).toEqual(['BY-SKU', 'SAME']);
    expect(await events(tenant, 'product.updated')).toHaveLength(8);
  });
});

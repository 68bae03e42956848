import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;
let tenant: TestTenant;
let all: { id: number; name: string; updated_at: string; created_at: string }[];
const COUNT = 23;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  // Names in an order different from ids, so sorting by name is observable.
  const data = Array.from({ length: COUNT }, (_, i) => ({
    name: `Contact ${String.fromCharCode(90 - i)}${i}`,
    type: i % 3 === 0 ? 'lead' : 'client',
    email: `c${i}@list.test`,
    cif: `CIF-${i}`,
  }));
  const res = await tenant.request('POST', '/v1/contacts/batch', { body: { data } });
  expect(res.status).toBe(201);
  all = res.body.data;
}, 60_000);

const ids = (body: any) => body.data.map((c: any) => c.id);
const sortedIds = () => all.map((c) => c.id).sort((a, b) => a - b);

describe('pagination', () => {
  test('default: 15 per page, id ascending, has_more', async () => {
    const res = await tenant.request('GET', '/v1/contacts');
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(sortedIds().slice(0, 15));
    expect(res.body.pagination).toEqual({
      total: COUNT,
      per_page: 15,
      current_page: 1,
      last_page: 2,
      has_more: true,
      next_cursor: expect.any(String),
    });
  });

  test('the last page has has_more false', async () => {
    const res = await tenant.request('GET', '/v1/contacts?page=2');
    expect(ids(res.body)).toEqual(sortedIds().slice(15));
    expect(res.body.pagination).toEqual({ total: COUNT, per_page: 15, current_page: 2, last_page: 2, has_more: false, next_cursor: null });
  });

  test('per_page=1 walks every contact once', async () => {
    const seen: number[] = [];
    for (let page = 1; page <= COUNT; page++) {
      const res = await tenant.request('GET', `/v1/contacts?per_page=1&page=${page}`);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.pagination.has_more).toBe(page < COUNT);
      expect(res.body.pagination.last_page).toBe(COUNT);
      seen.push(res.body.data[0].id);
    }
    expect(seen).toEqual(sortedIds());
  });

  test('per_page=100 returns everything on one page', async () => {
    const res = await tenant.request('GET', '/v1/contacts?per_page=100');
    expect(ids(res.body)).toEqual(sortedIds());
    expect(res.body.pagination).toEqual({ total: COUNT, per_page: 100, current_page: 1, last_page: 1, has_more: false, next_cursor: null });
  });

  test('per_page 0 and 101, page 0 and non-numbers → 422 naming the field', async () => {
    for (const [query, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['page=abc', 'page'],
      ['sort=email', 'sort'],
      ['updated_since=yesterday', 'updated_since'],
    ]) {
      const res = await tenant.request('GET', `/v1/contacts?${query}`);
      expect(res.status).toBe(422);
      expect(res.body.error.type).toBe('validation_error');
      expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
    }
  });

  test('a page past the end → data [] with correct pagination', async () => {
    const res = await tenant.request('GET', '/v1/contacts?page=9&per_page=10');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [],
      pagination: { total: COUNT, per_page: 10, current_page: 9, last_page: 3, has_more: false, next_cursor: null },
    });
  });

  test('unknown query parameters are ignored', async () => {
    const res = await tenant.request('GET', '/v1/contacts?per_page=2&colour=blue');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
  });
});

describe('sort', () => {
  test('by id descending', async () => {
    const res = await tenant.request('GET', '/v1/contacts?sort=-id&per_page=100');
    expect(ids(res.body)).toEqual(sortedIds().reverse());
  });

  test('by name in both directions', async () => {
    const byName = [...all].sort((a, b) => (a.name < b.name ? -1 : 1)).map((c) => c.id);
    const asc = await tenant.request('GET', '/v1/contacts?sort=name&per_page=100');
    expect(ids(asc.body)).toEqual(byName);
    expect(byName).not.toEqual(sortedIds());
    const desc = await tenant.request('GET', '/v1/contacts?sort=-name&per_page=100');
    expect(ids(desc.body)).toEqual([...byName].reverse());
  });

  test('by created_at and updated_at, ties broken by id, pages do not overlap', async () => {
    const t = await stack.createTenant();
    const first = (await t.request('POST', '/v1/contacts', { body: { name: 'First', type: 'lead' } })).body.data;
    const second = (await t.request('POST', '/v1/contacts', { body: { name: 'Second', type: 'lead' } })).body.data;
    await Bun.sleep(5);
    await t.request('PUT', `/v1/contacts/${first.id}`, { body: { comments: 'touched' } });
    expect(ids((await t.request('GET', '/v1/contacts?sort=created_at')).body)).toEqual([first.id, second.id]);
    expect(ids((await t.request('GET', '/v1/contacts?sort=-created_at')).body)).toEqual([second.id, first.id]);
    expect(ids((await t.request('GET', '/v1/contacts?sort=updated_at')).body)).toEqual([second.id, first.id]);
    expect(ids((await t.request('GET', '/v1/contacts?sort=-updated_at')).body)).toEqual([first.id, second.id]);
    const p1 = await tenant.request('GET', '/v1/contacts?sort=-updated_at&per_page=10&page=1');
    const p2 = await tenant.request('GET', '/v1/contacts?sort=-updated_at&per_page=10&page=2');
    const p3 = await tenant.request('GET', '/v1/contacts?sort=-updated_at&per_page=10&page=3');
    expect(new Set([...ids(p1.body), ...ids(p2.body), ...ids(p3.body)]).size).toBe(COUNT);
  });
});

describe('filters', () => {
  test('q: case-insensitive substring of name, email or cif', async () => {
    const byName = await tenant.request('GET', '/v1/contacts?q=contact%20z0');
    expect(byName.body.data.map((c: any) => c.name)).toEqual(['Contact Z0']);
    const byEmail = await tenant.request('GET', '/v1/contacts?q=C12@LIST');
    expect(byEmail.body.data.map((c: any) => c.email)).toEqual(['c12@list.test']);
    const byCif = await tenant.request('GET', '/v1/contacts?q=cif-2&per_page=100');
    expect(byCif.body.data.map((c: any) => c.cif).sort()).toEqual(['CIF-2', 'CIF-20', 'CIF-21', 'CIF-22']);
    const wildcard = await tenant.request('GET', '/v1/contacts?q=%25');
    expect(wildcard.body.pagination.total).toBe(0);
  });

  test('type, email (case-insensitive) and cif; combined with pagination totals', async () => {
    const leads = await tenant.request('GET', '/v1/contacts?type=lead&per_page=100');
    expect(leads.body.pagination.total).toBe(Math.ceil(COUNT / 3));
    expect(leads.body.data.every((c: any) => c.type === 'lead')).toBe(true);
    const email = await tenant.request('GET', '/v1/contacts?email=C5@List.Test');
    expect(email.body.data.map((c: any) => c.email)).toEqual(['c5@list.test']);
    const cif = await tenant.request('GET', '/v1/contacts?cif=CIF-7');
    expect(cif.body.data.map((c: any) => c.cif)).toEqual(['CIF-7']);
    const none = await tenant.request('GET', '/v1/contacts?cif=cif-7');
    expect(none.body.data).toEqual([]);
  });

  test('updated_since returns contacts updated at or after the timestamp', async () => {
    const t = await stack.createTenant();
    const old = (await t.request('POST', '/v1/contacts', { body: { name: 'Old', type: 'lead' } })).body.data;
    const fresh = (await t.request('POST', '/v1/contacts', { body: { name: 'Fresh', type: 'lead' } })).body.data;
    const since = fresh.updated_at;
    const res = await t.request('GET', `/v1/contacts?updated_since=${encodeURIComponent(since)}`);
    expect(ids(res.body)).toEqual(fresh.updated_at > old.updated_at ? [fresh.id] : [old.id, fresh.id]);
    await Bun.sleep(5);
    const touched = (await t.request('PUT', `/v1/contacts/${old.id}`, { body: { phone: '1' } })).body.data;
    const after = await t.request('GET', `/v1/contacts?updated_since=${encodeURIComponent(touched.updated_at)}`);
    expect(ids(after.body)).toEqual([old.id]);
    const future = await t.request('GET', '/v1/contacts?updated_since=2999-01-01T00:00:00.000Z');
    expect(future.body.data).toEqual([]);
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { type EventType, eventPayloadErrors } from '@crm/contracts';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { settledFeed } from './catalog-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function createCategory(tenant: TestTenant, body: Record<string, unknown>) {
  const res = await tenant.request('POST', '/v1/product-categories', { body });
  if (res.status !== 201) throw new Error(`category creation failed: ${res.status} ${res.text}`);
  return res.body.data;
}

async function createProduct(tenant: TestTenant, reference: string, categoryRef: string) {
  const res = await tenant.request('POST', '/v1/products', {
    body: { reference, name: reference, vat: 21, product_category_ref: categoryRef, rates: [{ sku: `${reference}-sku`, price: 1 }] },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** The ids of a tree, depth first, with their depth: a compact picture of its shape. */
function shape(node: any, depth = 0): string[] {
  return [`${depth}:${node.reference}`, ...node.children.flatMap((c: any) => shape(c, depth + 1))];
}

describe('create', () => {
  test('a root (parent omitted or 0) and a child; every field present', async () => {
    const tenant = await stack.createTenant();
    const res = await tenant.request('POST', '/v1/product-categories', { body: { name: 'Hardware', reference: 'hw' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      name: 'Hardware',
      reference: 'hw',
      parent_id: null,
      has_products: false,
      has_objectives: false,
      children: [],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const zero = await createCategory(tenant, { name: 'Software', reference: 'sw', parent_id: 0 });
    expect(zero.parent_id).toBeNull();
    const child = await createCategory(tenant, { name: 'Disks', reference: 'hw-disks', parent_id: res.body.data.id });
    expect(child.parent_id).toBe(res.body.data.id);
    const read = await tenant.request('GET', `/v1/product-categories/${res.body.data.id}`);
    expect(read.body.data.children.map((c: any) => c.reference)).toEqual(['hw-disks']);
  });

  test('unknown parent → 422 on parent_id, nothing written', async () => {
    const [tenant, other] = await Promise.all([stack.createTenant(), stack.createTenant()]);
    const foreign = await createCategory(other, { name: 'Theirs', reference: 'theirs' });
    for (const parent_id of [999999, foreign.id]) {
      const res = await tenant.request('POST', '/v1/product-categories', { body: { name: 'X', reference: `x-${parent_id}`, parent_id } });
      expect(res.status).toBe(422);
      expect(res.body.error.type).toBe('validation_error');
      expect(res.body.error.details).toEqual([{ field: 'parent_id', message: expect.any(String) }]);
    }
    const list = await tenant.request('GET', '/v1/product-categories');
    expect(list.body.data).toEqual([]);
  });

  test('schema failures name every field at once; unknown fields are rejected', async () => {
    const tenant = await stack.createTenant();
    const res = await tenant.request('POST', '/v1/product-categories', { body: { name: '', parent_id: -1, colour: 'red' } });
    expect(res.status).toBe(422);
    const fields = res.body.error.details.map((d: any) => d.field).sort();
    expect(fields).toEqual(['colour', 'name', 'parent_id', 'reference']);
    expect(res.body.error.message).toContain('reference is required');
    for (const parent_id of ['5', 1.5, 99_999_999_999]) {
      const bad = await tenant.request('POST', '/v1/product-categories', { body: { name: 'N', reference: 'r', parent_id } });
      expect(bad.status).toBe(422);
      expect(bad.body.error.details.map((d: any) => d.field)).toEqual(['parent_id']);
    }
  });

  test('duplicate reference in a tenant → 409; another tenant may use it', async () => {
    const [tenant, other] = await Promise.all([stack.createTenant(), stack.createTenant()]);
    await createCategory(tenant, { name: 'A', reference: 'same' });
    const dup = await tenant.request('POST', '/v1/product-categories', { body: { name: 'B', reference: 'same' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.type).toBe('conflict');
    await createCategory(other, { name: 'A', reference: 'same' });
  });
});

describe('read', () => {
  test('GET list paginates the roots, each with its full nested subtree', async () => {
    const tenant = await stack.createTenant();
    const a = await createCategory(tenant, { name: 'A', reference: 'a' });
    const b = await createCategory(tenant, { name: 'B', reference: 'b' });
    const a1 = await createCategory(tenant, { name: 'A1', reference: 'a1', parent_id: a.id });
    await createCategory(tenant, { name: 'A2', reference: 'a2', parent_id: a.id });
    const a11 = await createCategory(tenant, { name: 'A11', reference: 'a11', parent_id: a1.id });
    await createCategory(tenant, { name: 'A111', reference: 'a111', parent_id: a11.id });
    await createCategory(tenant, { name: 'B1', reference: 'b1', parent_id: b.id });
    await createCategory(tenant, { name: 'C', reference: 'c' });

    const page1 = await tenant.request('GET', '/v1/product-categories?per_page=2');
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({
      total: 3,
      per_page: 2,
      current_page: 1,
      last_page: 2,
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect(page1.body.data.map((n: any) => shape(n))).toEqual([
      ['0:a', '1:a1', '2:a11', '3:a111', '1:a2'],
      ['0:b', '1:b1'],
    ]);
    const deep = page1.body.data[0].children[0].children[0].children[0];
    expect(deep).toMatchObject({ reference: 'a111', parent_id: a11.id, has_products: false, has_objectives: false, children: [] });

    const page2 = await tenant.request('GET', '/v1/product-categories?per_page=2&page=2');
    expect(page2.body.data.map((n: any) => n.reference)).toEqual(['c']);
    const past = await tenant.request('GET', '/v1/product-categories?page=9');
    expect(past.body).toEqual({
      data: [],
      pagination: { total: 3, per_page: 15, current_page: 9, last_page: 1, has_more: false, next_cursor: null },
    });
    const sorted = await tenant.request('GET', '/v1/product-categories?sort=-name');
    expect(sorted.body.data.map((n: any) => n.reference)).toEqual(['c', 'b', 'a']);
    const badSort = await tenant.request('GET', '/v1/product-categories?sort=colour&per_page=0');
    expect(badSort.status).toBe(422);
  });

  test('GET one returns its subtree at any depth; unknown, foreign or non-numeric id → 404', async () => {
    const [tenant, other] = await Promise.all([stack.createTenant(), stack.createTenant()]);
    let parent = await createCategory(tenant, { name: 'L0', reference: 'l0' });
    const top = parent;
    for (let level = 1; level < 12; level++)
      parent = await createCategory(tenant, { name: `L${level}`, reference: `l${level}`, parent_id: parent.id });
    const res = await tenant.request('GET', `/v1/product-categories/${top.id}`);
    expect(shape(res.body.data)).toEqual(Array.from({ length: 12 }, (_, i) => `${i}:l${i}`));
    const mid = await tenant.request('GET', `/v1/product-categories/${parent.parent_id}`);
    expect(shape(mid.body.data)).toEqual(['0:l10', '1:l11']);
    for (const path of ['999999', String(top.id), 'abc', '1.5']) {
      const as = path === String(top.id) ? other : tenant;
      const missing = await as.request('GET', `/v1/product-categories/${path}`);
      expect(missing.status).toBe(404);
      expect(missing.body.error.type).toBe('not_found');
    }
  });

  test('a tree 10 levels deep and 1 000 categories wide is read whole', async () => {
    const tenant = await stack.createTenant();
    const root = await createCategory(tenant, { name: 'Root', reference: 'root' });
    // 1 000 siblings under the root (inserted directly: building them is not what is tested)…
    await stack.sql(
      `insert into catalog.product_categories (tenant_id, name, reference, parent_id)
       select $1, 'Wide ' || n, 'wide-' || lpad(n::text, 4, '0'), $2 from generate_series(1, 1000) n`,
      [tenant.tenantId, root.id],
    );
    // …and a chain of 9 more levels below the first of them, through the API.
    const first = await stack.sql('select id from catalog.product_categories where tenant_id = $1 and reference = $2', [
      tenant.tenantId,
      'wide-0001',
    ]);
    let parentId = first.rows[0].id;
    for (let level = 2; level <= 9; level++)
      parentId = (await createCategory(tenant, { name: `D${level}`, reference: `deep-${level}`, parent_id: parentId })).id;
    await createProduct(tenant, 'in-the-deep', 'deep-9');

    const statements = async () => {
      const metrics = await stack.call('catalog', 'GET', '/metrics');
      return Number(/^db_queries_total\{[^}]*\} (\d+)$/m.exec(metrics.text)?.[1]);
    };
    const before = await statements();
    const list = await tenant.request('GET', '/v1/product-categories');
    const afterList = await statements();
    expect(list.status).toBe(200);
    // 1 010 nodes, yet a bounded number of statements (count, roots, one recursive subtree query…), not one per node.
    expect(afterList - before).toBeGreaterThan(0);
    expect(afterList - before).toBeLessThanOrEqual(5);
    const tree = list.body.data[0];
    expect(tree.children).toHaveLength(1000);
    expect(tree.children[999].reference).toBe('wide-1000');
    let node = tree;
    let depth = 0;
    while (node.children.length > 0) {
      node = node.children[0];
      depth++;
    }
    expect(depth).toBe(9); // 10 levels: root + 9
    expect(node).toMatchObject({ reference: 'deep-9', has_products: true });
    const beforeOne = await statements();
    const one = await tenant.request('GET', `/v1/product-categories/${root.id}`);
    expect((await statements()) - beforeOne).toBeLessThanOrEqual(5);
    expect(one.body.data).toEqual(tree);
  });
});

describe('update', () => {
  test('rename and new reference via PUT, PATCH the same', async () => {
    const tenant = await stack.createTenant();
    const cat = await createCategory(tenant, { name: 'Old', reference: 'old' });
    await createCategory(tenant, { name: 'Taken', reference: 'taken' });
    const put = await tenant.request('PUT', `/v1/product-categories/${cat.id}`, { body: { name: 'New', reference: 'new' } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id: cat.id, name: 'New', reference: 'new', parent_id: null });
    expect(put.body.data.updated_at >= cat.updated_at).toBe(true);
    const patch = await tenant.request('PATCH', `/v1/product-categories/${cat.id}`, { body: { name: 'Newer' } });
    expect(patch.body.data).toMatchObject({ name: 'Newer', reference: 'new' });
    const same = await tenant.request('PUT', `/v1/product-categories/${cat.id}`, { body: { reference: 'new' } });
    expect(same.status).toBe(200);
    const dup = await tenant.request('PUT', `/v1/product-categories/${cat.id}`, { body: { reference: 'taken' } });
    expect(dup.status).toBe(409);
    const bad = await tenant.request('PUT', `/v1/product-categories/${cat.id}`, { body: { name: '', extra: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(['extra', 'name']);
    const read = await tenant.request('GET', `/v1/product-categories/${cat.id}`);
    expect(read.body.data).toMatchObject({ name: 'Newer', reference: 'new' });
  });

  test('move under another category carries the subtree; 0 moves back to the root', async () => {
    const tenant = await stack.createTenant();
    const a = await createCategory(tenant, { name: 'A', reference: 'a' });
    const b = await createCategory(tenant, { name: 'B', reference: 'b' });
    await createCategory(tenant, { name: 'B1', reference: 'b1', parent_id: b.id });
    const moved = await tenant.request('PUT', `/v1/product-categories/${b.id}`, { body: { parent_id: a.id } });
    expect(moved.status).toBe(200);
    expect(moved.body.data.parent_id).toBe(a.id);
    const list = await tenant.request('GET', '/v1/product-categories');
    expect(list.body.data.map((n: any) => shape(n))).toEqual([['0:a', '1:b', '2:b1']]);
    const back = await tenant.request('PATCH', `/v1/product-categories/${b.id}`, { body: { parent_id: 0 } });
    expect(back.body.data.parent_id).toBeNull();
    const after = await tenant.request('GET', '/v1/product-categories');
    expect(after.body.data.map((n: any) => shape(n))).toEqual([['0:a'], ['0:b', '1:b1']]);
  });

  test('moving under itself or a descendant → 422 on parent_id, tree unchanged', async () => {
    const tenant = await stack.createTenant();
    const a = await createCategory(tenant, { name: 'A', reference: 'a' });
    const a1 = await createCategory(tenant, { name: 'A1', reference: 'a1', parent_id: a.id });
    const a11 = await createCategory(tenant, { name: 'A11', reference: 'a11', parent_id: a1.id });
    for (const target of [a.id, a1.id, a11.id]) {
      const res = await tenant.request('PUT', `/v1/product-categories/${a.id}`, { body: { parent_id: target, name: 'Renamed' } });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'parent_id', message: expect.any(String) }]);
    }
    const unknown = await tenant.request('PUT', `/v1/product-categories/${a1.id}`, { body: { parent_id: 99999999 } });
    expect(unknown.status).toBe(422);
    const list = await tenant.request('GET', '/v1/product-categories');
    expect(list.body.data.map((n: any) => shape(n))).toEqual([['0:a', '1:a1', '2:a11']]);
    expect(list.body.data[0].name).toBe('A');
    // Moving a descendant up (not a cycle) is allowed.
    const up = await tenant.request('PUT', `/v1/product-categories/${a11.id}`, { body: { parent_id: a.id } });
    expect(up.status).toBe(200);
  });

  test('two crossing moves at once cannot make a cycle: one wins, the other is a 422', async () => {
    const tenant = await stack.createTenant();
    const a = await createCategory(tenant, { name: 'A', reference: 'a' });
    const b = await createCategory(tenant, { name: 'B', reference: 'b' });
    const results = await Promise.all([
      tenant.request('PUT', `/v1/product-categories/${a.id}`, { body: { parent_id: b.id } }),
      tenant.request('PUT', `/v1/product-categories/${b.id}`, { body: { parent_id: a.id } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
    expect((await tenant.request('GET', '/v1/product-categories')).body.data).toHaveLength(1);
  });

  test("another tenant's category cannot be updated or deleted (404)", async () => {
    const [tenant, other] = await Promise.all([stack.createTenant(), stack.createTenant()]);
    const cat = await createCategory(tenant, { name: 'Mine', reference: 'mine' });
    expect((await other.request('PUT', `/v1/product-categories/${cat.id}`, { body: { name: 'Hacked' } })).status).toBe(404);
    expect((await other.request('DELETE', `/v1/product-categories/${cat.id}`)).status).toBe(404);
    const list = await other.request('GET', '/v1/product-categories');
    expect(list.body.data).toEqual([]);
    expect((await tenant.request('GET', `/v1/product-categories/${cat.id}`)).body.data.name).toBe('Mine');
  });
});

describe('has_products and delete', () => {
  test('has_products is true exactly for the category that holds products', async () => {
    const tenant = await stack.createTenant();
    const parent = await createCategory(tenant, { name: 'P', reference: 'p' });
    const child = await createCategory(tenant, { name: 'C', reference: 'c', parent_id: parent.id });
    await createProduct(tenant, 'prod-1', 'c');
    const res = await tenant.request('GET', `/v1/product-categories/${parent.id}`);
    expect(res.body.data.has_products).toBe(false);
    expect(res.body.data.children[0]).toMatchObject({ id: child.id, has_products: true, has_objectives: false });
  });

  test('DELETE → 409 while it has children or products, then succeeds', async () => {
    const tenant = await stack.createTenant();
    const parent = await createCategory(tenant, { name: 'P', reference: 'p' });
    const child = await createCategory(tenant, { name: 'C', reference: 'c', parent_id: parent.id });
    await createProduct(tenant, 'prod-1', 'c');
    const withChildren = await tenant.request('DELETE', `/v1/product-categories/${parent.id}`);
    expect(withChildren.status).toBe(409);
    expect(withChildren.body.error.type).toBe('conflict');
    const withProducts = await tenant.request('DELETE', `/v1/product-categories/${child.id}`);
    expect(withProducts.status).toBe(409);
    expect((await tenant.request('DELETE', '/v1/products/prod-1')).status).toBe(200);
    const deleted = await tenant.request('DELETE', `/v1/product-categories/${child.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expect((await tenant.request('GET', `/v1/product-categories/${child.id}`)).status).toBe(404);
    expect((await tenant.request('DELETE', `/v1/product-categories/${parent.id}`)).status).toBe(200);
    expect((await tenant.request('DELETE', `/v1/product-categories/${parent.id}`)).status).toBe(404);
  });
});

describe('events', () => {
  test('created and updated carry the category with its subtree as returned, deleted { id, reference }; a refused write adds none', async () => {
    const tenant = await stack.createTenant();
    const cat = await createCategory(tenant, { name: 'Ev', reference: 'ev' });
    const child = await createCategory(tenant, { name: 'Child', reference: 'ev-child', parent_id: cat.id });
    const updated = (await tenant.request('PUT', `/v1/product-categories/${cat.id}`, { body: { name: 'Ev2' } })).body.data;
    expect(updated.children.map((c: any) => c.id)).toEqual([child.id]);
    const failed = await tenant.request('POST', '/v1/product-categories', { body: { name: 'X', reference: 'ev2', parent_id: 424242 } });
    expect(failed.status).toBe(422);
    expect((await tenant.request('DELETE', `/v1/product-categories/${child.id}`)).status).toBe(200);
    const events = await settledFeed(tenant);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'product_category.created', data: cat },
      { type: 'product_category.created', data: child },
      { type: 'product_category.updated', data: updated },
      { type: 'product_category.deleted', data: { id: child.id, reference: 'ev-child' } },
    ]);
    for (const event of events) expect(eventPayloadErrors(event.type as EventType, event.data)).toEqual([]);
  });
});

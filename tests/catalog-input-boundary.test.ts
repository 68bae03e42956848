// Contract §19 on every catalog route: each class of malformed input is a 4xx naming the field,
// never a 5xx, and a refused write leaves nothing behind (no row, no event, no id taken).
import { beforeAll, describe, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { sql } from 'kysely';
import { m0001Catalog } from '../services/catalog/src/db/migrations/0001_catalog.ts';
import { m0002InputBounds } from '../services/catalog/src/db/migrations/0002_input_bounds.ts';
import { product, settledFeed } from './catalog-fixtures.ts';

let stack: Stack;
let tenant: TestTenant;
/** The tenant's categories: `tools` (root) ⊃ `drills` ⊃ `bits`. */
let tools: any;
let drills: any;
let bits: any;
/** A product of the tenant, `KEEP-1`, that refused writes must leave as it is. */
let kept: any;

const MAX_INT = 2_147_483_647;

async function created(res: { status: number; text: string; body: any }) {
  if (res.status !== 201) throw new Error(`expected 201, got ${res.status} ${res.text}`);
  return res.body.data;
}

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  tools = await created(await tenant.request('POST', '/v1/product-categories', { body: { name: 'Tools', reference: 'tools' } }));
  drills = await created(
    await tenant.request('POST', '/v1/product-categories', { body: { name: 'Drills', reference: 'drills', parent_id: tools.id } }),
  );
  bits = await created(
    await tenant.request('POST', '/v1/product-categories', { body: { name: 'Bits', reference: 'bits', parent_id: drills.id } }),
  );
  kept = await created(await tenant.request('POST', '/v1/products', { body: product('KEEP-1') }));
}, 120_000);

/** Everything a write could leave behind in the catalog's tables: the tenant's rows and the id sequences. */
async function footprint() {
  const { rows } = await stack.sql(
    `select
      (select count(*) from catalog.product_categories where tenant_id = $1)::int as categories,
      (select count(*) from catalog.products where tenant_id = $1)::int as products,
      (select count(*) from catalog.product_rates where tenant_id = $1)::int as rates,
      (select count(*) from catalog.vat_rates where tenant_id = $1)::int as vat_rates,
      (select last_value from catalog.product_categories_id_seq)::text as category_seq,
      (select last_value from catalog.products_id_seq)::text as product_seq,
      (select last_value from catalog.product_rates_id_seq)::text as rate_seq,
      (select json_agg(p order by p.id) from catalog.products p where tenant_id = $1)::text as product_rows,
      (select json_agg(c order by c.id) from catalog.product_categories c where tenant_id = $1)::text as category_rows`,
    [tenant.tenantId],
  );
  return rows[0];
}

/** Runs refused requests and checks that none of them changed anything: rows, sequences, events (as the feed lists them). */
async function leavesNothing(requests: () => Promise<void>) {
  const eventsBefore = await settledFeed(tenant);
  const before = await footprint();
  await requests();
  expect(await footprint()).toEqual(before);
  expect(await settledFeed(tenant)).toEqual(eventsBefore);
}

type Answer = { status: number; text: string; body: any };

/** A 422 validation_error whose details are exactly these fields (in any order); returns field → message. */
function expect422(res: Answer, fields: string[]): Record<string, string> {
  if (res.status !== 422) throw new Error(`expected 422, got ${res.status} ${res.text}`);
  expect(res.body.error.type).toBe('validation_error');
  const details: { field: string; message: string }[] = res.body.error.details;
  expect(details.map((d) => d.field).sort()).toEqual([...fields].sort());
  for (const d of details) expect(res.body.error.message).toContain(`${d.field} ${d.message}`);
  return Object.fromEntries(details.map((d) => [d.field, d.message]));
}

function expectStatus(res: Answer, status: number, type: string) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text}`);
  expect(res.body.error.type).toBe(type);
}

/** POST /internal/products/lookup straight to catalog (as sales calls it); `raw` is sent as JSON text. */
const lookup = (body: unknown, raw?: string) => {
  const headers = { 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenantId };
  return stack.call(
    'catalog',
    'POST',
    '/internal/products/lookup',
    raw === undefined ? { body, headers } : { raw, headers: { ...headers, 'content-type': 'application/json' } },
  );
};

const NUL = 'must not contain the NUL character (U+0000)';

describe('catalog input boundary (contract §19)', () => {
  test('U+0000 in a body string or key → 422 naming the field; nothing written', async () => {
    await leavesNothing(async () => {
      expect(expect422(await tenant.request('POST', '/v1/products', { body: product('N-1', { name: 'a\u0000b' }) }), ['name'])).toEqual({
        name: NUL,
      });
      expect422(await tenant.request('POST', '/v1/products', { body: product('N-2', { rates: [{ sku: 'x\u0000', price: 1 }] }) }), [
        'rates[0].sku',
      ]);
      expect422(
        await tenant.request('POST', '/v1/products', { body: product('N-3', { rates: [{ sku: 'ok', price: 1, 'co\u0000lour': 1 }] }) }),
        ['rates[0].co\\u0000lour'],
      );
      expect422(
        await tenant.request('POST', '/v1/products/batch', {
          body: { data: [product('N-4'), product('N-5', { rates: [{ sku: '\u0000', price: 1 }] })] },
        }),
        ['data[1].rates[0].sku'],
      );
      expect422(await tenant.request('PUT', '/v1/products/KEEP-1', { body: { description: 'x\u0000' } }), ['description']);
      expect422(await tenant.request('PATCH', '/v1/products/KEEP-1', { body: { rates: [{ sku: 'KEEP-1-A', price: 1, x: '\u0000' }] } }), [
        'rates[0].x',
      ]);
      expect422(await tenant.request('POST', '/v1/product-categories', { body: { name: 'N', reference: 'r\u0000' } }), ['reference']);
      expect422(await tenant.request('PUT', `/v1/product-categories/${bits.id}`, { body: { name: '\u0000' } }), ['name']);
      expect422(await lookup({ references: ['KEEP-1', 'a\u0000'] }), ['references[1]']);
    });
  });

  test('U+0000 in a path segment or query value → 422 naming the parameter; in a numeric id → 404', async () => {
    await leavesNothing(async () => {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const res = await tenant.request(method, '/v1/products/KEEP-1%00', method.startsWith('P') ? { body: { name: 'x' } } : {});
        expect(expect422(res, ['reference'])).toEqual({ reference: NUL });
      }
      expect(expect422(await tenant.request('GET', '/v1/products?q=a%00b'), ['q'])).toEqual({ q: NUL });
      expect422(await tenant.request('GET', '/v1/products?colour=%00'), ['colour']);
      expect422(await tenant.request('GET', '/v1/product-categories?sort=name%00'), ['sort']);
      expect422(await tenant.request('GET', '/v1/product-categories?updated_since=2026-01-01T00:00:00Z%00'), ['updated_since']);
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await tenant.request(method, `/v1/product-categories/${tools.id}%00`, method === 'PUT' ? { body: { name: 'x' } } : {});
        expectStatus(res, 404, 'not_found');
      }
    });
  });

  test('ids: a path id outside 1..2147483647 is not found; body and query integers state their bounds', async () => {
    await leavesNothing(async () => {
      for (const id of ['0', '-1', '2147483648', '99999999999999999999', 'abc', '1.5', '1e3', '%20']) {
        for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
          const res = await tenant.request(method, `/v1/product-categories/${id}`, method.startsWith('P') ? { body: { name: 'x' } } : {});
          expectStatus(res, 404, 'not_found');
        }
      }
      const parent = (parent_id: unknown) =>
        tenant.request('POST', '/v1/product-categories', { body: { name: 'P', reference: 'p', parent_id } });
      expect(expect422(await parent(MAX_INT + 1), ['parent_id'])).toEqual({ parent_id: 'must be at most 2147483647' });
      expect(expect422(await parent(-1), ['parent_id'])).toEqual({ parent_id: 'must be at least 0' });
      expect(expect422(await parent(1.5), ['parent_id'])).toEqual({ parent_id: 'must be an integer' });
      expect(expect422(await parent(MAX_INT), ['parent_id'])).toEqual({
        parent_id: 'must be the id of a product category of this account',
      });
      expect422(await tenant.request('PUT', `/v1/product-categories/${bits.id}`, { body: { parent_id: 1e20 } }), ['parent_id']);
    });
    const list = (query: string) => tenant.request('GET', `/v1/products?${query}`);
    expect(expect422(await list(`product_category_id=${MAX_INT + 1}`), ['product_category_id'])).toEqual({
      product_category_id: 'must be at most 2147483647',
    });
    expect(expect422(await list('product_category_id=0'), ['product_category_id'])).toEqual({ product_category_id: 'must be at least 1' });
    expect(expect422(await list('product_category_id=1e3'), ['product_category_id'])).toEqual({
      product_category_id: 'must be an integer',
    });
    expect((await list(`product_category_id=${MAX_INT}`)).body.data).toEqual([]);
    for (const path of ['/v1/products', '/v1/product-categories']) {
      expect(expect422(await tenant.request('GET', `${path}?page=${MAX_INT + 1}`), ['page'])).toEqual({
        page: 'must be at most 2147483647',
      });
      expect(expect422(await tenant.request('GET', `${path}?page=0`), ['page'])).toEqual({ page: 'must be at least 1' });
      expect(expect422(await tenant.request('GET', `${path}?page=99999999999999999999`), ['page'])).toEqual({
        page: 'must be at most 2147483647',
      });
      expect(expect422(await tenant.request('GET', `${path}?per_page=101`), ['per_page'])).toEqual({ per_page: 'must be at most 100' });
      expect(expect422(await tenant.request('GET', `${path}?per_page=0&page=-1&sort=colour`), ['per_page', 'page', 'sort'])).toMatchObject({
        per_page: 'must be at least 1',
      });
      const last = await tenant.request('GET', `${path}?page=${MAX_INT}&per_page=100`);
      expect(last.status).toBe(200);
      expect(last.body.data).toEqual([]);
      expect(last.body.pagination).toMatchObject({ current_page: MAX_INT, per_page: 100, has_more: false });
    }
  });

  test('numbers are finite and bounded: price, cost, stock 0..999999999999.99; vat 0..100', async () => {
    await leavesNothing(async () => {
      const raw = JSON.stringify(product('F-1')).replace('"price":2', '"price":1e400');
      const infinite = await tenant.request('POST', '/v1/products', { raw, headers: { 'content-type': 'application/json' } });
      expect(expect422(infinite, ['rates[0].price'])).toEqual({ 'rates[0].price': 'must be a finite number' });
      const bad = await tenant.request('POST', '/v1/products', {
        body: product('F-2', {
          vat: 100.01,
          stock: 1e15,
          rates: [
            { sku: 'a', price: 1_000_000_000_000, cost: -0.01 },
            { sku: 'b', price: 999_999_999_999.995 },
          ],
        }),
      });
      expect(expect422(bad, ['vat', 'stock', 'rates[0].price', 'rates[0].cost', 'rates[1].price'])).toEqual({
        vat: 'must be at most 100',
        stock: 'must be at most 999999999999.99',
        'rates[0].price': 'must be at most 999999999999.99',
        'rates[0].cost': 'must be at least 0',
        'rates[1].price': 'must be at most 999999999999.99',
      });
      expect(
        expect422(
          await tenant.request('PUT', '/v1/products/KEEP-1', { body: { vat: -1, stock: -0.5, rates: [{ sku: 's', price: '5' }] } }),
          ['vat', 'stock', 'rates[0].price'],
        ),
      ).toEqual({ vat: 'must be at least 0', stock: 'must be at least 0', 'rates[0].price': 'must be a number' });
    });
    // The bounds themselves are accepted, stored exactly, and read back, listed and deleted.
    const edge = await created(
      await tenant.request('POST', '/v1/products', {
        body: product('EDGE-1', { vat: 100, stock: 999_999_999_999.99, rates: [{ sku: 'EDGE-1-A', cost: 0, price: 999_999_999_999.99 }] }),
      }),
    );
    expect(edge).toMatchObject({ stock: 999_999_999_999.99, rates: [{ sku: 'EDGE-1-A', cost: 0, price: 999_999_999_999.99 }] });
    expect((await tenant.request('GET', '/v1/products/EDGE-1')).body.data).toEqual(edge);
    expect((await tenant.request('GET', '/v1/products?q=EDGE')).body.data).toEqual([edge]);
    expect((await tenant.request('DELETE', '/v1/products/EDGE-1')).body).toEqual({ deleted: true });
  });

  test('timestamps: updated_since must be a real RFC 3339 instant with Z or an offset', async () => {
    const message = 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset';
    for (const path of ['/v1/products', '/v1/product-categories']) {
      for (const value of [
        '2026-02-30T00:00:00Z',
        '2026-01-01',
        '2026-01-01T00:00:00',
        '2026-13-01T00:00:00Z',
        '2026-01-01T24:00:00Z',
        'x',
      ]) {
        const res = await tenant.request('GET', `${path}?updated_since=${encodeURIComponent(value)}`);
        expect(expect422(res, ['updated_since'])).toEqual({ updated_since: message });
      }
      const ok = await tenant.request('GET', `${path}?updated_since=${encodeURIComponent('2000-01-01T00:00:00+02:00')}`);
      expect(ok.status).toBe(200);
      expect(ok.body.data.length).toBeGreaterThan(0);
    }
  });

  test('unknown fields are rejected at every depth', async () => {
    await leavesNothing(async () => {
      const unknown = (res: Answer, fields: string[]) => {
        for (const message of Object.values(expect422(res, fields))) expect(message).toBe('is not a known field');
      };
      unknown(await tenant.request('POST', '/v1/products', { body: product('U-1', { rates: [{ sku: 'u', price: 1, colour: 'red' }] }) }), [
        'rates[0].colour',
      ]);
      unknown(
        await tenant.request('PUT', '/v1/products/KEEP-1', {
          body: {
            rates: [
              { sku: 'KEEP-1-A', price: 1 },
              { sku: 'KEEP-1-B', price: 1, discount: 5 },
            ],
          },
        }),
        ['rates[1].discount'],
      );
      unknown(
        await tenant.request('POST', '/v1/products/batch', {
          body: { data: [{ ...product('U-2'), colour: 1 }, product('U-3', { rates: [{ sku: 'u3', price: 1, x: 1 }] })], extra: true },
        }),
        ['data[0].colour', 'data[1].rates[0].x', 'extra'],
      );
      unknown(await tenant.request('POST', '/v1/product-categories', { body: { name: 'C', reference: 'c', children: [] } }), ['children']);
      unknown(await tenant.request('PATCH', `/v1/product-categories/${bits.id}`, { body: { colour: 'red' } }), ['colour']);
      unknown(await lookup({ references: [], colour: 'red' }), ['colour']);
    });
  });

  test('a JSON endpoint answers 400 to another Content-Type or malformed JSON; nothing written', async () => {
    await leavesNothing(async () => {
      const json = JSON.stringify(product('CT-1'));
      const form = new FormData();
      form.set('reference', 'CT-1');
      form.set('name', 'x');
      for (const [path, method] of [
        ['/v1/products', 'POST'],
        ['/v1/products/batch', 'POST'],
        ['/v1/products/KEEP-1', 'PUT'],
        ['/v1/product-categories', 'POST'],
        [`/v1/product-categories/${bits.id}`, 'PATCH'],
      ] as const) {
        expectStatus(await tenant.request(method, path, { raw: form }), 400, 'bad_request');
        const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
        expectStatus(await tenant.request(method, path, { raw: 'reference=CT-1&name=x', headers: urlencoded }), 400, 'bad_request');
        expectStatus(await tenant.request(method, path, { raw: json, headers: { 'content-type': 'text/plain' } }), 400, 'bad_request');
        const asJson = { 'content-type': 'application/json' };
        expectStatus(await tenant.request(method, path, { raw: '{"name": "x",', headers: asJson }), 400, 'bad_request');
        expectStatus(await tenant.request(method, path, { raw: '{"name": "\\ud800"}', headers: asJson }), 400, 'bad_request');
        const notUtf8 = new Uint8Array([...new TextEncoder().encode('{"name": "'), 0xff, 0xfe, ...new TextEncoder().encode('"}')]);
        expectStatus(await tenant.request(method, path, { raw: notUtf8, headers: asJson }), 400, 'bad_request');
        expectStatus(
          await tenant.request(method, path, { raw: `${'['.repeat(70)}${']'.repeat(70)}`, headers: asJson }),
          400,
          'bad_request',
        );
      }
      expectStatus(await lookup(undefined, '{"references": ["\\udc00"]}'), 400, 'bad_request');
    });
  });

  test('one 422 carries the schema failures and the database rules together', async () => {
    await leavesNothing(async () => {
      const productRes = await tenant.request('POST', '/v1/products', {
        body: product('R-1', {
          name: '',
          product_category_ref: 'nope',
          rates: [
            { sku: 's', price: 1, primary: true },
            { sku: 's', price: -1, primary: true },
          ],
        }),
      });
      expect(expect422(productRes, ['name', 'rates[1].price', 'product_category_ref', 'rates', 'rates[1].sku'])).toEqual({
        name: 'must not be empty',
        'rates[1].price': 'must be at least 0',
        product_category_ref: 'must be the reference of a product category of this account',
        rates: 'must have at most one primary rate',
        'rates[1].sku': 'must not repeat rates[0].sku',
      });
      const put = await tenant.request('PUT', '/v1/products/KEEP-1', {
        body: { stock: -1, product_category_ref: 'nope', rates: [{ sku: 'KEEP-1-A', price: 1 }, { sku: 'KEEP-1-A' }] },
      });
      expect422(put, ['stock', 'rates[1].price', 'product_category_ref', 'rates[1].sku']);
      const batch = await tenant.request('POST', '/v1/products/batch', {
        body: { data: [product('B-1', { name: 'x'.repeat(256) }), product('B-2', { product_category_ref: 'nope' }), product('B-1'), 'x'] },
      });
      expect(
        expect422(batch, ['data[0].name', 'data[1].product_category_ref', 'data[2].reference', 'data[2].rates[0].sku', 'data[3]']),
      ).toEqual({
        'data[0].name': 'must be at most 255 characters',
        'data[1].product_category_ref': 'must be the reference of a product category of this account',
        'data[2].reference': 'must not repeat data[0].reference',
        'data[2].rates[0].sku': 'must not repeat data[0].rates[0].sku',
        'data[3]': 'must be an object',
      });
      // Over the batch limit, the batch itself is the failing field (its items are not looked up).
      const tooMany = Array.from({ length: 101 }, (_, i) => product(`M-${i}`, { product_category_ref: 'nope' }));
      expect(expect422(await tenant.request('POST', '/v1/products/batch', { body: { data: tooMany } }), ['data'])).toEqual({
        data: 'must have at most 100 items',
      });
      // A move under its own descendant is reported with the other failures of the same body.
      const move = await tenant.request('PUT', `/v1/product-categories/${tools.id}`, { body: { name: '', parent_id: bits.id } });
      expect(expect422(move, ['name', 'parent_id'])).toEqual({
        name: 'must not be empty',
        parent_id: 'must not be the category itself or one of its descendants',
      });
      const unknownParent = await tenant.request('POST', '/v1/product-categories', { body: { reference: 'x', parent_id: 999_999_999 } });
      expect(expect422(unknownParent, ['name', 'parent_id'])).toEqual({
        name: 'is required',
        parent_id: 'must be the id of a product category of this account',
      });
      // The same rules alone, on a body that passes its schema.
      expect(
        expect422(await tenant.request('PATCH', `/v1/product-categories/${tools.id}`, { body: { parent_id: tools.id } }), ['parent_id']),
      ).toEqual({
        parent_id: 'must not be the category itself or one of its descendants',
      });
    });
  });

  test('the internal lookup used by sales answers odd input with 4xx', async () => {
    await leavesNothing(async () => {
      for (const body of [[], 'x', null, 5, {}, { references: 'KEEP-1' }, { references: [1] }, { references: Array(501).fill('a') }])
        expectStatus(await lookup(body), 422, 'validation_error');
      expectStatus(await lookup(undefined, ''), 422, 'validation_error');
      const long = await lookup({ references: ['x'.repeat(100_000), '%', '\\', "'"] });
      expect(long.status).toBe(200);
      expect(long.body).toEqual({ data: [] });
    });
  });

  test('odd paths and queries never reach a 5xx', async () => {
    for (const path of [
      '/v1/products/%FF',
      '/v1/products/%E0%A4%A',
      `/v1/products/${'x'.repeat(5000)}`,
      '/v1/products?q=%FF',
      '/v1/products?q=%25_%5C',
      '/v1/products?q=' + 'x'.repeat(5000),
      '/v1/products?product_category_id=1&product_category_id=2',
      '/v1/products?page=1&page=2147483648',
      '/v1/product-categories?sort=-',
      '/v1/product-categories/%FF',
    ]) {
      for (const method of ['GET', 'DELETE']) {
        const res = await tenant.request(method, path);
        expect([200, 404, 405, 422].includes(res.status) ? 'ok' : `${method} ${path} → ${res.status} ${res.text}`).toBe('ok');
      }
    }
  });
});

describe('the database holds the same bounds', () => {
  test('a direct insert or update out of bounds fails on a CHECK or foreign key', async () => {
    const other = await stack.createTenant();
    const theirs = await created(await other.request('POST', '/v1/product-categories', { body: { name: 'T', reference: 'theirs' } }));
    const t = tenant.tenantId;
    const failing: [string, unknown[]][] = [
      ['insert into catalog.vat_rates (tenant_id, percentage) values ($1, 100.01)', [t]],
      ['insert into catalog.vat_rates (tenant_id, percentage) values ($1, -1)', [t]],
      ["insert into catalog.vat_rates (tenant_id, percentage) values ($1, 'NaN')", [t]],
      ['update catalog.products set stock = -1 where id = $1', [kept.id]],
      ["update catalog.products set stock = 'NaN' where id = $1", [kept.id]],
      ['update catalog.products set stock = 999999999999.995 where id = $1', [kept.id]],
      ["update catalog.products set name = '' where id = $1", [kept.id]],
      ['update catalog.products set reference = repeat($2, 256) where id = $1', [kept.id, 'r']],
      ['update catalog.products set description = repeat($2, 65536) where id = $1', [kept.id, 'd']],
      ['update catalog.products set product_category_id = $2 where id = $1', [kept.id, theirs.id]],
      ['update catalog.product_rates set price = -0.01 where product_id = $1', [kept.id]],
      ["update catalog.product_rates set cost = 'NaN' where product_id = $1", [kept.id]],
      ["update catalog.product_rates set sku = '' where product_id = $1", [kept.id]],
      ['update catalog.product_categories set parent_id = id where id = $1', [tools.id]],
      ['update catalog.product_categories set parent_id = $2 where id = $1', [tools.id, theirs.id]],
      ['update catalog.product_categories set name = repeat($2, 256) where id = $1', [tools.id, 'n']],
    ];
    for (const [statement, params] of failing) {
      const error = await stack.sql(statement, params).then(
        () => undefined,
        (e: { code?: string }) => e,
      );
      expect(['23514', '23503'].includes(error?.code ?? '') ? 'refused' : `${statement} → ${error?.code ?? 'stored'}`).toBe('refused');
    }
    expect((await tenant.request('GET', '/v1/products/KEEP-1')).body.data).toEqual(kept);
  });

  test('the migration repairs rows that break the bounds (scratch schema, then dropped)', async () => {
    const schema = `catalog_repair_${crypto.randomUUID().slice(0, 8)}`;
    const { db } = createDb<any>({ url: stack.databaseUrl, schema, max: 1 });
    try {
      await migrate(db, schema, [m0001Catalog]);
      const run = (text: string) => sql.raw(text).execute(db);
      await run(`insert into vat_rates (id, tenant_id, percentage) values (1, 't', 21), (2, 't', 150), (3, 't', 'NaN'), (4, 't', 100)`);
      await run(`insert into product_categories (id, tenant_id, name, reference, parent_id) values
        (1, 't', 'ok', 'ok', null), (2, 't', '', '', null), (3, 't', repeat('n', 300), repeat('r', 300), null),
        (4, 't', 'self', 'self', null), (5, 't', 'a', 'a', null), (6, 't', 'b', 'b', 5), (7, 't', 'c', 'c', 6),
        (8, 'u', 'other', 'other', null), (9, 't', 'x', 'x', 8)`);
      await run('update product_categories set parent_id = 4 where id = 4');
      await run('update product_categories set parent_id = 7 where id = 5');
      await run(`insert into products (id, tenant_id, reference, name, vat_id, product_category_id, stock, description) values
        (1, 't', 'p1', 'P1', 2, 1, 'NaN', repeat('d', 70000)), (2, 't', '', '', 3, 1, -1, null),
        (3, 't', 'p3', 'P3', 1, 8, 1, null), (4, 't', 'p4', 'P4', 1, 1, 999999999999.995, null)`);
      await run(`insert into product_rates (id, tenant_id, product_id, position, sku, cost, price, is_primary) values
        (1, 't', 1, 0, 's1', -1, 'NaN', true), (2, 't', 2, 0, '', 1, 2, true), (3, 't', 3, 0, 's3', 1, 1, true),
        (4, 't', 4, 0, repeat('s', 256), 1, 1, true)`);
      for (const table of ['vat_rates', 'product_categories', 'products', 'product_rates'])
        await run(`select setval(pg_get_serial_sequence('${table}', 'id'), 100)`);

      expect(await migrate(db, schema, [m0001Catalog, m0002InputBounds])).toEqual(['0002_input_bounds']);

      const rows = async (text: string) => (await sql.raw<any>(text).execute(db)).rows;
      const vat = await rows('select id, percentage from vat_rates order by id');
      expect(vat.map((r: any) => r.percentage)).toEqual(['21.00', '100.00', '0.00']);
      const zeroVat = vat[2].id;
      expect(
        await rows('select id, name, char_length(reference) as reference_length, parent_id from product_categories order by id'),
      ).toEqual([
        { id: 1, name: 'ok', reference_length: 2, parent_id: null },
        { id: 2, name: 'category-2', reference_length: 10, parent_id: null },
        { id: 3, name: 'n'.repeat(255), reference_length: 202, parent_id: null },
        { id: 4, name: 'self', reference_length: 4, parent_id: null },
        { id: 5, name: 'a', reference_length: 1, parent_id: null },
        { id: 6, name: 'b', reference_length: 1, parent_id: 5 },
        { id: 7, name: 'c', reference_length: 1, parent_id: 6 },
        { id: 8, name: 'other', reference_length: 5, parent_id: null },
        { id: 9, name: 'x', reference_length: 1, parent_id: null },
      ]);
      expect(
        await rows('select id, reference, name, vat_id, stock, char_length(description) as description_length from products order by id'),
      ).toEqual([
        { id: 1, reference: 'p1', name: 'P1', vat_id: 4, stock: null, description_length: 65535 },
        { id: 2, reference: 'product-2', name: 'product-2', vat_id: zeroVat, stock: null, description_length: null },
        { id: 4, reference: 'p4', name: 'P4', vat_id: 1, stock: null, description_length: null },
      ]);
      expect(await rows('select id, char_length(sku) as sku_length, cost, price from product_rates order by id')).toEqual([
        { id: 1, sku_length: 2, cost: '0.00', price: '0.00' },
        { id: 2, sku_length: 6, cost: '1.00', price: '2.00' },
        { id: 4, sku_length: 202, cost: '1.00', price: '1.00' },
      ]);
    } finally {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      await db.destroy();
    }
  });
});

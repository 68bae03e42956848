// Contract §21 on every catalog write: the service records a keyed write's answer in the write's
// own transaction, so a retry whose gateway record was lost (a gateway that died between the
// service's commit and its own store) gets the recorded answer and writes nothing more; a
// refused write records nothing; one key sent twice at once executes once.
import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, send, sharedStack, until } from '@crm/testing';
import pg from 'pg';
import { create, type FeedEvent, ofType, product, settledFeed } from './catalog-fixtures.ts';
import { forgetGatewayRecord, writeAndRetry } from './exactly-once.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

const summary = (events: FeedEvent[]) => events.map(({ type, data }) => ({ type, data }));

async function tenantWithTools() {
  const tenant = await stack.createTenant();
  const res = await tenant.request('POST', '/v1/product-categories', { body: { name: 'Tools', reference: 'tools' } });
  if (res.status !== 201) throw new Error(`category creation failed: ${res.status} ${res.text}`);
  return tenant;
}

describe('a retry whose gateway record was lost gets the recorded answer and writes nothing more', () => {
  test('categories: create, PUT, PATCH, DELETE', async () => {
    const tenant = await stack.createTenant();
    const root = (await writeAndRetry(stack, tenant, 'POST', '/v1/product-categories', { name: 'Tools', reference: 'tools' })).body.data;
    const child = (
      await writeAndRetry(stack, tenant, 'POST', '/v1/product-categories', { name: 'Drills', reference: 'drills', parent_id: root.id })
    ).body.data;
    const put = (await writeAndRetry(stack, tenant, 'PUT', `/v1/product-categories/${child.id}`, { name: 'Power drills' })).body.data;
    const patch = (await writeAndRetry(stack, tenant, 'PATCH', `/v1/product-categories/${root.id}`, { reference: 'tools-2' })).body.data;
    expect(patch.children).toEqual([put]);
    expect((await writeAndRetry(stack, tenant, 'DELETE', `/v1/product-categories/${child.id}`)).body).toEqual({ deleted: true });

    expect((await tenant.request('GET', `/v1/product-categories/${child.id}`)).status).toBe(404);
    const list = await tenant.request('GET', '/v1/product-categories');
    expect(list.body.data).toEqual([{ ...patch, children: [] }]);
    expect(summary(await settledFeed(tenant))).toEqual([
      { type: 'product_category.created', data: root },
      { type: 'product_category.created', data: child },
      { type: 'product_category.updated', data: put },
      { type: 'product_category.updated', data: patch },
      { type: 'product_category.deleted', data: { id: child.id, reference: 'drills' } },
    ]);
  });

  test('products: create, batch, PUT, PATCH, upsert by reference and by sku, DELETE', async () => {
    const tenant = await tenantWithTools();
    const made = (await writeAndRetry(stack, tenant, 'POST', '/v1/products', product('P-1'))).body.data;
    const batch = (await writeAndRetry(stack, tenant, 'POST', '/v1/products/batch', { data: [product('P-2'), product('P-3')] })).body.data;
    const put = (await writeAndRetry(stack, tenant, 'PUT', '/v1/products/P-1', { name: 'Renamed', rates: [{ sku: 'P-1-B', price: 7 }] }))
      .body.data;
    const patch = (await writeAndRetry(stack, tenant, 'PATCH', '/v1/products/P-2', { stock: 5 })).body.data;
    const upsert = (
      await writeAndRetry(stack, tenant, 'POST', '/v1/products/batch/upsert', {
        id_property: 'reference',
        data: [{ reference: 'P-3', name: 'Upserted' }, product('P-4')],
      })
    ).body;
    expect(upsert.created).toEqual([false, true]);
    const bySku = (
      await writeAndRetry(stack, tenant, 'POST', '/v1/products/batch/upsert', { id_property: 'sku', data: [{ sku: 'P-4-A', stock: 9 }] })
    ).body;
    expect(bySku.created).toEqual([false]);
    expect((await writeAndRetry(stack, tenant, 'DELETE', '/v1/products/P-1')).body).toEqual({ deleted: true });

    const list = await tenant.request('GET', '/v1/products?sort=reference');
    expect(list.body.data).toEqual([patch, upsert.data[0], bySku.data[0]]);
    expect(summary(ofType(await settledFeed(tenant), 'product.'))).toEqual([
      { type: 'product.created', data: made },
      { type: 'product.created', data: batch[0] },
      { type: 'product.created', data: batch[1] },
      { type: 'product.updated', data: put },
      { type: 'product.updated', data: patch },
      { type: 'product.updated', data: upsert.data[0] },
      { type: 'product.created', data: upsert.data[1] },
      { type: 'product.updated', data: bySku.data[0] },
      { type: 'product.deleted', data: { id: made.id, reference: 'P-1' } },
    ]);
  });

  test('the same key with another body is refused by the service too (422 idempotency_key_reused), and writes nothing', async () => {
    const tenant = await tenantWithTools();
    const key = crypto.randomUUID();
    const first = await tenant.request('POST', '/v1/products', { body: product('K-1'), headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    await forgetGatewayRecord(stack, tenant, key);
    const other = await tenant.request('POST', '/v1/products', { body: product('K-2'), headers: { 'idempotency-key': key } });
    expect(other.status).toBe(422);
    expect(other.body.error.type).toBe('idempotency_key_reused');
    expect((await tenant.request('GET', '/v1/products/K-2')).status).toBe(404);
    expect(ofType(await settledFeed(tenant), 'product.').map((e) => e.data.reference)).toEqual(['K-1']);
  });
});

describe('a refused write records nothing', () => {
  test('a 422: the same key with a corrected body then creates', async () => {
    const tenant = await tenantWithTools();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const bad = await tenant.request('POST', '/v1/products', { body: product('R-1', { product_category_ref: 'nope' }), headers });
    expect(bad.status).toBe(422);
    const good = await tenant.request('POST', '/v1/products', { body: product('R-1'), headers });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  test('a 409 and a 404: once the conflict is gone, the same key and body execute (not a replay)', async () => {
    const tenant = await tenantWithTools();
    await create(tenant, product('C-1'));
    const createKey = { 'idempotency-key': crypto.randomUUID() };
    const conflict = await tenant.request('POST', '/v1/products', { body: product('C-1'), headers: createKey });
    expect(conflict.status).toBe(409);
    const deleteKey = { 'idempotency-key': crypto.randomUUID() };
    const missing = await tenant.request('DELETE', '/v1/products/C-2', { headers: deleteKey });
    expect(missing.status).toBe(404);
    // The gateway stores both (status < 500): forget its records so the retries reach the service.
    await forgetGatewayRecord(stack, tenant, createKey['idempotency-key']);
    await forgetGatewayRecord(stack, tenant, deleteKey['idempotency-key']);

    expect((await tenant.request('DELETE', '/v1/products/C-1')).status).toBe(200);
    const created = await tenant.request('POST', '/v1/products', { body: product('C-1'), headers: createKey });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    await create(tenant, product('C-2'));
    const deleted = await tenant.request('DELETE', '/v1/products/C-2', { headers: deleteKey });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('one key at once: one execution', () => {
  test('through two gateway replicas', async () => {
    const tenant = await tenantWithTools();
    const replica = await stack.startGatewayReplica();
    for (let round = 0; round < 5; round++) {
      const reference = `TWICE-${round}`;
      const headers = { 'idempotency-key': crypto.randomUUID() };
      const answers = await Promise.all([
        tenant.request('POST', '/v1/products', { body: product(reference), headers }),
        send(replica.url, 'POST', '/v1/products', { body: product(reference), headers: { ...headers, 'x-api-key': tenant.apiKey } }),
      ]);
      // The other request either waited for the answer (a replay) or found the key in use.
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const a of answers) if (a.status !== 201) expect(a.body.error.type).toBe('idempotency_key_in_use');
      for (const a of created) expect(a.body).toEqual(created[0]?.body);
    }
    const list = await tenant.request('GET', '/v1/products?sort=reference');
    expect(list.body.data.map((p: any) => p.reference)).toEqual(['TWICE-0', 'TWICE-1', 'TWICE-2', 'TWICE-3', 'TWICE-4']);
    expect(ofType(await settledFeed(tenant), 'product.').map((e) => e.data.reference)).toEqual([
      'TWICE-0',
      'TWICE-1',
      'TWICE-2',
      'TWICE-3',
      'TWICE-4',
    ]);
  });

  test('straight to the service (no gateway store at all): the second waits on the key and replays the first', async () => {
    const tenant = await tenantWithTools();
    const headers = {
      'x-internal-token': stack.internalToken,
      'x-tenant-id': tenant.tenantId,
      'idempotency-key': crypto.randomUUID(),
    };
    const body = { data: [product('DIRECT-1'), product('DIRECT-2')] };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => stack.call('catalog', 'POST', '/v1/products/batch', { body, headers })),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
    for (const a of answers) expect(a.body).toEqual(answers[0]?.body);
    expect(ofType(await settledFeed(tenant), 'product.').map((e) => e.data.reference)).toEqual(['DIRECT-1', 'DIRECT-2']);
  });
});

/** Resolves once a catalog statement matching `pattern` waits on a lock. */
async function waitForLockWait(pattern: string) {
  const waiting = async () => {
    const { rows } = await stack.sql(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query ilike $1`,
      [pattern],
    );
    return rows[0].n > 0;
  };
  await until(`a statement like ${pattern} to wait on a lock`, waiting, { everyMs: 20 });
}

describe('the upsert retry inside a keyed write', () => {
  test('an upsert that loses a race (a unique violation) starts over from its savepoint: one answer, recorded once', async () => {
    const tenant = await tenantWithTools();
    const seed = await create(tenant, product('SEED'));
    // A writer that takes reference RACED first and commits only once the upsert waits on it.
    const rival = new pg.Client({ connectionString: stack.databaseUrl });
    await rival.connect();
    try {
      await rival.query('begin');
      await rival.query(
        `insert into catalog.products (tenant_id, reference, name, vat_id, product_category_id) values ($1, 'RACED', 'Rival', $2, $3)`,
        [tenant.tenantId, seed.vat_id, seed.product_category_id],
      );
      const headers = { 'idempotency-key': crypto.randomUUID() };
      const body = { id_property: 'reference', data: [product('RACED', { name: 'Upserted' })] };
      const pending = tenant.request('POST', '/v1/products/batch/upsert', { body, headers });
      await waitForLockWait('insert into "products"%');
      await rival.query('commit');

      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body.created).toEqual([false]);
      expect(res.body.data[0]).toMatchObject({ reference: 'RACED', name: 'Upserted', rates: [{ sku: 'RACED-A', primary: true }] });
      await forgetGatewayRecord(stack, tenant, headers['idempotency-key']);
      const retry = await tenant.request('POST', '/v1/products/batch/upsert', { body, headers });
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toEqual(res.body);
      expect(summary(ofType(await settledFeed(tenant), 'product.'))).toEqual([
        { type: 'product.created', data: seed },
        { type: 'product.updated', data: res.body.data[0] },
      ]);
    } finally {
      await rival.end();
    }
  });
});

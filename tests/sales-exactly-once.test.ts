import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ServiceProcess } from '@crm/stack';
import { type Stack, send, startStack, type TestTenant } from '@crm/testing';
import { expectReplayOf, forgetGatewayRecord, untilClaimed } from './exactly-once.ts';
import { orderBody, orderWorld } from './orders-fixtures.ts';
import { type FeedEvent, isMarker, settledEvents } from './sales-feed.ts';

// Contract §21: sales records a keyed write's answer in the write's own transaction, so a retry
// whose gateway record was lost (a gateway that died between the service's commit and its own
// store) still gets the one answer — for every write a client can key: contacts, their batch and
// upsert, opportunities and orders (create, batch, PUT, PATCH, DELETE) — and the write runs once.
let stack: Stack;
let replica: ServiceProcess;

beforeAll(async () => {
  // A stack of its own: a second gateway replica shares its database.
  stack = await startStack();
  replica = await stack.startGatewayReplica();
}, 180_000);

afterAll(async () => {
  await replica?.stop();
  await stack?.stop();
}, 60_000);

const keyed = (key: string) => ({ 'idempotency-key': key });

/** A request straight to the sales service, as a gateway forwards it (the gateways' own stores bypassed). */
function direct(tenant: TestTenant, method: string, path: string, key: string, body?: unknown) {
  return stack.call('sales', method, path, {
    body,
    headers: { 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenantId, ...keyed(key) },
  });
}

/**
 * A keyed write, then the same request under the same key after the gateway lost its record:
 * the service answers the recorded answer. Returns the first answer's body.
 */
async function writeThenRetry(tenant: TestTenant, method: string, path: string, body?: unknown) {
  const key = crypto.randomUUID();
  const first = await tenant.request(method, path, { body, headers: keyed(key) });
  if (first.status >= 300) throw new Error(`${method} ${path} → ${first.status} ${first.text}`);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  await forgetGatewayRecord(stack, tenant, key);
  const retry = await tenant.request(method, path, { body, headers: keyed(key) });
  expectReplayOf(retry, first);
  return first.body;
}

/**
 * The types (starting with `prefix`) of the events the feed lists after `before` (the tenant's
 * settled events then). The feed only grows at its end, in stream order.
 */
async function eventsSince(tenant: TestTenant, before: FeedEvent[], prefix = ''): Promise<string[]> {
  const now = await settledEvents(tenant);
  expect(now.slice(0, before.length)).toEqual(before);
  return now
    .slice(before.length)
    .map((e) => e.type)
    .filter((type) => type.startsWith(prefix));
}

/** How many contacts of `type` the tenant has (the feed's markers are clients: count another type). */
async function contactCount(tenant: TestTenant, type = 'lead'): Promise<number> {
  return (await tenant.request('GET', `/v1/contacts?type=${type}&per_page=1`)).body.pagination.total;
}

async function countOf(tenant: TestTenant, path: string): Promise<number> {
  return (await tenant.request('GET', `${path}?per_page=1`)).body.pagination.total;
}

describe('a retry whose gateway record was lost gets the recorded answer and writes nothing more', () => {
  test('POST /v1/contacts: one contact, one contact.created', async () => {
    const tenant = await stack.createTenant();
    const before = await settledEvents(tenant);
    const created = await writeThenRetry(tenant, 'POST', '/v1/contacts', { name: 'Once Ltd', type: 'lead', email: 'once@example.test' });
    expect(created.data.name).toBe('Once Ltd');
    expect(await contactCount(tenant)).toBe(1);
    expect(await eventsSince(tenant, before)).toEqual(['contact.created']);
  });

  test('POST /v1/contacts/batch and /batch/upsert: each item written once', async () => {
    const tenant = await stack.createTenant();
    const before = await settledEvents(tenant);
    const batch = await writeThenRetry(tenant, 'POST', '/v1/contacts/batch', {
      data: [
        { name: 'B1', type: 'lead', cif: 'C-1' },
        { name: 'B2', type: 'lead', cif: 'C-2' },
      ],
    });
    expect(batch.data.map((c: any) => c.name)).toEqual(['B1', 'B2']);
    const upsert = await writeThenRetry(tenant, 'POST', '/v1/contacts/batch/upsert', {
      id_property: 'cif',
      data: [
        { cif: 'C-1', phone: '1' },
        { cif: 'C-3', name: 'B3', type: 'lead' },
      ],
    });
    expect(upsert.created).toEqual([false, true]);
    expect(await contactCount(tenant)).toBe(3);
    expect(await eventsSince(tenant, before)).toEqual(['contact.created', 'contact.created', 'contact.updated', 'contact.created']);
    // The replay did not touch the updated contact again.
    expect((await tenant.request('GET', '/v1/contacts/C-1')).body.data).toEqual(upsert.data[0]);
  });

  test('PUT, PATCH and DELETE /v1/contacts/{identifier}: the replay is the first answer (a DELETE replays 200, not 404)', async () => {
    const tenant = await stack.createTenant();
    const contact = (await tenant.request('POST', '/v1/contacts', { body: { name: 'Edit Ltd', type: 'lead' } })).body.data;
    const before = await settledEvents(tenant);
    const put = await writeThenRetry(tenant, 'PUT', `/v1/contacts/${contact.id}`, { comments: 'put' });
    const patch = await writeThenRetry(tenant, 'PATCH', '/v1/contacts/Edit%20Ltd', { phone: '2' });
    expect(patch.data).toMatchObject({ comments: 'put', phone: '2' });
    expect(patch.data.updated_at >= put.data.updated_at).toBe(true);
    expect((await tenant.request('GET', `/v1/contacts/${contact.id}`)).body.data).toEqual(patch.data);
    expect(await writeThenRetry(tenant, 'DELETE', `/v1/contacts/${contact.id}`)).toEqual({ deleted: true });
    expect((await tenant.request('GET', `/v1/contacts/${contact.id}`)).status).toBe(404);
    expect(await eventsSince(tenant, before)).toEqual(['contact.updated', 'contact.updated', 'contact.deleted']);
  });

  test('opportunities: POST, batch, PUT, PATCH, DELETE each run once', async () => {
    const tenant = await stack.createTenant();
    await tenant.request('POST', '/v1/contacts', { body: { name: 'Acme Ltd', type: 'lead' } });
    const before = await settledEvents(tenant);
    const created = await writeThenRetry(tenant, 'POST', '/v1/opportunities', {
      name: 'Deal',
      enterprise_identifier: 'Acme Ltd',
      amount: 5,
    });
    await writeThenRetry(tenant, 'POST', '/v1/opportunities/batch', {
      data: [
        { name: 'D1', enterprise_identifier: 'Acme Ltd' },
        { name: 'D2', enterprise_identifier: 'Acme Ltd' },
      ],
    });
    expect(await countOf(tenant, '/v1/opportunities')).toBe(3);
    const path = `/v1/opportunities/${created.data.id}`;
    await writeThenRetry(tenant, 'PUT', path, { amount: 10 });
    const patched = await writeThenRetry(tenant, 'PATCH', path, { status: 'won' });
    expect((await tenant.request('GET', path)).body.data).toEqual(patched.data);
    expect(await writeThenRetry(tenant, 'DELETE', path)).toEqual({ deleted: true });
    expect(await countOf(tenant, '/v1/opportunities')).toBe(2);
    expect(await eventsSince(tenant, before)).toEqual([
      'opportunity.created',
      'opportunity.created',
      'opportunity.created',
      'opportunity.updated',
      'opportunity.updated',
      'opportunity.deleted',
    ]);
  });

  test('orders: POST and batch take one generated reference each; PUT, PATCH and DELETE run once', async () => {
    const { tenant } = await orderWorld(stack);
    const before = await settledEvents(tenant);
    const created = await writeThenRetry(tenant, 'POST', '/v1/orders', orderBody({ products: [{ reference: 'WIDGET', quantity: 2 }] }));
    expect(created.data.reference).toBe('ORD-000001');
    const batch = await writeThenRetry(tenant, 'POST', '/v1/orders/batch', { data: [orderBody(), orderBody({ state: 2 })] });
    expect(batch.data.map((o: any) => o.reference)).toEqual(['ORD-000002', 'ORD-000003']);
    const path = `/v1/orders/${created.data.reference}`;
    const moved = await writeThenRetry(tenant, 'PUT', path, { state: 5, products: [{ reference: 'GADGET' }] });
    expect(moved.data.states.map((s: any) => s.state)).toEqual([1, 5]);
    const patched = await writeThenRetry(tenant, 'PATCH', path, { comments: 'patched' });
    expect((await tenant.request('GET', path)).body.data).toEqual(patched.data);
    expect(await writeThenRetry(tenant, 'DELETE', `/v1/orders/${batch.data[1].reference}`)).toEqual({ deleted: true });
    // The retries took no number: the next order is ORD-000004.
    const next = await tenant.request('POST', '/v1/orders', { body: orderBody() });
    expect(next.body.data.reference).toBe('ORD-000004');
    expect(await countOf(tenant, '/v1/orders')).toBe(3);
    expect(await eventsSince(tenant, before, 'order.')).toEqual([
      'order.created',
      'order.created',
      'order.created',
      'order.updated',
      'order.state_changed',
      'order.updated',
      'order.deleted',
      'order.created',
    ]);
  });
});

/** Makes the service's record of this tenant's keyed writes fail (a trigger), until the returned function runs. */
async function failRecording(tenant: TestTenant): Promise<() => Promise<void>> {
  const trigger = `refuse_record_${crypto.randomUUID().replaceAll('-', '')}`;
  await stack.sql(`create or replace function sales.refuse_record() returns trigger language plpgsql
    as $$ begin raise exception 'the test refuses to record this answer'; end $$`);
  await stack.sql(`create trigger ${trigger} before insert on sales.idempotency_records for each row
    when (new.tenant_id = '${tenant.tenantId.replaceAll("'", "''")}') execute function sales.refuse_record()`);
  return async () => {
    await stack.sql(`drop trigger ${trigger} on sales.idempotency_records`);
  };
}

/** Everything a client of the tenant can see of sales: contacts (markers left out), opportunities, orders and events. */
async function salesState(tenant: TestTenant) {
  const list = async (path: string) => (await tenant.request('GET', `${path}?per_page=100`)).body.data;
  return {
    contacts: (await list('/v1/contacts')).filter((c: any) => !isMarker(c)),
    opportunities: await list('/v1/opportunities'),
    orders: await list('/v1/orders'),
    events: (await settledEvents(tenant)).map((e) => e.id),
  };
}

describe('the write and its record commit together', () => {
  test('when the record cannot be stored, every kind of write is undone with it (500), and a retry then runs once', async () => {
    const { tenant, contactId } = await orderWorld(stack);
    const deal = (await tenant.request('POST', '/v1/opportunities', { body: { name: 'Deal', enterprise_identifier: 'Acme Ltd' } })).body
      .data;
    const order = (await tenant.request('POST', '/v1/orders', { body: orderBody({ products: [{ reference: 'WIDGET' }] }) })).body.data;
    const writes: [string, string, unknown?][] = [
      ['POST', '/v1/contacts', { name: 'New', type: 'lead' }],
      ['POST', '/v1/contacts/batch', { data: [{ name: 'N1', type: 'lead' }] }],
      [
        'POST',
        '/v1/contacts/batch/upsert',
        {
          id_property: 'cif',
          data: [
            { cif: 'B123', phone: '1' },
            { cif: 'NEW', name: 'N2', type: 'lead' },
          ],
        },
      ],
      ['PUT', `/v1/contacts/${contactId}`, { comments: 'put' }],
      ['PATCH', '/v1/contacts/Acme%20Ltd', { phone: '2' }],
      ['DELETE', `/v1/contacts/${contactId}`],
      ['POST', '/v1/opportunities', { name: 'D2', enterprise_identifier: 'Acme Ltd' }],
      ['POST', '/v1/opportunities/batch', { data: [{ name: 'D3', enterprise_identifier: 'Acme Ltd' }] }],
      ['PUT', `/v1/opportunities/${deal.id}`, { amount: 3 }],
      ['PATCH', `/v1/opportunities/${deal.id}`, { status: 'won' }],
      ['DELETE', `/v1/opportunities/${deal.id}`],
      ['POST', '/v1/orders', orderBody({ products: [{ reference: 'GADGET' }] })],
      ['POST', '/v1/orders/batch', { data: [orderBody()] }],
      ['PUT', `/v1/orders/${order.reference}`, { state: 4, products: [{ reference: 'GADGET' }] }],
      ['PATCH', `/v1/orders/${order.reference}`, { comments: 'patched' }],
      ['DELETE', `/v1/orders/${order.reference}`],
    ];
    const before = await salesState(tenant);
    const restore = await failRecording(tenant);
    const keys: string[] = [];
    try {
      for (const [method, path, body] of writes) {
        const key = crypto.randomUUID();
        keys.push(key);
        const res = await tenant.request(method, path, { body, headers: keyed(key) });
        expect(res.status, `${method} ${path} → ${res.text}`).toBe(500);
      }
      expect(await salesState(tenant)).toEqual(before);
    } finally {
      await restore();
    }
    // The gateway keeps no 5xx: the same keys run the writes now, each once (the order counter was not advanced).
    const created = await tenant.request('POST', '/v1/orders', { body: writes[11]?.[2], headers: keyed(keys[11] as string) });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    expect(created.body.data.reference).toBe('ORD-000002');
    expect((await tenant.request('POST', '/v1/contacts', { body: writes[0]?.[2], headers: keyed(keys[0] as string) })).status).toBe(201);
    expect(await contactCount(tenant)).toBe(1);
  });
});

describe('repeats of one key at the same time run the write once', () => {
  test('through two gateway replicas: one order, one order.created', async () => {
    const { tenant } = await orderWorld(stack);
    const key = crypto.randomUUID();
    const body = orderBody({ products: [{ reference: 'WIDGET' }] });
    const answers = await Promise.all([
      tenant.request('POST', '/v1/orders', { body, headers: keyed(key) }),
      send(replica.url, 'POST', '/v1/orders', { body, headers: { 'x-api-key': tenant.apiKey, ...keyed(key) } }),
    ]);
    // The gateways' shared claim answers the loser 409 idempotency_key_in_use, or the winner's answer once stored.
    for (const answer of answers) expect([201, 409]).toContain(answer.status);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const answer of created) expect(answer.body).toEqual(created[0]?.body);
    expect(await countOf(tenant, '/v1/orders')).toBe(1);
    expect((await settledEvents(tenant)).filter((e) => e.type === 'order.created')).toHaveLength(1);
  });

  test('a gateway claim lost while the first runs: the second, through the other replica, gets the first answer', async () => {
    const { tenant } = await orderWorld(stack);
    const key = crypto.randomUUID();
    const body = orderBody({ products: [{ reference: 'WIDGET' }, { reference: 'GADGET' }] });
    const first = tenant.request('POST', '/v1/orders', { body, headers: keyed(key) });
    await untilClaimed(stack, tenant, key, 10);
    await forgetGatewayRecord(stack, tenant, key);
    const second = await send(replica.url, 'POST', '/v1/orders', { body, headers: { 'x-api-key': tenant.apiKey, ...keyed(key) } });
    const answer = await first;
    expect(answer.status).toBe(201);
    expectReplayOf(second, answer);
    expect(await countOf(tenant, '/v1/orders')).toBe(1);
    expect((await settledEvents(tenant)).filter((e) => e.type === 'order.created')).toHaveLength(1);
  });

  test('straight at the service (no gateway store in between): four at once → one order, three replays', async () => {
    const { tenant } = await orderWorld(stack);
    const key = crypto.randomUUID();
    // With lines: the catalog is called inside the keyed write's transaction.
    const body = orderBody({ products: [{ reference: 'WIDGET', quantity: 3 }] });
    const answers = await Promise.all(Array.from({ length: 4 }, () => direct(tenant, 'POST', '/v1/orders', key, body)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
    for (const answer of answers) expect(answer.body).toEqual(answers[0]?.body);
    expect(await countOf(tenant, '/v1/orders')).toBe(1);
    const contactKey = crypto.randomUUID();
    const batch = { data: [{ name: 'Twice?', type: 'lead' }] };
    const contacts = await Promise.all(Array.from({ length: 4 }, () => direct(tenant, 'POST', '/v1/contacts/batch', contactKey, batch)));
    expect(contacts.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(await contactCount(tenant)).toBe(1);
    const events = await settledEvents(tenant);
    expect(events.filter((e) => e.type === 'order.created')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'contact.created' && e.data.name === 'Twice?')).toHaveLength(1);
  });
});

describe('a refused write records nothing', () => {
  test('the same key with another body is refused by the service too, and writes nothing', async () => {
    const tenant = await stack.createTenant();
    const key = crypto.randomUUID();
    expect((await tenant.request('POST', '/v1/contacts', { body: { name: 'A', type: 'lead' }, headers: keyed(key) })).status).toBe(201);
    await forgetGatewayRecord(stack, tenant, key);
    const other = await tenant.request('POST', '/v1/contacts', { body: { name: 'B', type: 'lead' }, headers: keyed(key) });
    expect(other.status).toBe(422);
    expect(other.body.error.type).toBe('idempotency_key_reused');
    const elsewhere = await tenant.request('DELETE', '/v1/contacts/A', { headers: keyed(key) });
    expect(elsewhere.status).toBe(422);
    expect(await contactCount(tenant)).toBe(1);
  });

  test('a record older than 24 h no longer binds its key: the same key with another body creates, and is recorded anew', async () => {
    const tenant = await stack.createTenant();
    const key = crypto.randomUUID();
    expect((await tenant.request('POST', '/v1/contacts', { body: { name: 'Old', type: 'lead' }, headers: keyed(key) })).status).toBe(201);
    const aged = await stack.sql(
      "update sales.idempotency_records set created_at = now() - interval '25 hours' where tenant_id = $1 and key = $2",
      [tenant.tenantId, key],
    );
    expect(aged.rowCount).toBe(1);
    const body = { name: 'New', type: 'lead' };
    const fresh = await direct(tenant, 'POST', '/v1/contacts', key, body);
    expect(fresh.status).toBe(201);
    expect(fresh.body.data.name).toBe('New');
    expect(await contactCount(tenant)).toBe(2);
    // The expired record is gone and the new answer is the one recorded: a repeat replays it.
    const { rows } = await stack.sql('select body from sales.idempotency_records where tenant_id = $1 and key = $2', [
      tenant.tenantId,
      key,
    ]);
    expect(rows.map((r) => JSON.parse(r.body).data.name)).toEqual(['New']);
    const repeat = await direct(tenant, 'POST', '/v1/contacts', key, body);
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body.data.id).toBe(fresh.body.data.id);
    expect(await contactCount(tenant)).toBe(2);
  });

  test('422: the same key with a corrected body then creates', async () => {
    const tenant = await stack.createTenant();
    const key = crypto.randomUUID();
    const bad = await tenant.request('POST', '/v1/contacts', { body: { name: 'C', type: 'no-such-type' }, headers: keyed(key) });
    expect(bad.status).toBe(422);
    const good = await tenant.request('POST', '/v1/contacts', { body: { name: 'C', type: 'lead' }, headers: keyed(key) });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await contactCount(tenant)).toBe(1);
  });

  test('409 (a taken reference) under a key: once the gateway forgets it, the same request runs again', async () => {
    const { tenant } = await orderWorld(stack);
    const taken = (await tenant.request('POST', '/v1/orders', { body: orderBody({ reference: 'DUP-1', state: 1 }) })).body.data;
    const key = crypto.randomUUID();
    const body = orderBody({ reference: 'DUP-1', state: 2 });
    const refused = await tenant.request('POST', '/v1/orders', { body, headers: keyed(key) });
    expect(refused.status).toBe(409);
    // The gateway stores the 409 (contract §8); the service recorded nothing.
    expectReplayOf(await tenant.request('POST', '/v1/orders', { body, headers: keyed(key) }), refused);
    await forgetGatewayRecord(stack, tenant, key);
    expect((await tenant.request('DELETE', `/v1/orders/${taken.reference}`)).status).toBe(200);
    const created = await tenant.request('POST', '/v1/orders', { body, headers: keyed(key) });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    expect(created.body.data).toMatchObject({ reference: 'DUP-1', state: 2 });
  });

  test('412 under a key: the retry with a fresh If-Match runs, once', async () => {
    const { tenant } = await orderWorld(stack);
    const made = await tenant.request('POST', '/v1/orders', { body: orderBody({ reference: 'IFM-1' }) });
    await tenant.request('PATCH', '/v1/orders/IFM-1', { body: { comments: 'moved on' } });
    const before = await settledEvents(tenant);
    const key = crypto.randomUUID();
    const body = { state: 10 };
    const put = (ifMatch: string) => tenant.request('PUT', '/v1/orders/IFM-1', { body, headers: { ...keyed(key), 'if-match': ifMatch } });
    expect((await put(made.headers.get('etag') as string)).status).toBe(412);
    await forgetGatewayRecord(stack, tenant, key);
    const fresh = (await tenant.request('GET', '/v1/orders/IFM-1')).headers.get('etag') as string;
    const done = await put(fresh);
    expect(done.status).toBe(200);
    expect(done.headers.get('idempotent-replayed')).toBeNull();
    expect(done.body.data.states.map((s: any) => s.state)).toEqual([1, 10]);
    await forgetGatewayRecord(stack, tenant, key);
    // The service's record answers before If-Match is looked at (a stale one included).
    expectReplayOf(await put(made.headers.get('etag') as string), done);
    expect(await eventsSince(tenant, before, 'order.')).toEqual(['order.updated', 'order.state_changed']);
  });
});

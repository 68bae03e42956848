import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { settledEvents } from './sales-feed.ts';

let stack: Stack;
let tenant: TestTenant;
let acme: { id: number };
let globex: { id: number };
const ANN = { email: 'ann@opps.test', name: 'Ann Lee' };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant({ users: [ANN] });
  acme = (await tenant.request('POST', '/v1/contacts', { body: { name: 'Acme Ltd', type: 'client', email: 'buy@acme.test', cif: 'A-1' } }))
    .body.data;
  globex = (await tenant.request('POST', '/v1/contacts', { body: { name: 'Globex', type: 'lead' } })).body.data;
}, 60_000);

/** The tenant's events as the feed lists them (type and data), once every earlier write's are listed. */
async function events(t: TestTenant) {
  return (await settledEvents(t)).map(({ type, data }) => ({ type, data }));
}

async function create(body: Record<string, unknown>, t: TestTenant = tenant) {
  const res = await t.request('POST', '/v1/opportunities', { body });
  expect(res.status).toBe(201);
  return res.body.data;
}

describe('create and read', () => {
  test('every field round-trips; identifier and e-mail become ids', async () => {
    const created = await create({
      name: 'Big deal',
      enterprise_identifier: 'Acme Ltd',
      user_email: 'ANN@opps.test',
      amount: 1234.567,
      currency: 'USD',
      status: 'won',
      probability: 80,
      close_date: '2026-12-31',
      comments: 'Signed',
      extra_fields: { source: 'fair', n: 2 },
    });
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Big deal',
      enterprise_id: acme.id,
      user_id: tenant.users[0]?.id,
      amount: 1234.57,
      currency: 'USD',
      status: 'won',
      probability: 80,
      close_date: '2026-12-31',
      comments: 'Signed',
      extra_fields: { source: 'fair', n: 2 },
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await tenant.request('GET', `/v1/opportunities/${created.id}`)).body.data).toEqual(created);
  });

  test('defaults: amount 0, EUR, open, empty fields null', async () => {
    const created = await create({ name: 'Small', enterprise_identifier: 'buy@ACME.test' });
    expect(created).toMatchObject({
      enterprise_id: acme.id,
      user_id: null,
      amount: 0,
      currency: 'EUR',
      status: 'open',
      probability: null,
      close_date: null,
      comments: null,
      extra_fields: null,
    });
  });

  test('enterprise_identifier follows the identifier rule (id, name, e-mail, CIF)', async () => {
    for (const identifier of [String(acme.id), 'Acme Ltd', 'buy@acme.test', 'A-1'])
      expect((await create({ name: 'By identifier', enterprise_identifier: identifier })).enterprise_id).toBe(acme.id);
  });

  test('unknown or non-numeric id → 404', async () => {
    for (const id of ['999999999', 'abc', '99999999999999'])
      expect((await tenant.request('GET', `/v1/opportunities/${id}`)).status).toBe(404);
  });
});

describe('validation', () => {
  test('every failing field in one 422; nothing written', async () => {
    const t = await stack.createTenant();
    const res = await t.request('POST', '/v1/opportunities', {
      body: {
        name: 'x'.repeat(256),
        enterprise_identifier: 'Nobody',
        user_email: 'ghost@opps.test',
        amount: -1,
        currency: 'euro',
        status: 'pending',
        probability: 101,
        close_date: '2026-02-30',
        colour: 'red',
      },
    });
    expect(res.status).toBe(422);
    const fields = res.body.error.details.map((d: any) => d.field).sort();
    expect(fields).toEqual(
      ['amount', 'close_date', 'colour', 'currency', 'enterprise_identifier', 'name', 'probability', 'status', 'user_email'].sort(),
    );
    for (const field of fields) expect(res.body.error.message).toContain(field);
    expect((await t.request('GET', '/v1/opportunities')).body.pagination.total).toBe(0);
    expect(await events(t)).toEqual([]);
  });

  test('missing required fields and a string amount', async () => {
    const res = await tenant.request('POST', '/v1/opportunities', { body: { amount: '12' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual(['amount', 'enterprise_identifier', 'name']);
  });

  test('unknown enterprise alone → 422 on enterprise_identifier', async () => {
    const res = await tenant.request('POST', '/v1/opportunities', { body: { name: 'X', enterprise_identifier: 'No Such Co' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'enterprise_identifier', message: expect.any(String) }]);
  });
});

describe('update and delete', () => {
  test('PUT/PATCH keep omitted fields, null clears, identifiers re-resolve', async () => {
    const created = await create({
      name: 'Deal',
      enterprise_identifier: 'Acme Ltd',
      user_email: ANN.email,
      probability: 10,
      comments: 'c',
    });
    const put = await tenant.request('PUT', `/v1/opportunities/${created.id}`, { body: { probability: null, status: 'lost' } });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ ...created, probability: null, status: 'lost', updated_at: expect.stringMatching(ISO_MS) });
    const patch = await tenant.request('PATCH', `/v1/opportunities/${created.id}`, {
      body: { enterprise_identifier: 'Globex', user_email: null },
    });
    expect(patch.body.data).toMatchObject({ enterprise_id: globex.id, user_id: null, comments: 'c', status: 'lost' });
    const bad = await tenant.request('PUT', `/v1/opportunities/${created.id}`, {
      body: { enterprise_identifier: 'Nope', probability: -1 },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(['enterprise_identifier', 'probability']);
  });

  test('DELETE → { deleted: true }, then 404', async () => {
    const created = await create({ name: 'Gone', enterprise_identifier: 'Globex' });
    expect((await tenant.request('DELETE', `/v1/opportunities/${created.id}`)).body).toEqual({ deleted: true });
    expect((await tenant.request('GET', `/v1/opportunities/${created.id}`)).status).toBe(404);
    expect((await tenant.request('DELETE', `/v1/opportunities/${created.id}`)).status).toBe(404);
  });

  test('deleting the contact keeps its opportunities readable with enterprise_id', async () => {
    const t = await stack.createTenant();
    const contact = (await t.request('POST', '/v1/contacts', { body: { name: 'Short-lived', type: 'lead' } })).body.data;
    const opp = await create({ name: 'Orphan', enterprise_identifier: 'Short-lived' }, t);
    await t.request('DELETE', `/v1/contacts/${contact.id}`);
    expect((await t.request('GET', `/v1/opportunities/${opp.id}`)).body.data.enterprise_id).toBe(contact.id);
  });
});

describe('list', () => {
  test('filters enterprise_id, status, q, updated_since; sort both ways; pagination', async () => {
    const t = await stack.createTenant();
    const a = (await t.request('POST', '/v1/contacts', { body: { name: 'A', type: 'lead' } })).body.data;
    const b = (await t.request('POST', '/v1/contacts', { body: { name: 'B', type: 'lead' } })).body.data;
    const batch = await t.request('POST', '/v1/opportunities/batch', {
      body: {
        data: [
          { name: 'Alpha renewal', enterprise_identifier: 'A', status: 'open' },
          { name: 'Beta upsell', enterprise_identifier: 'B', status: 'won' },
          { name: 'Gamma renewal', enterprise_identifier: 'A', status: 'won' },
        ],
      },
    });
    expect(batch.status).toBe(201);
    const [o1, o2, o3] = batch.body.data;
    const names = async (query: string) => (await t.request('GET', `/v1/opportunities${query}`)).body.data.map((o: any) => o.name);
    expect(await names(`?enterprise_id=${a.id}`)).toEqual(['Alpha renewal', 'Gamma renewal']);
    expect(await names(`?enterprise_id=${b.id}&status=won`)).toEqual(['Beta upsell']);
    expect(await names('?q=RENEWAL')).toEqual(['Alpha renewal', 'Gamma renewal']);
    expect(await names('?sort=-name')).toEqual(['Gamma renewal', 'Beta upsell', 'Alpha renewal']);
    expect(await names('?sort=-id')).toEqual([o3.name, o2.name, o1.name]);
    await Bun.sleep(5);
    const touched = (await t.request('PATCH', `/v1/opportunities/${o1.id}`, { body: { amount: 5 } })).body.data;
    expect(await names(`?updated_since=${encodeURIComponent(touched.updated_at)}`)).toEqual(['Alpha renewal']);
    const page = await t.request('GET', '/v1/opportunities?per_page=2&page=2');
    expect(page.body.pagination).toEqual({ total: 3, per_page: 2, current_page: 2, last_page: 2, has_more: false, next_cursor: null });
    expect(
      (await t.request('GET', '/v1/opportunities?per_page=0&status=pending&enterprise_id=x')).body.error.details.map((d: any) => d.field),
    ).toEqual(expect.arrayContaining(['per_page', 'enterprise_id']));
    expect((await t.request('GET', '/v1/opportunities?status=pending')).status).toBe(422);
  });

  test('batch: all or nothing with data[i] fields; N events', async () => {
    const t = await stack.createTenant();
    await t.request('POST', '/v1/contacts', { body: { name: 'Only', type: 'lead' } });
    const bad = await t.request('POST', '/v1/opportunities/batch', {
      body: {
        data: [
          { name: 'ok', enterprise_identifier: 'Only' },
          { name: 'bad', enterprise_identifier: 'Missing', amount: -5 },
        ],
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(['data[1].amount', 'data[1].enterprise_identifier']);
    expect((await events(t)).map((e) => e.type)).toEqual(['contact.created']);
    expect((await t.request('GET', '/v1/opportunities')).body.pagination.total).toBe(0);
    const good = await t.request('POST', '/v1/opportunities/batch', {
      body: { data: Array.from({ length: 5 }, (_, i) => ({ name: `O${i}`, enterprise_identifier: 'Only' })) },
    });
    expect(good.status).toBe(201);
    const created = (await events(t)).filter((e) => e.type === 'opportunity.created');
    expect(created).toHaveLength(5);
    expect(created.map((e) => e.data)).toEqual(good.body.data);
  });
});

describe('events', () => {
  test('opportunity.created, .updated and .deleted carry the resource as returned', async () => {
    const t = await stack.createTenant();
    await t.request('POST', '/v1/contacts', { body: { name: 'Evented', type: 'lead' } });
    const created = await create({ name: 'E', enterprise_identifier: 'Evented', amount: 10 }, t);
    const updated = (await t.request('PUT', `/v1/opportunities/${created.id}`, { body: { amount: 20.005 } })).body.data;
    await t.request('DELETE', `/v1/opportunities/${created.id}`);
    expect((await events(t)).filter((e) => e.type.startsWith('opportunity.'))).toEqual([
      { type: 'opportunity.created', data: created },
      { type: 'opportunity.updated', data: updated },
      { type: 'opportunity.deleted', data: { id: created.id } },
    ]);
  });
});

describe('isolation', () => {
  test("another tenant's opportunity is 404 and absent from lists; its contacts are not resolvable", async () => {
    const other = await stack.createTenant();
    const mine = await create({ name: 'Mine', enterprise_identifier: 'Acme Ltd' });
    expect((await other.request('GET', `/v1/opportunities/${mine.id}`)).status).toBe(404);
    expect((await other.request('PUT', `/v1/opportunities/${mine.id}`, { body: { name: 'stolen' } })).status).toBe(404);
    expect((await other.request('DELETE', `/v1/opportunities/${mine.id}`)).status).toBe(404);
    expect((await other.request('GET', `/v1/opportunities?enterprise_id=${acme.id}`)).body.data).toEqual([]);
    const res = await other.request('POST', '/v1/opportunities', { body: { name: 'x', enterprise_identifier: String(acme.id) } });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].field).toBe('enterprise_identifier');
  });
});

describe('internal API (other services)', () => {
  const internal = (path: string, tenantId: string, token?: string) =>
    stack.call('sales', 'GET', path, { headers: { 'x-tenant-id': tenantId, ...(token ? { 'x-internal-token': token } : {}) } });

  test('resolve a contact identifier → { data: { id } } or 404, per tenant', async () => {
    const ok = await internal(
      `/internal/contacts/resolve?identifier=${encodeURIComponent('buy@acme.test')}`,
      tenant.tenantId,
      stack.internalToken,
    );
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ data: { id: acme.id } });
    const other = await stack.createTenant();
    expect((await internal('/internal/contacts/resolve?identifier=Acme%20Ltd', other.tenantId, stack.internalToken)).status).toBe(404);
  });

  test('check an opportunity exists → { data: { id } } or 404', async () => {
    const opp = await create({ name: 'Internal', enterprise_identifier: 'Globex' });
    expect((await internal(`/internal/opportunities/${opp.id}`, tenant.tenantId, stack.internalToken)).body).toEqual({
      data: { id: opp.id },
    });
    const other = await stack.createTenant();
    expect((await internal(`/internal/opportunities/${opp.id}`, other.tenantId, stack.internalToken)).status).toBe(404);
  });

  test('resolve a user e-mail', async () => {
    const res = await internal(`/internal/users/by-email?email=${encodeURIComponent(ANN.email)}`, tenant.tenantId, stack.internalToken);
    expect(res.body.data).toEqual({ id: tenant.users[0]?.id, name: ANN.name, email: ANN.email });
  });

  test('without the internal credential → 401', async () => {
    for (const path of ['/internal/contacts/resolve?identifier=Globex', `/internal/opportunities/1`]) {
      expect((await internal(path, tenant.tenantId)).status).toBe(401);
      expect((await internal(path, tenant.tenantId, 'wrong')).status).toBe(401);
    }
  });

  test('the gateway does not expose /internal', async () => {
    expect((await tenant.request('GET', '/internal/contacts/resolve?identifier=Globex')).status).toBe(404);
  });
});

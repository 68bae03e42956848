import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { settledEvents } from './sales-feed.ts';

let stack: Stack;
let tenant: TestTenant;
const ANN = { email: 'ann@acme.test', name: 'Ann Lee' };
const BOB = { email: 'bob@acme.test', name: 'Bob Roe' };

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant({ users: [ANN, BOB] });
}, 60_000);

const FULL = {
  name: 'Acme Ltd',
  type: 'client',
  email: 'hello@acme.test',
  is_person: false,
  cif: 'B12345678',
  phone: '+34 600 000 000',
  web: 'https://acme.test',
  iban: 'ES9121000418450200051332',
  comments: 'Key account',
  users: ['ann@acme.test', 'BOB@acme.test'],
  location: {
    primary: 1,
    direction: 'Main St 1',
    city: 'Madrid',
    postal: '28001',
    country: 'ES',
    latitude: '40.4168',
    longitude: '-3.7038',
    extra_info: 'Floor 3',
  },
  extra_fields: { tier: 'gold', seats: 12, tags: ['a', 'b'], nested: { ok: true } },
};

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The tenant's events as the feed lists them (type and data), once every earlier write's are listed. */
async function events(t: TestTenant) {
  return (await settledEvents(t)).map(({ type, data }) => ({ type, data }));
}

async function create(t: TestTenant, body: Record<string, unknown>) {
  const res = await t.request('POST', '/v1/contacts', { body });
  expect(res.status).toBe(201);
  return res.body.data;
}

describe('contact types', () => {
  test('a new tenant has client, lead, prospect, supplier, partner', async () => {
    const fresh = await stack.createTenant();
    const res = await fresh.request('GET', '/v1/contacts/types');
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: any) => t.reference)).toEqual(['client', 'lead', 'prospect', 'supplier', 'partner']);
    for (const type of res.body.data)
      expect(type).toEqual({ id: expect.any(Number), reference: expect.any(String), name: expect.any(String) });
    // Seeding once: a second call returns the same rows.
    const again = await fresh.request('GET', '/v1/contacts/types');
    expect(again.body.data).toEqual(res.body.data);
  });

  test('/contacts/types is the type list even when a contact is named "types"', async () => {
    const named = await create(tenant, { name: 'types', type: 'lead' });
    const res = await tenant.request('GET', '/v1/contacts/types');
    expect(res.body.data[0].reference).toBe('client');
    expect((await tenant.request('GET', `/v1/contacts/${named.id}`)).body.data.name).toBe('types');
  });
});

describe('create and read', () => {
  test('every field round-trips with the right types', async () => {
    const created = await create(tenant, FULL);
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Acme Ltd',
      type: 'client',
      email: 'hello@acme.test',
      is_person: false,
      cif: 'B12345678',
      phone: '+34 600 000 000',
      web: 'https://acme.test',
      iban: 'ES9121000418450200051332',
      comments: 'Key account',
      users: [
        { id: tenant.users[0]?.id, name: 'Ann Lee', email: 'ann@acme.test' },
        { id: tenant.users[1]?.id, name: 'Bob Roe', email: 'bob@acme.test' },
      ],
      location: { id: expect.any(Number), ...FULL.location },
      extra_fields: FULL.extra_fields,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const read = await tenant.request('GET', `/v1/contacts/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created);
  });

  test('a minimal contact carries every field, empty ones null', async () => {
    const created = await create(tenant, { name: 'Minimal', type: 'lead' });
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Minimal',
      type: 'lead',
      email: null,
      is_person: null,
      cif: null,
      phone: null,
      web: null,
      iban: null,
      comments: null,
      users: [],
      location: null,
      extra_fields: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  test('unknown contact → 404 not_found', async () => {
    const res = await tenant.request('GET', '/v1/contacts/999999999');
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('not_found');
  });
});

describe('update', () => {
  test('PUT keeps omitted fields and clears a field sent as null', async () => {
    const created = await create(tenant, FULL);
    const res = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { phone: '+34 911 111 111', comments: null } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      ...created,
      phone: '+34 911 111 111',
      comments: null,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(res.body.data.updated_at >= created.updated_at).toBe(true);
    expect((await tenant.request('GET', `/v1/contacts/${created.id}`)).body.data).toEqual(res.body.data);
  });

  test('PATCH is accepted with the same meaning', async () => {
    const created = await create(tenant, FULL);
    const res = await tenant.request('PATCH', `/v1/contacts/${created.id}`, { body: { name: 'Acme Patched', email: null } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Acme Patched', email: null, cif: 'B12345678', users: created.users });
  });

  test('location is merged on PUT and keeps its id; null removes it', async () => {
    const created = await create(tenant, FULL);
    const merged = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { location: { city: 'Sevilla', postal: null } } });
    expect(merged.body.data.location).toEqual({ ...created.location, city: 'Sevilla', postal: null });
    const cleared = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { location: null } });
    expect(cleared.body.data.location).toBeNull();
    const added = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { location: { country: 'PT' } } });
    expect(added.body.data.location).toMatchObject({ id: expect.any(Number), country: 'PT', city: null });
  });

  test('users are replaced when given, cleared with [] or null, kept when omitted', async () => {
    const created = await create(tenant, FULL);
    const replaced = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { users: ['bob@acme.test'] } });
    expect(replaced.body.data.users).toEqual([{ id: tenant.users[1]?.id, name: 'Bob Roe', email: 'bob@acme.test' }]);
    const kept = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { web: null } });
    expect(kept.body.data.users).toHaveLength(1);
    const cleared = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { users: null } });
    expect(cleared.body.data.users).toEqual([]);
  });

  test('extra_fields is replaced as a whole and cleared with null', async () => {
    const created = await create(tenant, FULL);
    const replaced = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { extra_fields: { only: 1 } } });
    expect(replaced.body.data.extra_fields).toEqual({ only: 1 });
    const cleared = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { extra_fields: null } });
    expect(cleared.body.data.extra_fields).toBeNull();
  });

  test('name and type cannot be cleared', async () => {
    const created = await create(tenant, FULL);
    const res = await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { name: null, type: null } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual(['name', 'type']);
  });
});

describe('delete', () => {
  test('DELETE answers { deleted: true }, then the contact is 404', async () => {
    const created = await create(tenant, { name: 'Doomed', type: 'lead' });
    const res = await tenant.request('DELETE', `/v1/contacts/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true });
    expect((await tenant.request('GET', `/v1/contacts/${created.id}`)).status).toBe(404);
    expect((await tenant.request('DELETE', `/v1/contacts/${created.id}`)).status).toBe(404);
    expect((await tenant.request('PUT', `/v1/contacts/${created.id}`, { body: { name: 'x' } })).status).toBe(404);
  });
});

describe('validation', () => {
  test('every failing field is named in one 422 and nothing is written', async () => {
    const t = await stack.createTenant({ users: [ANN] });
    const res = await t.request('POST', '/v1/contacts', {
      body: {
        type: 'martian',
        email: 'not-an-email',
        is_person: 'yes',
        cif: 'x'.repeat(256),
        users: ['ann@acme.test', 'ghost@acme.test'],
        location: { city: 12, planet: 'Mars' },
        extra_fields: { blob: 'x'.repeat(17 * 1024) },
        nickname: 'typo',
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('validation_error');
    const fields = res.body.error.details.map((d: any) => d.field).sort();
    expect(fields).toEqual(
      ['cif', 'email', 'extra_fields', 'is_person', 'location.city', 'location.planet', 'name', 'nickname', 'type', 'users[1]'].sort(),
    );
    for (const field of fields) expect(res.body.error.message).toContain(field);
    expect((await t.request('GET', '/v1/contacts')).body.pagination.total).toBe(0);
    expect(await events(t)).toEqual([]);
  });

  test('rule failures alone (unknown type, unknown user) are reported together', async () => {
    const res = await tenant.request('POST', '/v1/contacts', { body: { name: 'Rules', type: 'martian', users: ['ghost@acme.test'] } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field)).toEqual(['type', 'users[0]']);
  });

  test('an update with an unknown user e-mail is 422 on users[i] and changes nothing', async () => {
    const created = await create(tenant, FULL);
    const res = await tenant.request('PUT', `/v1/contacts/${created.id}`, {
      body: { name: 'Changed', users: ['ann@acme.test', 'nobody@acme.test'] },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'users[1]', message: expect.any(String) }]);
    expect((await tenant.request('GET', `/v1/contacts/${created.id}`)).body.data).toEqual(created);
  });

  test('extra_fields must be an object; exactly 16 KB is accepted', async () => {
    const notObject = await tenant.request('POST', '/v1/contacts', { body: { name: 'X', type: 'lead', extra_fields: ['a'] } });
    expect(notObject.status).toBe(422);
    expect(notObject.body.error.details[0].field).toBe('extra_fields');
    const padding = 16 * 1024 - JSON.stringify({ k: '' }).length;
    const atLimit = await tenant.request('POST', '/v1/contacts', {
      body: { name: 'X', type: 'lead', extra_fields: { k: 'x'.repeat(padding) } },
    });
    expect(atLimit.status).toBe(201);
  });
});

describe('batch', () => {
  test('creates every item in order with 201 and one event each', async () => {
    const t = await stack.createTenant({ users: [ANN] });
    const data = Array.from({ length: 100 }, (_, i) => ({ name: `Batch ${i}`, type: 'lead', users: ['ann@acme.test'] }));
    const res = await t.request('POST', '/v1/contacts/batch', { body: { data } });
    expect(res.status).toBe(201);
    expect(res.body.data.map((c: any) => c.name)).toEqual(data.map((d) => d.name));
    expect(res.body.data[99].users).toEqual([{ id: t.users[0]?.id, name: 'Ann Lee', email: 'ann@acme.test' }]);
    const written = await events(t);
    expect(written).toHaveLength(100);
    expect(written.every((e) => e.type === 'contact.created')).toBe(true);
    expect(written.map((e) => e.data)).toEqual(res.body.data);
  });

  test('one invalid item fails the whole batch with data[i].field details', async () => {
    const t = await stack.createTenant({ users: [ANN] });
    const res = await t.request('POST', '/v1/contacts/batch', {
      body: {
        data: [
          { name: 'Good', type: 'lead' },
          { name: 'Bad type', type: 'martian' },
          { type: 'lead', users: ['ghost@acme.test'] },
          { name: 'Bad email', type: 'lead', email: 'nope' },
        ],
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'data[1].type',
      'data[2].name',
      'data[2].users[0]',
      'data[3].email',
    ]);
    expect((await t.request('GET', '/v1/contacts')).body.pagination.total).toBe(0);
    expect(await events(t)).toEqual([]);
  });

  test('0 or 101 items → 422 on data', async () => {
    const empty = await tenant.request('POST', '/v1/contacts/batch', { body: { data: [] } });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details[0].field).toBe('data');
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ name: `N${i}`, type: 'lead' }));
    const over = await tenant.request('POST', '/v1/contacts/batch', { body: { data: tooMany } });
    expect(over.status).toBe(422);
    expect(over.body.error.details[0].field).toBe('data');
  });
});

describe('events', () => {
  test('create, update and delete write contact.* with the resource as returned', async () => {
    const t = await stack.createTenant({ users: [ANN] });
    const created = (await t.request('POST', '/v1/contacts', { body: { ...FULL, users: ['ann@acme.test'] } })).body.data;
    const updated = (await t.request('PUT', `/v1/contacts/${created.id}`, { body: { comments: 'changed' } })).body.data;
    await t.request('DELETE', `/v1/contacts/${created.id}`);
    expect(await events(t)).toEqual([
      { type: 'contact.created', data: created },
      { type: 'contact.updated', data: updated },
      { type: 'contact.deleted', data: { id: created.id } },
    ]);
  });

  test('a failed write leaves no event', async () => {
    const t = await stack.createTenant();
    await t.request('PUT', '/v1/contacts/12345678', { body: { comments: 'x' } });
    await t.request('POST', '/v1/contacts', { body: { name: 'x' } });
    expect(await events(t)).toEqual([]);
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 60_000);

async function create(t: TestTenant, body: Record<string, unknown>) {
  const res = await t.request('POST', '/v1/contacts', { body: { type: 'client', ...body } });
  expect(res.status).toBe(201);
  return res.body.data as { id: number; name: string };
}

async function resolvedId(t: TestTenant, identifier: string) {
  const res = await t.request('GET', `/v1/contacts/${encodeURIComponent(identifier)}`);
  return res.status === 200 ? res.body.data.id : res.status;
}

describe('identifier rule (contract §11)', () => {
  test('an all-digit identifier naming an existing id wins over a contact named like it', async () => {
    const t = await stack.createTenant();
    const target = await create(t, { name: 'Target' });
    const impostor = await create(t, { name: String(target.id) });
    expect(await resolvedId(t, String(target.id))).toBe(target.id);
    // The impostor stays reachable by its own id.
    expect(await resolvedId(t, String(impostor.id))).toBe(impostor.id);
  });

  test('an all-digit identifier that is no id falls through to the name', async () => {
    const t = await stack.createTenant();
    const named = await create(t, { name: '2147483000' });
    expect(await resolvedId(t, '2147483000')).toBe(named.id);
    const huge = await create(t, { name: '99999999999999999999' });
    expect(await resolvedId(t, '99999999999999999999')).toBe(huge.id);
  });

  test('a name equal to another contact’s e-mail: the name wins', async () => {
    const t = await stack.createTenant();
    const byEmail = await create(t, { name: 'Email owner', email: 'sales@acme.test' });
    const byName = await create(t, { name: 'sales@acme.test' });
    expect(byEmail.id).toBeLessThan(byName.id);
    expect(await resolvedId(t, 'sales@acme.test')).toBe(byName.id);
  });

  test('names match exactly (case-sensitive); e-mails case-insensitively', async () => {
    const t = await stack.createTenant();
    const c = await create(t, { name: 'Globex', email: 'Info@Globex.test' });
    expect(await resolvedId(t, 'globex')).toBe(404);
    expect(await resolvedId(t, 'INFO@globex.TEST')).toBe(c.id);
  });

  test('CIF is matched after name and e-mail', async () => {
    const t = await stack.createTenant();
    const withCif = await create(t, { name: 'Initech', cif: 'X1234567Z' });
    expect(await resolvedId(t, 'X1234567Z')).toBe(withCif.id);
    const namedLikeCif = await create(t, { name: 'X1234567Z' });
    expect(await resolvedId(t, 'X1234567Z')).toBe(namedLikeCif.id);
  });

  test('URL-encoded names with spaces and non-ASCII characters', async () => {
    const t = await stack.createTenant();
    const spaced = await create(t, { name: 'Acme Ltd' });
    const accented = await create(t, { name: 'Café Müller & Søn' });
    const res = await t.request('GET', '/v1/contacts/Acme%20Ltd');
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(spaced.id);
    expect(await resolvedId(t, 'Café Müller & Søn')).toBe(accented.id);
    const updated = await t.request('PUT', `/v1/contacts/${encodeURIComponent('Café Müller & Søn')}`, { body: { phone: '1' } });
    expect(updated.body.data).toMatchObject({ id: accented.id, phone: '1' });
  });

  test('several matches → the lowest id', async () => {
    const t = await stack.createTenant();
    const first = await create(t, { name: 'Twin', email: 'a@twin.test', cif: 'T1' });
    await create(t, { name: 'Twin', email: 'a@twin.test', cif: 'T1' });
    expect(await resolvedId(t, 'Twin')).toBe(first.id);
    expect(await resolvedId(t, 'A@TWIN.test')).toBe(first.id);
    expect(await resolvedId(t, 'T1')).toBe(first.id);
  });

  test('nothing matches → 404 not_found on GET, PUT and DELETE', async () => {
    const t = await stack.createTenant();
    await create(t, { name: 'Someone' });
    for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as const) {
      const res = await t.request(method, '/v1/contacts/Nobody%20Here', body ? { body } : {});
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('not_found');
    }
  });

  test('PUT and DELETE use the same rule', async () => {
    const t = await stack.createTenant();
    const c = await create(t, { name: 'Delete Me', email: 'del@me.test' });
    expect((await t.request('PUT', '/v1/contacts/DEL@me.test', { body: { comments: 'via email' } })).body.data.id).toBe(c.id);
    expect((await t.request('DELETE', '/v1/contacts/Delete%20Me')).body).toEqual({ deleted: true });
    expect(await resolvedId(t, String(c.id))).toBe(404);
  });
});

describe('isolation between tenants', () => {
  test("another tenant's contact by id, name, e-mail or CIF is 404 and absent from lists and filters", async () => {
    const owner = await stack.createTenant();
    const other = await stack.createTenant();
    const secret = await create(owner, { name: 'Secret Corp', email: 'boss@secret.test', cif: 'S0000001' });
    for (const identifier of [String(secret.id), 'Secret Corp', 'boss@secret.test', 'S0000001']) {
      expect(await resolvedId(other, identifier)).toBe(404);
      expect((await other.request('PUT', `/v1/contacts/${encodeURIComponent(identifier)}`, { body: { comments: 'x' } })).status).toBe(404);
      expect((await other.request('DELETE', `/v1/contacts/${encodeURIComponent(identifier)}`)).status).toBe(404);
    }
    for (const query of ['', '?q=secret', '?email=boss@secret.test', '?cif=S0000001', '?type=client']) {
      const list = await other.request('GET', `/v1/contacts${query}`);
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([]);
      expect(list.body.pagination.total).toBe(0);
    }
    // Untouched for its owner.
    expect((await owner.request('GET', `/v1/contacts/${secret.id}`)).body.data.comments).toBeNull();
  });

  test('a same-named contact in my tenant is found, never the other tenant’s lower id', async () => {
    const a = await stack.createTenant();
    const b = await stack.createTenant();
    const theirs = await create(a, { name: 'Shared Name' });
    const mine = await create(b, { name: 'Shared Name' });
    expect(theirs.id).toBeLessThan(mine.id);
    expect(await resolvedId(b, 'Shared Name')).toBe(mine.id);
  });

  test("another tenant's user e-mail is an unknown user", async () => {
    const a = await stack.createTenant({ users: [{ email: 'only-a@corp.test', name: 'Only A' }] });
    const b = await stack.createTenant();
    expect(a.users).toHaveLength(1);
    const res = await b.request('POST', '/v1/contacts', { body: { name: 'X', type: 'client', users: ['only-a@corp.test'] } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'users[0]', message: expect.any(String) }]);
  });
});

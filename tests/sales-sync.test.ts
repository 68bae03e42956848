// Issue 13 on sales contacts and users, through the gateway: cursor walks and Link headers
// (contract §22), conditional requests on contacts (§24) and the contacts batch upsert (§23).
import { beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { type Answer, expectExactWalk, links, ok, params, walk } from './list-walk.ts';
import { isMarker, settledEvents } from './sales-feed.ts';

let stack: Stack;

const ANN = { email: 'ann@sync.test', name: 'Ann Lee' };
const BOB = { email: 'bob@sync.test', name: 'Bob Roe' };

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

function expect422(res: Answer, fields: string[]): Record<string, string> {
  if (res.status !== 422) throw new Error(`expected 422, got ${res.status} ${res.text}`);
  expect(res.body.error.type).toBe('validation_error');
  const details: { field: string; message: string }[] = res.body.error.details;
  expect(details.map((d) => d.field).sort()).toEqual([...fields].sort());
  return Object.fromEntries(details.map((d) => [d.field, d.message]));
}

/** The tenant's events as the feed lists them (type and data), once every earlier write's are listed. */
async function events(tenant: TestTenant) {
  return (await settledEvents(tenant)).map(({ type, data }) => ({ type, data }));
}

async function createContact(tenant: TestTenant, body: Record<string, unknown>) {
  return ok(await tenant.request('POST', '/v1/contacts', { body }), 201).data;
}

/** 24 contacts in four batches (created_at ties inside each), names in an order unlike ids, half leads. */
async function tenantWithContacts() {
  const tenant = await stack.createTenant({ users: [ANN, BOB] });
  const initial: number[] = [];
  for (let b = 0; b < 4; b++) {
    const data = Array.from({ length: 6 }, (_, i) => {
      const n = b * 6 + i;
      return { name: `Walk ${String.fromCharCode(88 - (n % 12))}${n % 3}`, type: n % 2 === 0 ? 'lead' : 'client', cif: `SYNC-${n}` };
    });
    initial.push(...ok(await tenant.request('POST', '/v1/contacts/batch', { body: { data } }), 201).data.map((c: any) => c.id));
  }
  return { tenant, initial };
}

/** Between pages: new contacts that sort before and after the position, two deletions, one update. */
function churn(tenant: TestTenant, initial: number[], deleted: Set<number>) {
  let inserted = 0;
  return async (step: number) => {
    for (const name of ['Walk A', 'Walk M1', 'Walk Z']) {
      inserted += 1;
      await createContact(tenant, { name, type: inserted % 2 === 0 ? 'client' : 'lead', cif: `SYNC-NEW-${inserted}` });
    }
    for (const index of [step, initial.length - 1 - step * 2]) {
      const victim = initial[index];
      if (victim === undefined || deleted.has(victim)) continue;
      ok(await tenant.request('DELETE', `/v1/contacts/${victim}`));
      deleted.add(victim);
    }
    const touched = initial.find((id) => !deleted.has(id)) as number;
    ok(await tenant.request('PUT', `/v1/contacts/${touched}`, { body: { comments: `touched ${step}` } }));
  };
}

describe('cursor walks (§22)', () => {
  for (const [sort, filter] of [
    ['id', ''],
    ['-id', ''],
    ['name', ''],
    ['-name', ''],
    ['created_at', ''],
    ['-created_at', ''],
    ['name', '&type=lead'],
    ['-id', '&q=walk%20'],
  ] as const) {
    test(`contacts sort=${sort}${filter}: inserts, deletes and updates between pages; every stable contact once, none twice`, async () => {
      const { tenant, initial } = await tenantWithContacts();
      const deleted = new Set<number>();
      // A filtered walk has fewer rows: smaller pages, so it still spans several rounds of churn.
      const path = `/v1/contacts?per_page=${filter ? 3 : 4}&sort=${sort}${filter}`;
      const seen = await walk(tenant, path, (item) => item.id as number, churn(tenant, initial, deleted));
      expect(deleted.size).toBeGreaterThan(4);
      const final = ok(await tenant.request('GET', `/v1/contacts?per_page=100&sort=${sort}${filter}`)).data.map((c: any) => c.id);
      const matching = new Set(final);
      // Stable: there for the whole walk and matching the filter (type never changes; all names hold "walk ").
      const stable = initial.filter((id) => !deleted.has(id) && (filter !== '&type=lead' || initial.indexOf(id) % 2 === 0));
      for (const id of stable) expect(matching.has(id)).toBe(true);
      expectExactWalk(seen, stable, final);
      if (filter === '&type=lead') {
        const types = ok(await tenant.request('GET', '/v1/contacts?per_page=100')).data;
        const leads = new Set(types.filter((c: any) => c.type === 'lead').map((c: any) => c.id));
        expect(seen.every((id) => leads.has(id) || deleted.has(id))).toBe(true);
      }
    });
  }

  test('a cursor page is the same as the counted page it continues from, and never counts', async () => {
    const { tenant } = await tenantWithContacts();
    const first = ok(await tenant.request('GET', '/v1/contacts?per_page=5&sort=-name'));
    expect(first.pagination).toMatchObject({ total: 24, current_page: 1, last_page: 5, has_more: true });
    const second = ok(await tenant.request('GET', `/v1/contacts?per_page=5&sort=-name&cursor=${first.pagination.next_cursor}`));
    const counted = ok(await tenant.request('GET', '/v1/contacts?per_page=5&sort=-name&page=2'));
    expect(second.data).toEqual(counted.data);
    expect(second.pagination).toEqual({
      total: null,
      per_page: 5,
      current_page: null,
      last_page: null,
      has_more: true,
      next_cursor: expect.any(String),
    });
  });

  test('users: a cursor walk by name and by -email finds every user once', async () => {
    const users = Array.from({ length: 9 }, (_, i) => ({ email: `u${i}-${'zyxwvutsr'[i]}@sync.test`, name: `User ${'qwertyuio'[i]}` }));
    const tenant = await stack.createTenant({ users });
    for (const sort of ['name', '-email', 'id', '-created_at']) {
      const all = ok(await tenant.request('GET', `/v1/users?per_page=100&sort=${sort}`)).data;
      expect(all).toHaveLength(9);
      const seen = await walk(
        tenant,
        `/v1/users?per_page=2&sort=${sort}`,
        (item) => item.id as number,
        async () => {},
      );
      expect(seen).toEqual(all.map((u: any) => u.id));
    }
  });
});

describe('Link headers and next_cursor (§22)', () => {
  test('contacts page mode: first, prev, next, last repeating per_page, sort and filters', async () => {
    const { tenant } = await tenantWithContacts();
    const res = await tenant.request('GET', '/v1/contacts?per_page=3&sort=-name&type=lead&page=2');
    const body = ok(res);
    expect(body.pagination).toMatchObject({ total: 12, current_page: 2, last_page: 4, has_more: true, next_cursor: expect.any(String) });
    const rels = links(res);
    expect(Object.keys(rels).sort()).toEqual(['first', 'last', 'next', 'prev']);
    for (const [rel, page] of [
      ['first', '1'],
      ['prev', '1'],
      ['next', '3'],
      ['last', '4'],
    ] as const) {
      expect(rels[rel]?.startsWith('/v1/contacts?')).toBe(true);
      expect(params(rels[rel] as string)).toEqual({ per_page: '3', sort: '-name', type: 'lead', page });
    }
    // Following rel="next" gives page 3; the last page has no next and no next_cursor.
    const next = ok(await tenant.request('GET', rels.next as string));
    expect(next.pagination.current_page).toBe(3);
    const lastRes = await tenant.request('GET', rels.last as string);
    expect(ok(lastRes).pagination).toMatchObject({ current_page: 4, has_more: false, next_cursor: null });
    expect(Object.keys(links(lastRes)).sort()).toEqual(['first', 'last', 'prev']);
    const firstRes = await tenant.request('GET', '/v1/contacts?per_page=3&type=lead');
    expect(Object.keys(links(firstRes)).sort()).toEqual(['first', 'last', 'next']);
  });

  test('contacts cursor mode: rel="next" carries the cursor with the same parameters; the end has no Link', async () => {
    const { tenant } = await tenantWithContacts();
    const first = ok(await tenant.request('GET', '/v1/contacts?per_page=10&sort=name&q=walk'));
    const res = await tenant.request('GET', `/v1/contacts?per_page=10&sort=name&q=walk&cursor=${first.pagination.next_cursor}`);
    const body = ok(res);
    expect(body.pagination.has_more).toBe(true);
    const rels = links(res);
    expect(Object.keys(rels)).toEqual(['next']);
    expect(params(rels.next as string)).toEqual({ per_page: '10', sort: 'name', q: 'walk', cursor: body.pagination.next_cursor });
    const end = await tenant.request('GET', rels.next as string);
    expect(ok(end).data).toHaveLength(4);
    expect(ok(end).pagination).toEqual({
      total: null,
      per_page: 10,
      current_page: null,
      last_page: null,
      has_more: false,
      next_cursor: null,
    });
    expect(end.headers.get('link')).toBeNull();
  });

  test('users: page-mode Link rels and a cursor next', async () => {
    const tenant = await stack.createTenant({ users: [ANN, BOB, { email: 'cy@sync.test', name: 'Cy' }] });
    const res = await tenant.request('GET', '/v1/users?per_page=1&page=2&sort=email');
    expect(ok(res).data.map((u: any) => u.email)).toEqual(['bob@sync.test']);
    expect(Object.keys(links(res)).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect(params(links(res).last as string)).toEqual({ per_page: '1', sort: 'email', page: '3' });
    const cursor = ok(res).pagination.next_cursor;
    const next = await tenant.request('GET', `/v1/users?per_page=1&sort=email&cursor=${cursor}`);
    expect(ok(next).data.map((u: any) => u.email)).toEqual(['cy@sync.test']);
    expect(ok(next).pagination).toMatchObject({ total: null, has_more: false, next_cursor: null });
  });

  test('a cursor is refused with another sort or filters, with page, or malformed → 422 on cursor', async () => {
    const { tenant } = await tenantWithContacts();
    const cursor = ok(await tenant.request('GET', '/v1/contacts?per_page=3&sort=name&type=lead')).pagination.next_cursor;
    expect(ok(await tenant.request('GET', `/v1/contacts?per_page=7&type=lead&sort=name&cursor=${cursor}`)).data).toHaveLength(7);
    const forged = Buffer.from(JSON.stringify({ v: 1, q: 'x', k: 'y', i: 1 })).toString('base64url');
    for (const query of [
      `sort=id&type=lead&cursor=${cursor}`,
      `sort=-name&type=lead&cursor=${cursor}`,
      `sort=name&type=client&cursor=${cursor}`,
      `sort=name&cursor=${cursor}`,
      `sort=name&type=lead&q=walk&cursor=${cursor}`,
      `sort=name&type=lead&updated_since=2020-01-01T00:00:00Z&cursor=${cursor}`,
      `sort=name&type=lead&page=2&cursor=${cursor}`,
      'cursor=not-a-cursor',
      'cursor=%21%21',
      `cursor=${forged}`,
    ]) {
      const messages = expect422(await tenant.request('GET', `/v1/contacts?${query}`), ['cursor']);
      expect(messages.cursor).toBeString();
    }
    expect422(await tenant.request('GET', '/v1/users?cursor=abc'), ['cursor']);
    const userCursor = ok(await tenant.request('GET', '/v1/users?per_page=1&sort=name')).pagination.next_cursor;
    expect422(await tenant.request('GET', `/v1/users?per_page=1&sort=email&cursor=${userCursor}`), ['cursor']);
    expect422(await tenant.request('GET', `/v1/users?per_page=1&sort=name&page=1&cursor=${userCursor}`), ['cursor']);
  });
});

describe('ETags and conditional requests (§24)', () => {
  test('ETag on POST, GET and PUT; If-None-Match → 304 until the contact changes', async () => {
    const tenant = await stack.createTenant({ users: [ANN] });
    const made = await tenant.request('POST', '/v1/contacts', { body: { name: 'Etag Ltd', type: 'client', users: [ANN.email] } });
    const etag = made.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const read = await tenant.request('GET', '/v1/contacts/Etag%20Ltd');
    expect(read.headers.get('etag')).toBe(etag);
    const notModified = await tenant.request('GET', '/v1/contacts/Etag%20Ltd', { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    const put = await tenant.request('PUT', '/v1/contacts/Etag%20Ltd', { body: { phone: '1' } });
    const changed = put.headers.get('etag') as string;
    expect(changed).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(changed).not.toBe(etag);
    const after = await tenant.request('GET', '/v1/contacts/Etag%20Ltd', { headers: { 'if-none-match': etag } });
    expect(ok(after).data.phone).toBe('1');
    expect(after.headers.get('etag')).toBe(changed);
  });

  test('a stale If-Match is 412 on PUT, PATCH and DELETE, and nothing changes (no event)', async () => {
    const tenant = await stack.createTenant();
    const made = await tenant.request('POST', '/v1/contacts', { body: { name: 'Stale Ltd', type: 'client' } });
    const stale = made.headers.get('etag') as string;
    ok(await tenant.request('PATCH', `/v1/contacts/${made.body.data.id}`, { body: { comments: 'moved on' } }));
    const current = await tenant.request('GET', `/v1/contacts/${made.body.data.id}`);
    const eventsBefore = await events(tenant);
    for (const [method, body] of [
      ['PUT', { name: 'Lost update' }],
      ['PATCH', { comments: null }],
      ['DELETE', undefined],
    ] as const) {
      const res = await tenant.request(method, `/v1/contacts/${made.body.data.id}`, { body, headers: { 'if-match': stale } });
      expect(res.status).toBe(412);
      expect(res.body.error.type).toBe('precondition_failed');
      expect(res.body.error.request_id).toBeString();
      const again = await tenant.request('GET', `/v1/contacts/${made.body.data.id}`);
      expect(again.body).toEqual(current.body);
      expect(again.headers.get('etag')).toBe(current.headers.get('etag'));
    }
    // A list of tags none of which is current, and a weak tag, are not a match either.
    for (const header of [`${stale}, "nope"`, `W/${current.headers.get('etag')}`]) {
      const res = await tenant.request('PUT', `/v1/contacts/${made.body.data.id}`, {
        body: { phone: '2' },
        headers: { 'if-match': header },
      });
      expect(res.status).toBe(412);
    }
    expect(await events(tenant)).toEqual(eventsBefore);
  });

  test('the current ETag or * lets PUT, PATCH and DELETE through; a missing contact is still 404', async () => {
    const tenant = await stack.createTenant();
    const made = await tenant.request('POST', '/v1/contacts', { body: { name: 'Fresh Ltd', type: 'lead', email: 'fresh@sync.test' } });
    const put = await tenant.request('PUT', '/v1/contacts/fresh@sync.test', {
      body: { phone: '1' },
      headers: { 'if-match': made.headers.get('etag') as string },
    });
    expect(ok(put).data.phone).toBe('1');
    const patch = await tenant.request('PATCH', '/v1/contacts/Fresh%20Ltd', {
      body: { phone: '2' },
      headers: { 'if-match': `"other", ${put.headers.get('etag')}` },
    });
    expect(ok(patch).data.phone).toBe('2');
    expect(
      ok(await tenant.request('PUT', `/v1/contacts/${made.body.data.id}`, { body: { phone: '3' }, headers: { 'if-match': '*' } })).data
        .phone,
    ).toBe('3');
    const etag = (await tenant.request('GET', `/v1/contacts/${made.body.data.id}`)).headers.get('etag') as string;
    expect(ok(await tenant.request('DELETE', `/v1/contacts/${made.body.data.id}`, { headers: { 'if-match': etag } }))).toEqual({
      deleted: true,
    });
    for (const method of ['PUT', 'DELETE']) {
      const res = await tenant.request(method, `/v1/contacts/${made.body.data.id}`, {
        body: method === 'PUT' ? { phone: '4' } : undefined,
        headers: { 'if-match': '*' },
      });
      expect(res.status).toBe(404);
    }
    expect((await events(tenant)).map((e) => e.type)).toEqual([
      'contact.created',
      'contact.updated',
      'contact.updated',
      'contact.updated',
      'contact.deleted',
    ]);
  });

  test('concurrent PUTs with one ETag: exactly one 200, the others 412; one event', async () => {
    const tenant = await stack.createTenant();
    const made = await tenant.request('POST', '/v1/contacts', { body: { name: 'Race Ltd', type: 'client' } });
    const etag = made.headers.get('etag') as string;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        tenant.request(i % 2 === 0 ? 'PUT' : 'PATCH', `/v1/contacts/${made.body.data.id}`, {
          body: { comments: `writer ${i}` },
          headers: { 'if-match': etag },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412, 412, 412]);
    const winner = answers.find((a) => a.status === 200) as Answer;
    const now = await tenant.request('GET', `/v1/contacts/${made.body.data.id}`);
    expect(now.body.data).toEqual(winner.body.data);
    expect(now.headers.get('etag')).toBe(winner.headers.get('etag'));
    expect((await events(tenant)).filter((e) => e.type === 'contact.updated')).toHaveLength(1);
    // And a concurrent DELETE against a PUT with the same ETag: one wins.
    const both = await Promise.all([
      tenant.request('DELETE', `/v1/contacts/${made.body.data.id}`, { headers: { 'if-match': now.headers.get('etag') as string } }),
      tenant.request('PUT', `/v1/contacts/${made.body.data.id}`, {
        body: { phone: '9' },
        headers: { 'if-match': now.headers.get('etag') as string },
      }),
    ]);
    const statuses = both.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 412 || s === 404)).toBe(true);
  });

  test('a 412 under an Idempotency-Key does not burn the key: the retry with the fresh ETag succeeds, then replays', async () => {
    const tenant = await stack.createTenant();
    const made = await tenant.request('POST', '/v1/contacts', { body: { name: 'Idem Ltd', type: 'client' } });
    const stale = made.headers.get('etag') as string;
    ok(await tenant.request('PUT', `/v1/contacts/${made.body.data.id}`, { body: { phone: '1' } }));
    const key = crypto.randomUUID();
    const body = { comments: 'once' };
    const path = `/v1/contacts/${made.body.data.id}`;
    const refused = await tenant.request('PUT', path, { body, headers: { 'if-match': stale, 'idempotency-key': key } });
    expect(refused.status).toBe(412);
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    const fresh = (await tenant.request('GET', path)).headers.get('etag') as string;
    const done = await tenant.request('PUT', path, { body, headers: { 'if-match': fresh, 'idempotency-key': key } });
    expect(ok(done).data.comments).toBe('once');
    expect(done.headers.get('idempotent-replayed')).toBeNull();
    // The recorded answer is replayed, with its ETag, before If-Match is looked at.
    const replayed = await tenant.request('PUT', path, { body, headers: { 'if-match': stale, 'idempotency-key': key } });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('etag')).toBe(done.headers.get('etag'));
    expect(replayed.body).toEqual(done.body);
    expect((await events(tenant)).filter((e) => e.type === 'contact.updated')).toHaveLength(2);
  });
});

/** The tenant's contacts as listed (with locations and users; markers left out) and its events, to show a refused upsert left nothing. */
async function footprint(tenant: TestTenant) {
  const contacts = ok(await tenant.request('GET', '/v1/contacts?per_page=100')).data.filter((c: any) => !isMarker(c));
  return { contacts, events: await events(tenant) };
}

describe('batch upsert (§23)', () => {
  test('by email: creates and updates in one batch, in request order, with created flags and one event per item', async () => {
    const tenant = await stack.createTenant({ users: [ANN, BOB] });
    const acme = await createContact(tenant, {
      name: 'Acme',
      type: 'client',
      email: 'hello@acme.test',
      phone: '100',
      users: [ANN.email],
      location: { city: 'Madrid', country: 'ES' },
    });
    // Two contacts share an e-mail: the lowest id is the match.
    const older = await createContact(tenant, { name: 'Twin A', type: 'lead', email: 'twin@sync.test' });
    const younger = await createContact(tenant, { name: 'Twin B', type: 'lead', email: 'TWIN@sync.test' });
    const before = (await events(tenant)).length;
    const res = await tenant.request('POST', '/v1/contacts/batch/upsert', {
      body: {
        id_property: 'email',
        data: [
          { email: 'new@sync.test', name: 'Newco', type: 'prospect', users: [BOB.email], location: { city: 'Lyon' } },
          { email: 'HELLO@Acme.Test', comments: 'synced', phone: null, users: [BOB.email], location: { city: 'Bilbao' } },
          { email: 'Twin@Sync.Test', type: 'partner' },
        ],
      },
    });
    const body = ok(res);
    expect(res.headers.get('etag')).toBeNull();
    expect(body.created).toEqual([true, false, false]);
    expect(body.data.map((c: any) => c.id)).toEqual([expect.any(Number), acme.id, older.id]);
    const [created, updated, twin] = body.data;
    expect(created).toMatchObject({ name: 'Newco', type: 'prospect', email: 'new@sync.test', users: [{ email: BOB.email }] });
    expect(created.location).toMatchObject({ city: 'Lyon', country: null });
    // PUT semantics: omitted fields kept, null clears, location merged, users replaced, e-mail as sent.
    expect(updated).toMatchObject({
      name: 'Acme',
      type: 'client',
      email: 'HELLO@Acme.Test',
      phone: null,
      comments: 'synced',
      users: [{ email: BOB.email }],
    });
    expect(updated.location).toMatchObject({ city: 'Bilbao', country: 'ES' });
    expect(updated.created_at).toBe(acme.created_at);
    expect(twin).toMatchObject({ name: 'Twin A', type: 'partner' });
    expect(ok(await tenant.request('GET', `/v1/contacts/${younger.id}`)).data).toEqual(younger);
    for (const contact of body.data) expect(ok(await tenant.request('GET', `/v1/contacts/${contact.id}`)).data).toEqual(contact);
    const written = (await events(tenant)).slice(before);
    expect(written.map((e) => e.type)).toEqual(['contact.created', 'contact.updated', 'contact.updated']);
    expect(written.map((e) => e.data)).toEqual(body.data);
    // The same batch again updates all three.
    const again = ok(
      await tenant.request('POST', '/v1/contacts/batch/upsert', {
        body: { id_property: 'email', data: [{ email: 'NEW@sync.test' }, { email: 'hello@acme.test' }, { email: 'twin@sync.test' }] },
      }),
    );
    expect(again.created).toEqual([false, false, false]);
    expect(again.data.map((c: any) => c.id)).toEqual(body.data.map((c: any) => c.id));
  });

  test('by cif and by name: exact matches (lowest id), no match creates', async () => {
    const tenant = await stack.createTenant();
    const first = await createContact(tenant, { name: 'Same Name', type: 'client', cif: 'B-1' });
    const second = await createContact(tenant, { name: 'Same Name', type: 'lead', cif: 'B-1' });
    const byCif = ok(
      await tenant.request('POST', '/v1/contacts/batch/upsert', {
        body: {
          id_property: 'cif',
          data: [
            { cif: 'b-1', name: 'Lower cif', type: 'supplier' },
            { cif: 'B-1', web: 'https://b1.test' },
          ],
        },
      }),
    );
    expect(byCif.created).toEqual([true, false]);
    expect(byCif.data[1]).toMatchObject({ id: first.id, web: 'https://b1.test', name: 'Same Name' });
    expect(byCif.data[0]).toMatchObject({ cif: 'b-1', name: 'Lower cif', type: 'supplier' });
    const byName = ok(
      await tenant.request('POST', '/v1/contacts/batch/upsert', {
        body: {
          id_property: 'name',
          data: [
            { name: 'Same Name', iban: 'ES00' },
            { name: 'same name', type: 'lead' },
          ],
        },
      }),
    );
    expect(byName.created).toEqual([false, true]);
    expect(byName.data[0]).toMatchObject({ id: first.id, iban: 'ES00', web: 'https://b1.test' });
    expect(byName.data[1].id).toBeGreaterThan(second.id);
    expect(ok(await tenant.request('GET', `/v1/contacts/${second.id}`)).data).toEqual(second);
  });

  test('refuses missing and repeated id values, and every other rule, in one 422 that writes nothing', async () => {
    const tenant = await stack.createTenant({ users: [ANN] });
    await createContact(tenant, { name: 'Known', type: 'client', email: 'known@sync.test' });
    const before = await footprint(tenant);
    const refused = await tenant.request('POST', '/v1/contacts/batch/upsert', {
      body: {
        id_property: 'email',
        data: [
          { email: 'a@sync.test', name: 'A', type: 'client' },
          { name: 'No e-mail', type: 'client' },
          { email: 'A@SYNC.TEST', name: 'A again', type: 'client' },
          { email: 'known@sync.test', type: 'nope', users: ['ghost@sync.test'] },
          { email: 'unmatched@sync.test', name: 'Half' },
          { email: null, name: 'Null e-mail', type: 'lead' },
        ],
      },
    });
    const messages = expect422(refused, [
      'data[1].email',
      'data[2].email',
      'data[3].type',
      'data[3].users[0]',
      'data[4].type',
      'data[5].email',
    ]);
    expect(messages['data[2].email']).toContain('data[0].email');
    expect(refused.body.error.message).toContain('data[2].email');
    expect(await footprint(tenant)).toEqual(before);

    // With a schema failure too, the rules join the same 422 (one pipeline).
    const mixed = await tenant.request('POST', '/v1/contacts/batch/upsert', {
      body: {
        id_property: 'cif',
        data: [
          { name: 'No cif', type: 'client', phone: 5 },
          { cif: 'X', name: 'X' },
          { cif: 'X', type: 'lead', colour: 'red' },
        ],
      },
    });
    expect422(mixed, ['data[0].phone', 'data[0].cif', 'data[1].type', 'data[2].colour', 'data[2].cif']);
    for (const [body, fields] of [
      [{ id_property: 'phone', data: [{ name: 'A', type: 'client' }] }, ['id_property']],
      [{ id_property: 'email', data: [] }, ['data']],
      [{ data: [{ name: 'A', type: 'client' }] }, ['id_property']],
      [{ id_property: 'name', data: [{ name: 'A', type: 'client' }], extra: 1 }, ['extra']],
    ] as const) {
      const res = await tenant.request('POST', '/v1/contacts/batch/upsert', { body });
      expect(res.status).toBe(422);
      for (const field of fields) expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
    }
    expect(await footprint(tenant)).toEqual(before);
  });

  test('all or nothing: one bad item among good creates and updates leaves every contact and event as it was', async () => {
    const tenant = await stack.createTenant();
    await createContact(tenant, { name: 'Keep', type: 'client', cif: 'K-1', phone: '1' });
    const before = await footprint(tenant);
    const res = await tenant.request('POST', '/v1/contacts/batch/upsert', {
      body: {
        id_property: 'cif',
        data: [
          { cif: 'K-1', phone: '2' },
          ...Array.from({ length: 5 }, (_, i) => ({ cif: `N-${i}`, name: `New ${i}`, type: 'lead' })),
          { cif: 'N-9', name: 'Bad', type: 'unknown' },
        ],
      },
    });
    expect422(res, ['data[6].type']);
    expect(await footprint(tenant)).toEqual(before);
  });

  test('concurrent upserts of the same new e-mail create one contact; the others update it', async () => {
    const tenant = await stack.createTenant();
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        tenant.request('POST', '/v1/contacts/batch/upsert', {
          body: {
            id_property: 'email',
            data: [
              { email: i % 2 === 0 ? 'race@sync.test' : 'RACE@sync.test', name: `Racer ${i}`, type: 'lead' },
              { email: `own-${i}@sync.test`, name: `Own ${i}`, type: 'lead' },
            ],
          },
        }),
      ),
    );
    const bodies = answers.map((a) => ok(a));
    expect(bodies.filter((b) => b.created[0] === true)).toHaveLength(1);
    expect(bodies.every((b) => b.created[1] === true)).toBe(true);
    expect(new Set(bodies.map((b) => b.data[0].id)).size).toBe(1);
    const listed = ok(await tenant.request('GET', '/v1/contacts?email=race@sync.test'));
    expect(listed.pagination.total).toBe(1);
    expect(ok(await tenant.request('GET', '/v1/contacts')).pagination.total).toBe(6);
    const types = (await events(tenant)).map((e) => e.type);
    expect(types.filter((t) => t === 'contact.created')).toHaveLength(6);
    expect(types.filter((t) => t === 'contact.updated')).toHaveLength(4);
  });
});

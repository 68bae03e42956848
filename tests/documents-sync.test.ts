// Issue 13 for documents: keyset cursors and Link headers on every documents list (contract §22),
// ETags and If-Match on every write that changes a document (§24), through the gateway.
import { beforeAll, describe, expect, test } from 'bun:test';
import { type ApiResponse, type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { createContact, createOpportunity, documentEvents, uploadToContact, uploadToOpportunity } from './documents-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
});

const text = (s: string) => new TextEncoder().encode(s);

/** Uploads a small text file under `name` to the contact; returns the document. */
async function upload(t: TestTenant, contactId: number, name: string) {
  const res = await uploadToContact(t, contactId, `${name}.txt`, text(`notes of ${name}\n`), { name });
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  return res.body.data as { id: number; name: string };
}

/** The `rel` → URL map of a Link header. */
function links(res: ApiResponse): Record<string, string> {
  const header = res.headers.get('link') ?? '';
  return Object.fromEntries([...header.matchAll(/<([^>]*)>;\s*rel="(\w+)"/g)].map((m) => [m[2] as string, m[1] as string]));
}

const fieldsOf = (res: ApiResponse) => (res.body.error?.details ?? []).map((d: { field: string }) => d.field);

describe('cursor walks (contract §22)', () => {
  // Names repeat so that name sorts have ties that only the id breaks.
  const NAMES = ['Mango', 'Apple', 'Kiwi', 'Apple', 'Fig', 'Mango', 'Banana', 'Kiwi', 'Cherry', 'Fig', 'Apple', 'Lime'];

  for (const sort of ['id', '-id', 'name', '-name', 'created_at', '-created_at']) {
    test(`sort=${sort}: inserts and deletes between pages — every row that stayed is listed once, none twice`, async () => {
      const t = await stack.createTenant();
      const contactId = await createContact(t);
      const stable = new Set<number>();
      for (const name of NAMES) stable.add((await upload(t, contactId, name)).id);

      const seen: number[] = [];
      let path = `/v1/contacts/${contactId}/documents?per_page=3&sort=${sort}`;
      for (let pages = 0; ; pages++) {
        expect(pages).toBeLessThan(20);
        const res = await t.request('GET', path);
        expect(res.status).toBe(200);
        expect(res.body.pagination).toMatchObject(pages === 0 ? { total: NAMES.length + 0, current_page: 1 } : { total: null });
        const ids = res.body.data.map((d: { id: number }) => d.id);
        seen.push(...ids);
        const next = res.body.pagination.next_cursor as string | null;
        if (!next) break;
        // Delete a row already listed (an offset walk would now skip one), and insert rows that sort
        // before and after the position (an offset walk would list one row twice).
        const listed = ids[0] as number;
        expect((await t.request('DELETE', `/v1/documents/${listed}`)).status).toBe(200);
        stable.delete(listed);
        await upload(t, contactId, 'Aaa early');
        await upload(t, contactId, 'Zzz late');
        const deletedUnseen = [...stable].find((id) => !seen.includes(id));
        if (deletedUnseen !== undefined && pages === 1) {
          expect((await t.request('DELETE', `/v1/documents/${deletedUnseen}`)).status).toBe(200);
          stable.delete(deletedUnseen);
        }
        path = `/v1/contacts/${contactId}/documents?per_page=3&sort=${sort}&cursor=${encodeURIComponent(next)}`;
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of stable) expect(seen.filter((s) => s === id)).toEqual([id]);
    }, 60_000);
  }

  test('a cursor page is in the requested order and never counts', async () => {
    const t = await stack.createTenant();
    const contactId = await createContact(t);
    for (const name of ['b', 'a', 'c', 'a']) await upload(t, contactId, name);
    const first = await t.request('GET', '/v1/documents?per_page=2&sort=-name');
    const rest = await t.request('GET', `/v1/documents?per_page=2&sort=-name&cursor=${first.body.pagination.next_cursor}`);
    expect(rest.status).toBe(200);
    expect(rest.body.pagination).toEqual({
      total: null,
      per_page: 2,
      current_page: null,
      last_page: null,
      has_more: false,
      next_cursor: null,
    });
    const all = [...first.body.data, ...rest.body.data];
    expect(all.map((d: { name: string }) => d.name)).toEqual(['c', 'b', 'a', 'a']);
    const [, , a1, a2] = all;
    expect(a1.id).toBeGreaterThan(a2.id);
  });
});

describe('Link header and next_cursor (contract §22)', () => {
  let t: TestTenant;
  let contactId: number;
  let opportunityId: number;
  let generalId: number;

  beforeAll(async () => {
    t = await stack.createTenant();
    contactId = await createContact(t);
    opportunityId = await createOpportunity(t, contactId);
    for (let i = 0; i < 5; i++) await upload(t, contactId, `Doc ${i}`);
    for (let i = 0; i < 3; i++) await uploadToOpportunity(t, opportunityId, `offer ${i}.txt`, text('offer\n'));
    generalId = (await t.request('GET', '/v1/document-categories')).body.data[0].id;
  });

  test('page mode: first, prev, next and last page URLs repeating per_page, sort and filters', async () => {
    const res = await t.request('GET', `/v1/documents?per_page=2&page=2&sort=name&category_id=${generalId}`);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toMatchObject({ total: 8, per_page: 2, current_page: 2, last_page: 4, has_more: true });
    expect(res.body.pagination.next_cursor).toEqual(expect.any(String));
    const rel = links(res);
    expect(Object.keys(rel).sort()).toEqual(['first', 'last', 'next', 'prev']);
    const base = `/v1/documents?per_page=2&sort=name&category_id=${generalId}`;
    expect(rel).toEqual({ first: `${base}&page=1`, prev: `${base}&page=1`, next: `${base}&page=3`, last: `${base}&page=4` });
    const lastPage = await t.request('GET', rel.last as string);
    expect(lastPage.body.pagination).toMatchObject({ current_page: 4, has_more: false, next_cursor: null });
    expect(Object.keys(links(lastPage)).sort()).toEqual(['first', 'last', 'prev']);
  });

  test('cursor mode: rel="next" carries the cursor; following the Link URLs walks the list to its end', async () => {
    const names: string[] = [];
    let res = await t.request('GET', `/v1/opportunities/${opportunityId}/documents?per_page=2&sort=created_at&cursor=`);
    // An empty cursor is malformed; the walk starts without one.
    expect(res.status).toBe(422);
    let path: string | undefined = `/v1/opportunities/${opportunityId}/documents?per_page=2&sort=created_at`;
    while (path) {
      res = await t.request('GET', path);
      expect(res.status).toBe(200);
      names.push(...res.body.data.map((d: { name: string }) => d.name));
      const next = links(res).next;
      if (res.body.pagination.current_page === null) {
        expect(next).toBe(
          res.body.pagination.next_cursor
            ? `/v1/opportunities/${opportunityId}/documents?per_page=2&sort=created_at&cursor=${res.body.pagination.next_cursor}`
            : undefined,
        );
        if (!res.body.pagination.has_more) expect(res.headers.get('link')).toBeNull();
      }
      path = res.body.pagination.next_cursor
        ? `/v1/opportunities/${opportunityId}/documents?per_page=2&sort=created_at&cursor=${res.body.pagination.next_cursor}`
        : undefined;
    }
    expect(names).toEqual(['offer 0', 'offer 1', 'offer 2']);
  });

  test('categories list: page-mode Link, then a cursor walk', async () => {
    const first = await t.request('GET', '/v1/document-categories?per_page=1');
    expect(first.body.pagination).toMatchObject({ total: 1, has_more: false, next_cursor: null });
    expect(links(first)).toEqual({ first: '/v1/document-categories?per_page=1&page=1', last: '/v1/document-categories?per_page=1&page=1' });
    // Categories other than General come from an operator (there is no API to create them).
    await stack.sql("insert into documents.document_categories (tenant_id, name) values ($1, 'Contracts'), ($1, 'Invoices')", [t.tenantId]);
    const names: string[] = [];
    let path: string | undefined = '/v1/document-categories?per_page=1&sort=-name';
    while (path) {
      const res: ApiResponse = await t.request('GET', path);
      expect(res.status).toBe(200);
      names.push(...res.body.data.map((c: { name: string }) => c.name));
      const cursor: string | null = res.body.pagination.next_cursor;
      path = cursor ? `/v1/document-categories?per_page=1&sort=-name&cursor=${cursor}` : undefined;
      if (names.length > 1) {
        expect(res.body.pagination.total).toBeNull();
        expect(links(res).next).toBe(path);
      }
    }
    expect(names).toEqual(['Invoices', 'General', 'Contracts']);
  });

  test('a cursor is refused with another sort, other filters, another scope, with page, and when malformed (422 on cursor)', async () => {
    const start = await t.request('GET', `/v1/documents?per_page=2&sort=name&contact_id=${contactId}`);
    const cursor = start.body.pagination.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const ok = await t.request('GET', `/v1/documents?per_page=2&sort=name&contact_id=${contactId}&cursor=${cursor}`);
    expect(ok.status).toBe(200);
    for (const path of [
      `/v1/documents?per_page=2&sort=-name&contact_id=${contactId}&cursor=${cursor}`,
      `/v1/documents?per_page=2&sort=name&cursor=${cursor}`,
      `/v1/documents?per_page=2&sort=name&contact_id=${contactId}&category_id=${generalId}&cursor=${cursor}`,
      `/v1/documents?per_page=2&sort=name&contact_id=${contactId}&updated_since=2020-01-01T00:00:00Z&cursor=${cursor}`,
      `/v1/opportunities/${opportunityId}/documents?per_page=2&sort=name&cursor=${cursor}`,
      `/v1/documents?per_page=2&sort=name&contact_id=${contactId}&page=2&cursor=${cursor}`,
      `/v1/documents?per_page=2&sort=name&contact_id=${contactId}&cursor=${cursor.slice(0, -3)}`,
      `/v1/documents?per_page=2&sort=name&contact_id=${contactId}&cursor=not-a-cursor`,
      '/v1/document-categories?cursor=%7B%7D',
    ]) {
      const res = await t.request('GET', path);
      expect({ path, status: res.status, fields: fieldsOf(res) }).toEqual({ path, status: 422, fields: ['cursor'] });
    }
  });

  test("a contact's cursor continues under any identifier of that contact", async () => {
    const contact = (await t.request('GET', `/v1/contacts/${contactId}`)).body.data;
    const first = await t.request('GET', `/v1/contacts/${contactId}/documents?per_page=2`);
    const next = await t.request(
      'GET',
      `/v1/contacts/${encodeURIComponent(contact.name)}/documents?per_page=2&cursor=${first.body.pagination.next_cursor}`,
    );
    expect(next.status).toBe(200);
    expect(next.body.data.map((d: { id: number }) => d.id)[0]).toBeGreaterThan(first.body.data[1].id);
  });
});

describe('ETags and If-Match (contract §24)', () => {
  let t: TestTenant;
  let contactA: number;
  let contactB: number;
  let opportunity1: number;
  let opportunity2: number;

  beforeAll(async () => {
    t = await stack.createTenant();
    contactA = await createContact(t);
    contactB = await createContact(t);
    opportunity1 = await createOpportunity(t, contactA);
    opportunity2 = await createOpportunity(t, contactA);
  });

  const get = (id: number, headers?: Record<string, string>) => t.request('GET', `/v1/documents/${id}`, { headers });
  const newDocument = async () => (await uploadToOpportunity(t, opportunity1, 'memo.txt', text('memo\n'))).body.data.id as number;

  test('upload, GET and link answer a strong ETag of the document; If-None-Match → 304 until it changes', async () => {
    const created = await uploadToOpportunity(t, opportunity1, 'memo.txt', text('memo\n'));
    expect(created.status).toBe(201);
    const etag = created.headers.get('etag') as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const read = await get(created.body.data.id);
    expect(read.headers.get('etag')).toBe(etag);
    const notModified = await get(created.body.data.id, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);

    const linked = await t.request('PUT', `/v1/contacts/${contactA}/documents/${created.body.data.id}`);
    expect(linked.status).toBe(200);
    expect(linked.headers.get('etag')).not.toBe(etag);
    const changed = await get(created.body.data.id, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toBe(linked.headers.get('etag'));
  });

  test('a stale If-Match is 412 on every write that changes a document, and nothing changes (no event)', async () => {
    const id = await newDocument();
    const stale = (await get(id)).headers.get('etag') as string;
    expect((await t.request('PUT', `/v1/opportunities/${opportunity2}/documents/${id}`)).status).toBe(200);
    const current = await get(id);
    const eventsBefore = await documentEvents(t);
    const headers = { 'if-match': stale };
    for (const [method, path] of [
      ['PUT', `/v1/contacts/${contactA}/documents/${id}`],
      ['DELETE', `/v1/contacts/${contactA}/documents/${id}`],
      ['PUT', `/v1/opportunities/${opportunity1}/documents/${id}`],
      ['DELETE', `/v1/opportunities/${opportunity2}/documents/${id}`],
      ['DELETE', `/v1/documents/${id}`],
    ] as const) {
      const res = await t.request(method, path, { headers });
      expect({ method, path, status: res.status, type: res.body.error?.type }).toEqual({
        method,
        path,
        status: 412,
        type: 'precondition_failed',
      });
    }
    const after = await get(id);
    expect(after.body).toEqual(current.body);
    expect(after.headers.get('etag')).toBe(current.headers.get('etag'));
    expect(await documentEvents(t)).toEqual(eventsBefore);
  });

  test('the current ETag or * lets the write through; a missing document is still 404', async () => {
    const id = await newDocument();
    const etag = (await get(id)).headers.get('etag') as string;
    const linked = await t.request('PUT', `/v1/contacts/${contactB}/documents/${id}`, { headers: { 'if-match': etag } });
    expect(linked.status).toBe(200);
    expect(linked.body.data.contact_id).toBe(contactB);
    const unlinked = await t.request('DELETE', `/v1/contacts/${contactB}/documents/${id}`, {
      headers: { 'if-match': `"other", ${linked.headers.get('etag')}` },
    });
    expect(unlinked.status).toBe(200);
    const attached = await t.request('PUT', `/v1/opportunities/${opportunity2}/documents/${id}`, { headers: { 'if-match': '*' } });
    expect(attached.status).toBe(200);
    expect(attached.body.data.opportunity_ids).toEqual([opportunity1, opportunity2].sort((a, b) => a - b));
    const detached = await t.request('DELETE', `/v1/opportunities/${opportunity2}/documents/${id}`, {
      headers: { 'if-match': attached.headers.get('etag') as string },
    });
    expect(detached.status).toBe(200);
    const deleted = await t.request('DELETE', `/v1/documents/${id}`, { headers: { 'if-match': '*' } });
    expect(deleted.status).toBe(200);
    expect((await t.request('DELETE', `/v1/documents/${id}`, { headers: { 'if-match': '*' } })).status).toBe(404);
  });

  test('two concurrent writes with the same ETag: exactly one 200 and one 412', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await newDocument();
      const etag = (await get(id)).headers.get('etag') as string;
      const headers = { 'if-match': etag };
      const answers = await Promise.all([
        t.request('PUT', `/v1/opportunities/${opportunity2}/documents/${id}`, { headers }),
        t.request('PUT', `/v1/contacts/${contactB}/documents/${id}`, { headers }),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      // The document shows the winner's write only.
      const after = (await get(id)).body.data;
      const attachWon = answers[0]?.status === 200;
      expect(after.opportunity_ids.includes(opportunity2)).toBe(attachWon);
      expect(after.contact_id).toBe(attachWon ? null : contactB);
    }
  });

  test('a 412 under an Idempotency-Key does not burn the key: the retry with the fresh ETag succeeds, then replays', async () => {
    const id = await newDocument();
    const stale = (await get(id)).headers.get('etag') as string;
    expect((await t.request('PUT', `/v1/contacts/${contactA}/documents/${id}`)).status).toBe(200);
    const key = `doc-${crypto.randomUUID()}`;
    const path = `/v1/opportunities/${opportunity2}/documents/${id}`;
    const refused = await t.request('PUT', path, { headers: { 'idempotency-key': key, 'if-match': stale } });
    expect(refused.status).toBe(412);
    const fresh = (await get(id)).headers.get('etag') as string;
    const retried = await t.request('PUT', path, { headers: { 'idempotency-key': key, 'if-match': fresh } });
    expect(retried.status).toBe(200);
    expect(retried.body.data.opportunity_ids).toContain(opportunity2);
    const replayed = await t.request('PUT', path, { headers: { 'idempotency-key': key, 'if-match': stale } });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('etag')).toBe(retried.headers.get('etag'));
  });
});

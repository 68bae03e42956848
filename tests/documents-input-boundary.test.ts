// Contract §19 on every documents route: NUL, integer ranges, timestamps, unknown fields, content
// types and UTF-8, each refused with the stated status; a refused upload leaves no row, no object,
// no unfinished multipart upload, no event and no used id; the database holds the same bounds.
import { beforeAll, describe, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { sql } from 'kysely';
import { migrations } from '../services/documents/src/db/migrations/index.ts';
import {
  createContact,
  createOpportunity,
  documentEvents,
  documentRows,
  pdf,
  type RawPart,
  rawUpload,
  samples,
  storedObjects,
  uploadToContact,
} from './documents-fixtures.ts';

let stack: Stack;
let tenant: TestTenant;
let contactId: number;
let opportunityId: number;
let documentId: number;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  contactId = await createContact(tenant, { name: 'Boundary Ltd' });
  opportunityId = await createOpportunity(tenant, contactId);
  documentId = (await uploadToContact(tenant, contactId, 'kept.pdf', pdf())).body.data.id;
});

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const txtFile = (filename: string | Uint8Array = 'notes.txt'): RawPart => ({ name: 'file', filename, data: 'plain notes\n' });
const details = (res: { body: any }) => res.body.error.details as { field: string; message: string }[];

/** A fresh tenant with a contact and an opportunity, to prove a refusal leaves nothing behind. */
async function emptyTenant() {
  const t = await stack.createTenant();
  const contact = await createContact(t);
  const opportunity = await createOpportunity(t, contact);
  return { t, contact, opportunity, uploadPaths: [`/v1/contacts/${contact}/documents`, `/v1/opportunities/${opportunity}/documents`] };
}

async function expectNothingStored(t: TestTenant) {
  expect(await documentRows(stack, t.tenantId)).toBe(0);
  expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
  expect(await documentEvents(t)).toEqual([]);
}

describe('NUL (U+0000)', () => {
  test('in the contact identifier of every nested route → 422 naming identifier (sales is not asked)', async () => {
    for (const [method, path] of [
      ['GET', '/v1/contacts/%00/documents'],
      ['GET', '/v1/contacts/Boundary%00Ltd/documents'],
      ['POST', '/v1/contacts/a%00b/documents'],
      ['PUT', `/v1/contacts/${contactId}%00/documents/${documentId}`],
      ['DELETE', `/v1/contacts/%00/documents/${documentId}`],
    ] as const) {
      const res = await tenant.request(method, path);
      expect([method, path, res.status, details(res)]).toEqual([method, path, 422, [{ field: 'identifier', message: NUL_MESSAGE }]]);
    }
    expect((await tenant.request('GET', `/v1/documents/${documentId}`)).body.data.contact_id).toBe(contactId);
  });

  test('in a numeric path id → 404 (it names no resource)', async () => {
    for (const [method, path] of [
      ['GET', `/v1/documents/${documentId}%00`],
      ['GET', `/v1/documents/%00/content`],
      ['DELETE', `/v1/documents/${documentId}%00`],
      ['GET', `/v1/opportunities/${opportunityId}%00/documents`],
      ['PUT', `/v1/opportunities/${opportunityId}/documents/${documentId}%00`],
      ['PUT', `/v1/contacts/${contactId}/documents/%00`],
    ] as const) {
      const res = await tenant.request(method, path);
      expect([method, path, res.status, res.body.error.type]).toEqual([method, path, 404, 'not_found']);
    }
    expect((await tenant.request('GET', `/v1/documents/${documentId}`)).status).toBe(200);
  });

  test('in any query parameter of every list, known or unknown → 422 naming it', async () => {
    const lists = [
      '/v1/documents',
      '/v1/document-categories',
      `/v1/contacts/${contactId}/documents`,
      `/v1/opportunities/${opportunityId}/documents`,
    ];
    for (const list of lists) {
      for (const param of ['sort', 'updated_since', 'page', 'fuzz_unknown', ...(list.includes('categories') ? [] : ['include'])]) {
        const res = await tenant.request('GET', `${list}?${param}=a%00b`);
        expect([list, param, res.status, details(res)]).toEqual([list, param, 422, [{ field: param, message: NUL_MESSAGE }]]);
      }
    }
    for (const param of ['contact_id', 'opportunity_id', 'category_id']) {
      const res = await tenant.request('GET', `/v1/documents?${param}=1%00`);
      expect(details(res)).toEqual([{ field: param, message: NUL_MESSAGE }]);
    }
  });

  test('in a multipart field value, the file name or a part name → 422 on that field; nothing stored', async () => {
    const { t, uploadPaths } = await emptyTenant();
    const cases: [RawPart[], { field: string; message: string }][] = [
      [[txtFile(), { name: 'name', data: 'Q3\u0000report' }], { field: 'name', message: NUL_MESSAGE }],
      [[txtFile(), { name: 'document_category_id', data: '1\u0000' }], { field: 'document_category_id', message: NUL_MESSAGE }],
      [[txtFile('no\u0000tes.txt')], { field: 'file', message: `name ${NUL_MESSAGE}` }],
      [[txtFile(), { name: 'no\u0000te', data: 'x' }], { field: 'no\\u0000te', message: 'is not a known field' }],
    ];
    for (const path of uploadPaths) {
      for (const [parts, expected] of cases) {
        const res = await rawUpload(t, path, parts);
        expect([path, res.status, details(res)]).toEqual([path, 422, [expected]]);
      }
    }
    await expectNothingStored(t);
  });
});

describe('integers 1..2147483647', () => {
  test('a path id out of range or not a number → 404 on every route with one', async () => {
    for (const bad of ['0', '-1', '2147483648', '9007199254740993', '99999999999999999999', 'abc', '1.5']) {
      for (const [method, path] of [
        ['GET', `/v1/documents/${bad}`],
        ['GET', `/v1/documents/${bad}/content`],
        ['DELETE', `/v1/documents/${bad}`],
        ['GET', `/v1/opportunities/${bad}/documents`],
        ['POST', `/v1/opportunities/${bad}/documents`],
        ['PUT', `/v1/opportunities/${bad}/documents/${documentId}`],
        ['DELETE', `/v1/opportunities/${opportunityId}/documents/${bad}`],
        ['PUT', `/v1/contacts/${contactId}/documents/${bad}`],
        ['DELETE', `/v1/contacts/${contactId}/documents/${bad}`],
      ] as const) {
        const res = await tenant.request(method, path);
        expect([method, path, res.status, res.body.error.type]).toEqual([method, path, 404, 'not_found']);
      }
    }
  });

  test('list filters contact_id, opportunity_id, category_id out of range → 422 stating the rule', async () => {
    for (const param of ['contact_id', 'opportunity_id', 'category_id']) {
      for (const [value, message] of [
        ['2147483648', 'must be at most 2147483647'],
        ['9007199254740993', 'must be at most 2147483647'],
        ['0', 'must be at least 1'],
        ['-1', 'must be at least 1'],
        ['abc', 'must be an integer'],
        ['1.5', 'must be an integer'],
      ] as [string, string][]) {
        const res = await tenant.request('GET', `/v1/documents?${param}=${value}`);
        expect([param, value, res.status, details(res)]).toEqual([param, value, 422, [{ field: param, message }]]);
      }
      const edge = await tenant.request('GET', `/v1/documents?${param}=2147483647`);
      expect([param, edge.status, edge.body.data]).toEqual([param, 200, []]);
    }
    const all = await tenant.request('GET', '/v1/documents?contact_id=0&category_id=2147483648&per_page=0');
    expect(details(all).map((d) => d.field)).toEqual(['per_page', 'contact_id', 'category_id']);
  });

  test('page and per_page on every list: out of range → 422, the last page number → 200 with no data', async () => {
    const lists = [
      '/v1/documents',
      '/v1/document-categories',
      `/v1/contacts/${contactId}/documents`,
      `/v1/opportunities/${opportunityId}/documents`,
    ];
    for (const list of lists) {
      for (const [query, field, message] of [
        ['page=2147483648', 'page', 'must be at most 2147483647'],
        ['page=99999999999999999999', 'page', 'must be at most 2147483647'],
        ['page=0', 'page', 'must be at least 1'],
        ['per_page=101', 'per_page', 'must be at most 100'],
        ['per_page=0', 'per_page', 'must be at least 1'],
        ['per_page=1e2', 'per_page', 'must be an integer'],
      ] as [string, string, string][]) {
        const res = await tenant.request('GET', `${list}?${query}`);
        expect([list, query, res.status, details(res)]).toEqual([list, query, 422, [{ field, message }]]);
      }
      const last = await tenant.request('GET', `${list}?page=2147483647&per_page=100`);
      expect([list, last.status, last.body.data, last.body.pagination.current_page]).toEqual([list, 200, [], 2147483647]);
    }
  });

  test('document_category_id of an upload: out of range or not an integer → 422 stating the rule; nothing stored', async () => {
    const { t, uploadPaths } = await emptyTenant();
    for (const path of uploadPaths) {
      for (const [value, message] of [
        ['2147483648', 'must be at most 2147483647'],
        ['9007199254740993', 'must be at most 2147483647'],
        ['-1', 'must be at least 1'],
        ['0', 'must be at least 1'],
        ['abc', 'must be an integer'],
        ['1e400', 'must be an integer'],
        ['1.5', 'must be an integer'],
        ['', 'must be an integer'],
        ['2147483647', 'does not exist'],
      ] as [string, string][]) {
        const res = await rawUpload(t, path, [txtFile(), { name: 'document_category_id', data: value }]);
        expect([path, value, res.status, details(res)]).toEqual([path, value, 422, [{ field: 'document_category_id', message }]]);
      }
    }
    await expectNothingStored(t);
  });
});

describe('timestamps, sort and include', () => {
  test('updated_since must be a real RFC 3339 instant with an offset, on every list', async () => {
    const lists = [
      '/v1/documents',
      '/v1/document-categories',
      `/v1/contacts/${contactId}/documents`,
      `/v1/opportunities/${opportunityId}/documents`,
    ];
    for (const list of lists) {
      for (const bad of [
        '2026-02-30T00:00:00Z',
        '2026-01-01T00:00:00',
        '2026-13-01T00:00:00Z',
        '2026-01-01T24:61:00Z',
        '0000-01-01T00:00:00Z',
        'yesterday',
      ]) {
        const res = await tenant.request('GET', `${list}?updated_since=${encodeURIComponent(bad)}`);
        expect([list, bad, res.status, details(res)]).toEqual([
          list,
          bad,
          422,
          [{ field: 'updated_since', message: 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset' }],
        ]);
      }
      const ok = await tenant.request('GET', `${list}?updated_since=${encodeURIComponent('2000-01-01T00:00:00+02:00')}`);
      expect([list, ok.status]).toEqual([list, 200]);
    }
  });

  test('an unknown sort field or include value → 422; sort on name works', async () => {
    const res = await tenant.request('GET', '/v1/documents?sort=password&include=everything');
    expect(res.status).toBe(422);
    expect(details(res).map((d) => d.field)).toEqual(['include', 'sort']);
    expect((await tenant.request('GET', '/v1/document-categories?sort=-secret')).status).toBe(422);
    expect((await tenant.request('GET', '/v1/documents?sort=-name&include=metadata')).status).toBe(200);
  });

  test('odd query and path text never gives a 5xx', async () => {
    const lists = [
      '/v1/documents',
      '/v1/document-categories',
      `/v1/contacts/${contactId}/documents`,
      `/v1/opportunities/${opportunityId}/documents`,
    ];
    const queries = [
      'page=1&page=2',
      'per_page[]=1',
      'include=%FF',
      'sort=%ED%A0%80',
      'zz=%',
      `q=${'x'.repeat(10_000)}`,
      'contact_id=%EF%BC%91',
      'page=-0',
      'include=metadata&include=metadata',
    ];
    for (const list of lists) {
      for (const query of queries) {
        const res = await tenant.request('GET', `${list}?${query}`);
        expect([list, query, res.status < 500]).toEqual([list, query, true]);
      }
    }
    // Not percent-encoded UTF-8: names no route value, so no contact (404) even before the body is read.
    for (const identifier of ['%FF', '%ED%A0%80']) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await tenant.request(method, `/v1/contacts/${identifier}/documents`);
        expect([identifier, method, res.status]).toEqual([identifier, method, 404]);
      }
    }
    for (const identifier of ['x'.repeat(3000), '%2F', '%25', "1'", '%0A1', '%F0%9F%98%80']) {
      const list = await tenant.request('GET', `/v1/contacts/${identifier}/documents`);
      expect([identifier.slice(0, 12), list.status]).toEqual([identifier.slice(0, 12), 404]);
      // An upload without a multipart body is refused before the identifier is looked up.
      const upload = await tenant.request('POST', `/v1/contacts/${identifier}/documents`);
      expect([identifier.slice(0, 12), upload.status]).toEqual([identifier.slice(0, 12), 400]);
    }
  });
});

describe('multipart only on uploads, JSON nowhere else', () => {
  test('an upload with a JSON, urlencoded, text or missing body → 400 before the contact is looked up; nothing stored', async () => {
    const { t, uploadPaths } = await emptyTenant();
    for (const path of [...uploadPaths, '/v1/contacts/nobody-at-all/documents']) {
      for (const [contentType, raw] of [
        ['application/json', JSON.stringify({ name: 'x', file: 'aGVsbG8=' })],
        ['application/x-www-form-urlencoded', 'name=x&file=y'],
        ['text/plain', 'hello'],
        ['multipart/form-data', '--x\r\n'],
        [undefined, undefined],
      ] as const) {
        const res = await t.request('POST', path, { raw, headers: contentType ? { 'content-type': contentType } : {} });
        expect([path, contentType, res.status, res.body.error.type]).toEqual([path, contentType, 400, 'bad_request']);
      }
    }
    await expectNothingStored(t);
  });

  test('link and attach routes take no multipart body: 400, and nothing changes', async () => {
    const { t, contact, opportunity } = await emptyTenant();
    const id = (await uploadToContact(t, contact, 'a.pdf', pdf())).body.data.id;
    const form = new FormData();
    form.set('x', 'y');
    const unlink = await t.request('DELETE', `/v1/contacts/${contact}/documents/${id}`, { raw: form });
    expect([unlink.status, unlink.body.error.type]).toEqual([400, 'bad_request']);
    const attach = await t.request('PUT', `/v1/opportunities/${opportunity}/documents/${id}`, { raw: form });
    expect([attach.status, attach.body.error.type]).toEqual([400, 'bad_request']);
    expect((await t.request('GET', `/v1/documents/${id}`)).body.data).toMatchObject({ contact_id: contact, opportunity_ids: [] });
    expect((await documentEvents(t)).map((e) => e.type)).toEqual(['document.created', 'document.linked']);
  });

  test('unknown parts, a file part without a file name, text that is not UTF-8 → 422 on each; nothing stored', async () => {
    const { t, uploadPaths } = await emptyTenant();
    for (const path of uploadPaths) {
      const res = await rawUpload(t, path, [
        txtFile(),
        { name: 'note', data: 'x' },
        { name: 'name', data: Uint8Array.from([0x61, 0xc0, 0xaf]) },
        { name: 'Name', data: 'y' },
      ]);
      expect(details(res)).toEqual([
        { field: 'note', message: 'is not a known field' },
        { field: 'name', message: 'must be valid UTF-8' },
        { field: 'Name', message: 'is not a known field' },
      ]);
      for (const filename of [
        Uint8Array.from([0x66, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]),
        Uint8Array.from([0x61, 0xed, 0xa0, 0x80, 0x2e, 0x74, 0x78, 0x74]),
      ]) {
        const bad = await rawUpload(t, path, [txtFile(filename)]);
        expect(details(bad)).toEqual([{ field: 'file', message: 'name must be valid UTF-8' }]);
      }
      const noFileName = await rawUpload(t, path, [{ name: 'file', data: 'plain notes\n' }]);
      expect(details(noFileName)).toEqual([{ field: 'file', message: 'must be a file' }]);
    }
    await expectNothingStored(t);
  });

  test('name: 255 characters and UTF-8 are kept; 256, empty or blank → 422 stating the rule', async () => {
    const { t, uploadPaths } = await emptyTenant();
    for (const [value, message] of [
      ['n'.repeat(256), 'must be at most 255 characters'],
      ['', 'must not be empty'],
      ['   ', 'must not be empty'],
    ] as [string, string][]) {
      const res = await rawUpload(t, uploadPaths[0] as string, [txtFile(), { name: 'name', data: value }]);
      expect([value.length, res.status, details(res)]).toEqual([value.length, 422, [{ field: 'name', message }]]);
    }
    await expectNothingStored(t);
    const ok = await rawUpload(t, uploadPaths[1] as string, [txtFile('Été.txt'), { name: 'name', data: `Devis été ${'é'.repeat(245)}` }]);
    expect(ok.status).toBe(201);
    expect(ok.body.data.name).toBe(`Devis été ${'é'.repeat(245)}`);
  });
});

describe('a refused write leaves nothing behind', () => {
  test('refused uploads of every kind use no document id: the next accepted upload gets the next id', async () => {
    const { t, uploadPaths } = await emptyTenant();
    const first = (await rawUpload(t, uploadPaths[0] as string, [txtFile()])).body.data.id;
    for (const path of uploadPaths) {
      for (const parts of [
        [txtFile(), { name: 'document_category_id', data: '2147483647' }],
        [txtFile(), { name: 'name', data: 'a\u0000b' }],
        [txtFile('x\u0000.txt')],
        [{ name: 'file', filename: 'fake.pdf', data: 'not a pdf' }],
        [txtFile(), { name: 'unknown', data: 'v' }],
      ] as RawPart[][]) {
        expect((await rawUpload(t, path, parts)).status).toBe(422);
      }
    }
    const next = await rawUpload(t, uploadPaths[1] as string, [{ name: 'file', filename: 'b.png', data: samples.png!() }]);
    expect(next.status).toBe(201);
    expect(next.body.data.id).toBe(first + 1);
    expect((await storedObjects(stack, t.tenantId)).keys).toHaveLength(2);
    expect((await documentEvents(t)).map((e) => e.type)).toEqual([
      'document.created',
      'document.linked',
      'document.created',
      'document.attached',
    ]);
  });
});

describe('the database holds the same bounds', () => {
  test('direct inserts and updates outside the bounds fail with a check violation', async () => {
    const general = (await tenant.request('GET', '/v1/document-categories')).body.data[0].id;
    const insert = (overrides: Record<string, unknown>) => {
      const row: Record<string, unknown> = {
        tenant_id: tenant.tenantId,
        name: 'direct',
        filename: 'f.pdf',
        extension: 'pdf',
        storage_key: `${tenant.tenantId}/${crypto.randomUUID()}.pdf`,
        category_id: general,
        ...overrides,
      };
      const columns = Object.keys(row);
      return stack.sql(
        `insert into documents.documents (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        Object.values(row),
      );
    };
    for (const overrides of [
      { id: 2147483648 },
      { id: 0 },
      { name: 'n'.repeat(256) },
      { name: '' },
      { size_bytes: -1 },
      { contact_id: 0 },
      { contact_id: 2147483648 },
      { created_at: 'infinity' },
      { updated_at: '10000-01-01T00:00:00Z' },
    ]) {
      const error = await insert(overrides).then(
        () => undefined,
        (e: { code?: string }) => e,
      );
      expect([overrides, error?.code]).toEqual([overrides, '23514']);
    }
    const link = await stack
      .sql('insert into documents.document_opportunities (document_id, tenant_id, opportunity_id) values ($1, $2, 2147483648)', [
        documentId,
        tenant.tenantId,
      ])
      .catch((e: { code?: string }) => e);
    expect((link as { code?: string }).code).toBe('23514');
    const category = await stack
      .sql("insert into documents.document_categories (tenant_id, name) values ($1, '')", [tenant.tenantId])
      .catch((e: { code?: string }) => e);
    expect((category as { code?: string }).code).toBe('23514');
    const { rows } = await stack.sql(
      "select sequencename, max_value::text from pg_sequences where schemaname = 'documents' and sequencename like '%_id_seq' order by 1",
    );
    expect(rows).toEqual([
      { sequencename: 'document_categories_id_seq', max_value: '2147483647' },
      { sequencename: 'documents_id_seq', max_value: '2147483647' },
    ]);
  });

  test('the migration repairs rows that break the bounds: ids renumbered, names cut or filled, bad values cleared', async () => {
    const schema = `documents_repair_${crypto.randomUUID().slice(0, 8)}`;
    const { db, pool } = createDb({ url: stack.databaseUrl, schema });
    try {
      const before = migrations.filter((m) => m.name !== '0002_input_bounds');
      expect(before).toHaveLength(migrations.length - 1);
      await migrate(db, schema, before);
      const s = (text: string) => sql.raw(text.replaceAll('@', `${schema}.`)).execute(db);
      await s(`insert into @document_categories (id, tenant_id, name) values (3000000000, 't', '${'c'.repeat(300)}'), (7, 't', '')`);
      await s(`insert into @documents (id, tenant_id, name, filename, extension, storage_key, size_bytes, contact_id, category_id, created_at, updated_at)
        values (3000000001, 't', '${'y'.repeat(300)}', 'a.pdf', 'pdf', 't/a.pdf', -5, 0, 3000000000, 'infinity', '20000-01-01'),
               (5, 't', '', 'b.pdf', 'pdf', 't/b.pdf', 10, 2147483648, 7, now(), now())`);
      await s(
        `insert into @document_opportunities (document_id, tenant_id, opportunity_id) values (3000000001, 't', 0), (3000000001, 't', 9), (5, 't', 2147483648)`,
      );
      await s(`select setval('@documents_id_seq', 3000000001)`);

      await migrate(db, schema, migrations);

      const read = async (text: string) => (await s(text)).rows as Record<string, unknown>[];
      expect(await read('select id, name from @document_categories order by id')).toEqual([
        { id: 7, name: 'Category (7)' },
        { id: 8, name: `${'c'.repeat(200)} (8)` },
      ]);
      const documents = await read(
        `select id, name, size_bytes, contact_id, category_id, created_at > now() - interval '1 minute' as created_now,
                updated_at > now() - interval '1 minute' as updated_now from @documents order by id`,
      );
      expect(documents).toEqual([
        { id: 5, name: 'Untitled', size_bytes: 10, contact_id: null, category_id: 7, created_now: true, updated_now: true },
        { id: 6, name: 'y'.repeat(255), size_bytes: null, contact_id: null, category_id: 8, created_now: true, updated_now: true },
      ]);
      expect(await read('select document_id, opportunity_id from @document_opportunities')).toEqual([
        { document_id: 6, opportunity_id: 9 },
      ]);
      expect(await read(`select nextval('@documents_id_seq')::int as next`)).toEqual([{ next: 7 }]);
    } finally {
      await sql.raw(`drop schema if exists ${schema} cascade`).execute(db);
      await db.destroy();
      await pool.end().catch(() => {});
    }
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { pollUntil, type Stack, sharedStack, type TestTenant } from '@crm/testing';
import {
  createContact,
  createOpportunity,
  documentRows,
  docx,
  exe,
  png,
  samples,
  storedObjects,
  uploadToContact,
  uploadToOpportunity,
  zip,
} from './documents-fixtures.ts';

let stack: Stack;
let tenant: TestTenant;
let contactId: number;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  contactId = await createContact(tenant, { email: 'buyer@acme.test' });
});

const MiB = 1024 * 1024;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const mimeOf: Record<string, string> = {
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
  txt: 'text/plain',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

async function generalCategoryId(t: TestTenant): Promise<number> {
  const res = await t.request('GET', '/v1/document-categories');
  return res.body.data.find((c: { name: string }) => c.name === 'General').id;
}

describe('upload of every allowed type', () => {
  for (const [extension, make] of Object.entries(samples)) {
    test(`${extension}: 201 with captured metadata, stored bytes equal the upload`, async () => {
      const content = make();
      const res = await uploadToContact(tenant, contactId, `Q3 report.${extension.toUpperCase()}`, content);
      expect(res.status).toBe(201);
      const doc = res.body.data;
      expect(doc).toEqual({
        id: expect.any(Number),
        name: 'Q3 report',
        filename: expect.stringMatching(new RegExp(`^[0-9a-f-]{36}\\.${extension}$`)),
        extension,
        mime_type: mimeOf[extension],
        size_bytes: content.length,
        contact_id: contactId,
        category_id: await generalCategoryId(tenant),
        opportunity_ids: [],
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      const download = await fetch(`${stack.gatewayUrl}/v1/documents/${doc.id}/content`, { headers: { 'x-api-key': tenant.apiKey } });
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe(mimeOf[extension] as string);
      expect(new Uint8Array(await download.arrayBuffer())).toEqual(content as Uint8Array<ArrayBuffer>);
      expect((await storedObjects(stack, tenant.tenantId)).keys).toContain(`${tenant.tenantId}/${doc.filename}`);
    });
  }
});

describe('fields', () => {
  test('name and document_category_id from the form; upload to an opportunity attaches it', async () => {
    const opportunityId = await createOpportunity(tenant, contactId);
    const general = await generalCategoryId(tenant);
    const res = await uploadToOpportunity(tenant, opportunityId, 'dir/scan.png', png(), {
      name: 'Signed contract',
      document_category_id: String(general),
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'Signed contract',
      extension: 'png',
      contact_id: null,
      category_id: general,
      opportunity_ids: [opportunityId],
    });
  });

  test('the contact identifier may be an e-mail; GET /documents/{id} returns the same document', async () => {
    const res = await uploadToContact(tenant, 'buyer@acme.test', 'notes.txt', samples.txt!());
    expect(res.status).toBe(201);
    expect(res.body.data.contact_id).toBe(contactId);
    const again = await tenant.request('GET', `/v1/documents/${res.body.data.id}`);
    expect(again.body).toEqual(res.body);
  });

  test('GET /document-categories lists the General category of a new tenant', async () => {
    const fresh = await stack.createTenant();
    const res = await fresh.request('GET', '/v1/document-categories');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { id: expect.any(Number), name: 'General', created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) },
    ]);
    expect(res.body.pagination).toEqual({ total: 1, per_page: 15, current_page: 1, last_page: 1, has_more: false, next_cursor: null });
  });

  test('a download carries Content-Disposition with an RFC 6266 filename*', async () => {
    const res = await uploadToContact(tenant, contactId, 'x.pdf', samples.pdf!(), { name: 'Devis été 2026' });
    const download = await tenant.request('GET', `/v1/documents/${res.body.data.id}/content`);
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="Devis _t_ 2026.pdf"; filename*=UTF-8''Devis%20%C3%A9t%C3%A9%202026.pdf`,
    );
    // Content-Length is set by the documents service; the gateway may re-chunk the stream, so check the bytes.
    expect(download.text.length).toBe(samples.pdf!().length);
  });
});

describe('refused uploads store nothing', () => {
  async function expectRefused(fileName: string, content: Uint8Array, field: string, fields?: Record<string, string>) {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const res = await uploadToContact(t, contact, fileName, content, fields);
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('validation_error');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await documentRows(stack, t.tenantId)).toBe(0);
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
    return res.body.error;
  }

  test('a PNG named .pdf → 422 on file', async () => {
    const error = await expectRefused('invoice.pdf', png(), 'file');
    expect(error.message).toContain('file content does not match the .pdf extension');
  });
  test('an exe renamed .txt → 422 on file', () => expectRefused('readme.txt', exe(), 'file'));
  test('a plain zip renamed .docx → 422 on file', () => expectRefused('letter.docx', zip({ 'hello.txt': 'hi' }), 'file'));
  test('an xlsx renamed .docx → 422 on file', async () => {
    await expectRefused('letter.docx', samples.xlsx!(), 'file');
  });
  test('invalid UTF-8 in a .csv → 422 on file', () => expectRefused('data.csv', Uint8Array.from([0x61, 0x2c, 0xff, 0xfe, 0x0a]), 'file'));
  test('an empty file → 422 on file', async () => {
    const error = await expectRefused('empty.pdf', new Uint8Array(0), 'file');
    expect(error.details).toEqual([{ field: 'file', message: 'must not be empty' }]);
  });
  test('a disallowed type → 422 on file', () => expectRefused('tool.exe', exe(), 'file'));
  test('a name of 256 characters → 422 on name', async () => {
    const error = await expectRefused('ok.pdf', samples.pdf!(), 'name', { name: 'n'.repeat(256) });
    expect(error.details).toEqual([{ field: 'name', message: 'must be at most 255 characters' }]);
  });
  test('a name of 255 characters is accepted', async () => {
    const res = await uploadToContact(tenant, contactId, 'ok.pdf', samples.pdf!(), { name: 'n'.repeat(255) });
    expect(res.status).toBe(201);
    expect(res.body.data.name).toHaveLength(255);
  });
  test('an unknown category → 422 on document_category_id', () =>
    expectRefused('ok.pdf', samples.pdf!(), 'document_category_id', { document_category_id: '999999999' }));
  test('every failing field is reported at once', async () => {
    const error = await expectRefused('invoice.pdf', png(), 'file', { name: 'n'.repeat(256), document_category_id: 'abc' });
    expect(error.details.map((d: { field: string }) => d.field)).toEqual(['file', 'name', 'document_category_id']);
  });
  test('no file part → 422 file is required', async () => {
    const form = new FormData();
    form.set('name', 'x');
    const res = await tenant.request('POST', `/v1/contacts/${contactId}/documents`, { raw: form });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'file', message: 'is required' }]);
  });
  test('an unknown contact → 404 and nothing stored', async () => {
    const t = await stack.createTenant();
    const res = await uploadToContact(t, 'nobody-here', 'a.pdf', samples.pdf!());
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('not_found');
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
  });
  test('an unknown opportunity → 404 and nothing stored', async () => {
    const t = await stack.createTenant();
    const res = await uploadToOpportunity(t, 987654321, 'a.pdf', samples.pdf!());
    expect(res.status).toBe(404);
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
  });
});

describe('size limit (20 MB = 20 × 1024 × 1024 bytes)', () => {
  test('exactly 20 MiB is accepted and downloaded byte for byte', async () => {
    const content = new Uint8Array(20 * MiB).fill(0x61);
    content.set(new TextEncoder().encode('first line\n'));
    const res = await uploadToContact(tenant, contactId, 'big.txt', content);
    expect(res.status).toBe(201);
    expect(res.body.data.size_bytes).toBe(20 * MiB);
    const download = await fetch(`${stack.gatewayUrl}/v1/documents/${res.body.data.id}/content`, {
      headers: { 'x-api-key': tenant.apiKey },
    });
    const got = new Uint8Array(await download.arrayBuffer());
    expect(got.length).toBe(20 * MiB);
    expect(Buffer.compare(got, content)).toBe(0);
  });

  test('uploads sent at once, each of several parts and distinct bytes, come back byte for byte, twice over (part buffers reused)', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    for (const round of [1, 2]) {
      const files = Array.from({ length: 4 }, (_, n) => {
        const bytes = new Uint8Array(11 * MiB + 12_345 * n);
        for (let i = 0; i < bytes.length; i += 4) bytes[i] = (Math.imul(i, 2_654_435_761) + n * 97 + round) >>> 24;
        bytes.set(new TextEncoder().encode('%PDF-1.7\n'));
        return bytes;
      });
      const uploads = await Promise.all(files.map((bytes, n) => uploadToContact(t, contact, `r${round}-${n}.pdf`, bytes)));
      expect(uploads.map((u) => u.status)).toEqual([201, 201, 201, 201]);
      for (const [n, upload] of uploads.entries()) {
        const download = await fetch(`${stack.gatewayUrl}/v1/documents/${upload.body.data.id}/content`, {
          headers: { 'x-api-key': t.apiKey },
        });
        const got = new Uint8Array(await download.arrayBuffer());
        expect({ n, length: got.length, same: Buffer.compare(got, files[n] as Uint8Array) === 0 }).toEqual({
          n,
          length: (files[n] as Uint8Array).length,
          same: true,
        });
      }
    }
  });

  test('20 MiB + 1 byte → 413 payload_too_large, no row, no object, no pending multipart upload', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const res = await uploadToContact(t, contact, 'big.txt', new Uint8Array(20 * MiB + 1).fill(0x61));
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe('payload_too_large');
    expect(await documentRows(stack, t.tenantId)).toBe(0);
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
  });

  test('413 arrives before the body is fully sent (the request body never ends)', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const boundary = 'crmtestboundary';
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="endless.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const chunk = new Uint8Array(MiB).fill(0x62);
    let sent = 0;
    // 20 MiB + 1 byte of file, below the gateway's own cap (20 MiB + 64 KiB): the documents service must refuse it.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      async pull(controller) {
        if (sent < 20 * MiB) {
          controller.enqueue(chunk);
          sent += chunk.length;
        } else if (sent === 20 * MiB) {
          controller.enqueue(Uint8Array.of(0x62));
          sent += 1;
        } else await new Promise(() => {}); // never closes: the server must answer without the end of the body
      },
    });
    const response = await fetch(`${stack.gatewayUrl}/v1/contacts/${contact}/documents`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      // @ts-expect-error: streaming request bodies need half duplex
      duplex: 'half',
      signal: AbortSignal.timeout(30_000),
    });
    expect(response.status).toBe(413);
    expect((await response.json()).error.type).toBe('payload_too_large');
    expect(await documentRows(stack, t.tenantId)).toBe(0);
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
  });
  test('a client that disconnects mid-upload leaves no row, no object and no pending multipart upload', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const boundary = 'crmabortboundary';
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\n`);
    const abort = new AbortController();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      async pull(controller) {
        if (sent < 12 * MiB) {
          controller.enqueue(new Uint8Array(MiB).fill(0x63));
          sent += MiB;
        } else {
          await Bun.sleep(500);
          abort.abort();
        }
      },
    });
    const request = fetch(`${stack.gatewayUrl}/v1/contacts/${contact}/documents`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      // @ts-expect-error: streaming request bodies need half duplex
      duplex: 'half',
      signal: abort.signal,
    });
    await expect(request).rejects.toThrow();
    const stored = await pollUntil(
      'the multipart upload of the cut-off request to be aborted',
      () => storedObjects(stack, t.tenantId),
      (s) => s.pendingUploads === 0,
      { timeoutMs: 15_000, everyMs: 250 },
    );
    expect(stored).toEqual({ keys: [], pendingUploads: 0 });
    expect(await documentRows(stack, t.tenantId)).toBe(0);
  });
});

describe('download and delete', () => {
  test('DELETE removes row, links and object; the document is then 404', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const opportunity = await createOpportunity(t, contact);
    const up = await uploadToContact(t, contact, 'a.docx', docx());
    const id = up.body.data.id;
    expect((await t.request('PUT', `/v1/opportunities/${opportunity}/documents/${id}`)).status).toBe(200);
    expect((await storedObjects(stack, t.tenantId)).keys).toHaveLength(1);
    const del = await t.request('DELETE', `/v1/documents/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: true });
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
    const { rows } = await stack.sql('select count(*)::int as n from documents.document_opportunities where document_id = $1', [id]);
    expect(rows[0].n).toBe(0);
    expect((await t.request('GET', `/v1/documents/${id}`)).status).toBe(404);
    expect((await t.request('GET', `/v1/documents/${id}/content`)).status).toBe(404);
    expect((await t.request('DELETE', `/v1/documents/${id}`)).status).toBe(404);
  });

  test('a non-numeric document id is 404', async () => {
    const res = await tenant.request('GET', '/v1/documents/abc');
    expect(res.status).toBe(404);
  });
});

// Contract §21 on every documents write: the service records a keyed write's answer in the
// write's own transaction, so a retry whose gateway record was lost (a gateway that died between
// the service's commit and its own store) gets the recorded answer and writes nothing more — no
// row, no event, and for uploads no second object in the bucket; a refused write records nothing;
// one key sent twice at once executes once. The object of an upload is written before its row:
// a keyed upload that does not commit leaves none behind, and a client-paced upload holds no
// database connection while its file streams in.
import { beforeAll, describe, expect, test } from 'bun:test';
import { pollUntil, type Stack, send, sharedStack, type TestTenant } from '@crm/testing';
import {
  createContact,
  createOpportunity,
  documentEvents,
  type FeedEvent,
  pdf,
  png,
  storedObjects,
  uploadForm,
  uploadToContact,
} from './documents-fixtures.ts';
import { forgetGatewayRecord, writeAndRetry } from './exactly-once.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 120_000);

const summary = (events: FeedEvent[]) => events.map(({ type, data }) => ({ type, data }));
const objectKey = (tenant: TestTenant, document: { filename: string }) => `${tenant.tenantId}/${document.filename}`;
/** A PDF first, then a PNG under another name: what a client that changed its file would retry with. */
const pdfThenPng = (attempt: number) => (attempt === 0 ? uploadForm('offer.pdf', pdf()) : uploadForm('other.png', png()));

/** Until the tenant's bucket holds no object: a file that goes once the answer is out. */
async function untilNoObjects(tenant: TestTenant, what: string): Promise<void> {
  await pollUntil(
    what,
    () => storedObjects(stack, tenant.tenantId),
    (s) => s.keys.length === 0,
    { timeoutMs: 5_000, everyMs: 50 },
  );
}

describe('a retry whose gateway record was lost gets the recorded answer and writes nothing more', () => {
  test('uploads to a contact and to an opportunity: the retry, even with another file, stores no second object', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const opportunity = await createOpportunity(t, contact);
    const toContact = (await writeAndRetry(stack, t, 'POST', `/v1/contacts/${contact}/documents`, pdfThenPng)).body.data;
    const toOpportunity = (await writeAndRetry(stack, t, 'POST', `/v1/opportunities/${opportunity}/documents`, pdfThenPng)).body.data;
    expect([toContact.extension, toOpportunity.extension]).toEqual(['pdf', 'pdf']);

    expect((await t.request('GET', '/v1/documents')).body.data).toEqual([toContact, toOpportunity]);
    expect((await storedObjects(stack, t.tenantId)).keys.sort()).toEqual([objectKey(t, toContact), objectKey(t, toOpportunity)].sort());
    expect(summary(await documentEvents(t))).toEqual([
      { type: 'document.created', data: toContact },
      { type: 'document.linked', data: toContact },
      { type: 'document.created', data: toOpportunity },
      { type: 'document.attached', data: { ...toOpportunity, opportunity_id: opportunity } },
    ]);
  });

  test('unlink, link, attach, detach and delete: each retry replays (where doing it again would be a 404) and adds no event', async () => {
    const t = await stack.createTenant();
    const [contactA, contactB] = [await createContact(t), await createContact(t)];
    const opportunity = await createOpportunity(t, contactA);
    const created = (await uploadToContact(t, contactA, 'a.pdf', pdf())).body.data;
    const id = created.id;

    const unlinked = (await writeAndRetry(stack, t, 'DELETE', `/v1/contacts/${contactA}/documents/${id}`)).body.data;
    expect(unlinked.contact_id).toBeNull();
    const linked = (await writeAndRetry(stack, t, 'PUT', `/v1/contacts/${contactB}/documents/${id}`)).body.data;
    expect(linked.contact_id).toBe(contactB);
    const attached = (await writeAndRetry(stack, t, 'PUT', `/v1/opportunities/${opportunity}/documents/${id}`)).body.data;
    expect(attached.opportunity_ids).toEqual([opportunity]);
    expect((await writeAndRetry(stack, t, 'DELETE', `/v1/opportunities/${opportunity}/documents/${id}`)).body).toEqual({ detached: true });
    const detached = (await t.request('GET', `/v1/documents/${id}`)).body.data;
    expect(detached.opportunity_ids).toEqual([]);
    expect((await writeAndRetry(stack, t, 'DELETE', `/v1/documents/${id}`)).body).toEqual({ deleted: true });

    expect((await t.request('GET', `/v1/documents/${id}`)).status).toBe(404);
    // A keyed DELETE commits with its record, after its handler: the file goes once the answer is out.
    await untilNoObjects(t, 'the deleted document object');
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
    expect(summary(await documentEvents(t))).toEqual([
      { type: 'document.created', data: created },
      { type: 'document.linked', data: created },
      { type: 'document.unlinked', data: { ...unlinked, previous_contact_id: contactA } },
      { type: 'document.linked', data: linked },
      { type: 'document.attached', data: { ...attached, opportunity_id: opportunity } },
      { type: 'document.detached', data: { ...detached, opportunity_id: opportunity } },
      { type: 'document.deleted', data: { id } },
    ]);
  });

  test('the same key on another upload path is refused by the service (422 idempotency_key_reused) before the file is read', async () => {
    const t = await stack.createTenant();
    const [contactA, contactB] = [await createContact(t), await createContact(t)];
    const key = crypto.randomUUID();
    const first = await t.request('POST', `/v1/contacts/${contactA}/documents`, {
      raw: uploadForm('a.pdf', pdf()),
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    await forgetGatewayRecord(stack, t, key);
    const other = await t.request('POST', `/v1/contacts/${contactB}/documents`, {
      raw: uploadForm('b.pdf', pdf()),
      headers: { 'idempotency-key': key },
    });
    expect([other.status, other.body.error.type]).toEqual([422, 'idempotency_key_reused']);
    expect((await t.request('GET', '/v1/documents')).body.data).toEqual([first.body.data]);
    expect((await storedObjects(stack, t.tenantId)).keys).toEqual([objectKey(t, first.body.data)]);
    expect((await documentEvents(t)).map((e) => [e.type, e.data.id])).toEqual([
      ['document.created', first.body.data.id],
      ['document.linked', first.body.data.id],
    ]);
  });
});

describe('a refused write records nothing', () => {
  test('an upload refused with 422: the same key with a good file then creates (not a replay)', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const path = `/v1/contacts/${contact}/documents`;
    const bad = await t.request('POST', path, { raw: uploadForm('fake.pdf', png()), headers });
    expect([bad.status, bad.body.error.type]).toEqual([422, 'validation_error']);
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [], pendingUploads: 0 });
    // The gateway keeps no 422 validation_error either, so this reaches the service with the same key.
    const good = await t.request('POST', path, { raw: uploadForm('real.pdf', pdf()), headers });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect((await storedObjects(stack, t.tenantId)).keys).toEqual([objectKey(t, good.body.data)]);
  });

  test('a 404 unlink and a 412 delete: once they can succeed, the same keys execute (not replays)', async () => {
    const t = await stack.createTenant();
    const [contactA, contactB] = [await createContact(t), await createContact(t)];
    const id = (await uploadToContact(t, contactA, 'a.pdf', pdf())).body.data.id;
    const unlinkKey = { 'idempotency-key': crypto.randomUUID() };
    expect((await t.request('DELETE', `/v1/contacts/${contactB}/documents/${id}`, { headers: unlinkKey })).status).toBe(404);
    const stale = (await t.request('GET', `/v1/documents/${id}`)).headers.get('etag') as string;
    const deleteKey = { 'idempotency-key': crypto.randomUUID() };

    // The gateway stores both answers (status < 500): forget its records so the retries reach the service.
    await forgetGatewayRecord(stack, t, unlinkKey['idempotency-key']);
    expect((await t.request('DELETE', `/v1/contacts/${contactA}/documents/${id}`)).status).toBe(200);
    expect((await t.request('PUT', `/v1/contacts/${contactB}/documents/${id}`)).status).toBe(200);
    const refused = await t.request('DELETE', `/v1/documents/${id}`, { headers: { ...deleteKey, 'if-match': stale } });
    expect([refused.status, refused.body.error.type]).toEqual([412, 'precondition_failed']);
    await forgetGatewayRecord(stack, t, deleteKey['idempotency-key']);

    const unlinked = await t.request('DELETE', `/v1/contacts/${contactB}/documents/${id}`, { headers: unlinkKey });
    expect([unlinked.status, unlinked.headers.get('idempotent-replayed')]).toEqual([200, null]);
    const fresh = (await t.request('GET', `/v1/documents/${id}`)).headers.get('etag') as string;
    const deleted = await t.request('DELETE', `/v1/documents/${id}`, { headers: { ...deleteKey, 'if-match': fresh } });
    expect([deleted.status, deleted.headers.get('idempotent-replayed')]).toEqual([200, null]);
    expect((await documentEvents(t)).map((e) => e.type)).toEqual([
      'document.created',
      'document.linked',
      'document.unlinked',
      'document.linked',
      'document.unlinked',
      'document.deleted',
    ]);
  });

  test('a keyed upload whose answer cannot be recorded rolls back and leaves no object', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const path = `/v1/contacts/${contact}/documents`;
    const headers = { 'idempotency-key': `refuse-${crypto.randomUUID()}` };
    // The record's insert fails after the handler made the row: the keyed write cannot commit.
    await stack.sql(`alter table documents.idempotency_records add constraint refuse_test_keys check (key not like 'refuse-%')`);
    try {
      const failed = await t.request('POST', path, { raw: uploadForm('a.pdf', pdf()), headers });
      expect([failed.status, failed.body.error.type]).toEqual([500, 'internal_error']);
      // The object goes once the answer is out.
      await untilNoObjects(t, 'the rolled-back upload object');
      expect((await t.request('GET', '/v1/documents')).body.data).toEqual([]);
    } finally {
      await stack.sql('alter table documents.idempotency_records drop constraint refuse_test_keys');
    }
    expect(await documentEvents(t)).toEqual([]);
    // Nothing was recorded (neither by the service nor, for a 5xx, by the gateway): the key executes now.
    const created = await t.request('POST', path, { raw: uploadForm('a.pdf', pdf()), headers });
    expect([created.status, created.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect((await storedObjects(stack, t.tenantId)).keys).toEqual([objectKey(t, created.body.data)]);
  });
});

describe('a keyed DELETE removes the file only once its deletion committed', () => {
  test('whose answer cannot be recorded: row and file stay; the retry deletes both', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const document = (await uploadToContact(t, contact, 'keep.pdf', pdf())).body.data;
    const key = objectKey(t, document);
    const headers = { 'idempotency-key': `refuse-delete-${crypto.randomUUID()}` };
    // The record's insert fails after the handler deleted the row: the keyed write rolls back.
    // (not valid: records an earlier test left under its own refuse- key are not checked)
    await stack.sql(
      `alter table documents.idempotency_records add constraint refuse_delete_keys check (key not like 'refuse-delete-%') not valid`,
    );
    try {
      const failed = await t.request('DELETE', `/v1/documents/${document.id}`, { headers });
      expect([failed.status, failed.body.error.type]).toEqual([500, 'internal_error']);
      expect((await t.request('GET', `/v1/documents/${document.id}`)).status).toBe(200);
      // Checked again after a later request: the answer's after-work found no committed deletion.
      await t.request('GET', '/v1/documents');
      expect((await storedObjects(stack, t.tenantId)).keys).toEqual([key]);
      const { rows } = await stack.sql('select count(*)::int as n from documents.object_deletions where storage_key = $1', [key]);
      expect(rows[0].n).toBe(0);
    } finally {
      await stack.sql('alter table documents.idempotency_records drop constraint refuse_delete_keys');
    }
    const deleted = await t.request('DELETE', `/v1/documents/${document.id}`, { headers });
    expect([deleted.status, deleted.body]).toEqual([200, { deleted: true }]);
    await untilNoObjects(t, 'the deleted document object');
    const { rows } = await stack.sql('select count(*)::int as n from documents.object_deletions where storage_key = $1', [key]);
    expect(rows[0].n).toBe(0);
    expect((await documentEvents(t)).map((e) => e.type)).toEqual(['document.created', 'document.linked', 'document.deleted']);
  });
});

describe('one key at once: one execution', () => {
  test('uploads through two gateway replicas', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const replica = await stack.startGatewayReplica();
    const path = `/v1/contacts/${contact}/documents`;
    for (let round = 0; round < 4; round++) {
      const headers = { 'idempotency-key': crypto.randomUUID() };
      const answers = await Promise.all([
        t.request('POST', path, { raw: uploadForm(`r${round}.pdf`, pdf()), headers }),
        send(replica.url, 'POST', path, { raw: uploadForm(`r${round}.pdf`, pdf()), headers: { ...headers, 'x-api-key': t.apiKey } }),
      ]);
      // The other request either waited for the answer (a replay) or found the key in use.
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const a of answers) if (a.status !== 201) expect(a.body.error.type).toBe('idempotency_key_in_use');
      for (const a of created) expect(a.body).toEqual(created[0]?.body);
    }
    const documents = (await t.request('GET', '/v1/documents')).body.data;
    expect(documents.map((d: { name: string }) => d.name)).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect((await storedObjects(stack, t.tenantId)).keys).toHaveLength(4);
    expect((await documentEvents(t)).filter((e) => e.type === 'document.created')).toHaveLength(4);
  });

  test('straight to the service (no gateway store): four uploads under one key make one document and leave one object', async () => {
    const t = await stack.createTenant();
    const opportunity = await createOpportunity(t);
    const headers = { 'x-internal-token': stack.internalToken, 'x-tenant-id': t.tenantId, 'idempotency-key': crypto.randomUUID() };
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        stack.call('documents', 'POST', `/v1/opportunities/${opportunity}/documents`, { raw: uploadForm(`copy-${i}.pdf`, pdf()), headers }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
    for (const a of answers) expect(a.body).toEqual(answers[0]?.body);
    const document = answers[0]?.body.data;
    // Each copy streamed its file; the ones that found the key recorded removed theirs before answering.
    expect(await storedObjects(stack, t.tenantId)).toEqual({ keys: [objectKey(t, document)], pendingUploads: 0 });
    expect((await t.request('GET', '/v1/documents')).body.data).toEqual([document]);
    expect((await documentEvents(t)).map((e) => e.type)).toEqual(['document.created', 'document.attached']);
  });
});

/** A multipart upload whose file trickles in: `chunks` pieces of 1 KiB, one every `intervalMs`. */
function trickledUpload(url: string, headers: Record<string, string>, chunks: number, intervalMs: number) {
  const boundary = 'crmTrickleBoundary';
  const encoder = new TextEncoder();
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n\r\n`));
    },
    async pull(controller) {
      if (sent === chunks) {
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
        controller.close();
        return;
      }
      await Bun.sleep(intervalMs);
      controller.enqueue(encoder.encode('slow line\n'.repeat(1024 / 10 + 1).slice(0, 1024)));
      sent++;
    },
  });
  return fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    // @ts-expect-error: streaming request bodies need half duplex
    duplex: 'half',
  });
}

describe('a keyed upload holds no database connection while its file streams in', () => {
  test('six slow keyed uploads (more than the pool of five) do not hold up a read or another keyed write', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const kept = (await uploadToContact(t, contact, 'kept.pdf', pdf())).body.data;
    const slow = Array.from({ length: 6 }, () =>
      trickledUpload(
        `${stack.gatewayUrl}/v1/contacts/${contact}/documents`,
        { 'x-api-key': t.apiKey, 'idempotency-key': crypto.randomUUID() },
        30,
        100,
      ),
    );
    await Bun.sleep(700);
    const started = performance.now();
    const read = await t.request('GET', '/v1/documents');
    const readMs = performance.now() - started;
    const write = await t.request('DELETE', `/v1/contacts/${contact}/documents/${kept.id}`, {
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    const bothMs = performance.now() - started;
    expect(read.status).toBe(200);
    expect(write.status).toBe(200);
    const answers = await Promise.all(slow);
    const finishedMs = performance.now() - started;
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
    // The uploads took about 3 s; the read and the write did not wait for them.
    expect(readMs).toBeLessThan(1000);
    expect(bothMs).toBeLessThan(1500);
    expect(finishedMs).toBeGreaterThan(bothMs + 1000);
    expect((await storedObjects(stack, t.tenantId)).keys).toHaveLength(7);
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EventType, eventPayloadErrors, newEventId } from '@crm/contracts';
import { pollUntil, type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { connect, JSONCodec } from 'nats';
import {
  createContact,
  createOpportunity,
  documentEvents,
  eventTypesOf,
  pdf,
  putObject,
  samples,
  storedObjects,
  uploadToContact,
  uploadToOpportunity,
} from './documents-fixtures.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
});

describe('contact link rules (spec §3)', () => {
  let t: TestTenant;
  let contactA: number;
  let contactB: number;
  let id: number;

  beforeAll(async () => {
    t = await stack.createTenant();
    contactA = await createContact(t, { name: 'Acme Ltd' });
    contactB = await createContact(t);
    const opportunity = await createOpportunity(t, contactA);
    id = (await uploadToOpportunity(t, opportunity, 'offer.pdf', pdf())).body.data.id;
  });

  test('no link → link to a contact (by name) returns the linked document', async () => {
    const res = await t.request('PUT', `/v1/contacts/Acme%20Ltd/documents/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, contact_id: contactA });
  });

  test('linked to A → link to A again succeeds and changes nothing', async () => {
    const before = await t.request('GET', `/v1/documents/${id}`);
    const res = await t.request('PUT', `/v1/contacts/${contactA}/documents/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(before.body.data);
  });

  test('linked to A → link to B is 409 conflict and the document is not moved', async () => {
    const res = await t.request('PUT', `/v1/contacts/${contactB}/documents/${id}`);
    expect(res.status).toBe(409);
    expect(res.body.error.type).toBe('conflict');
    expect((await t.request('GET', `/v1/documents/${id}`)).body.data.contact_id).toBe(contactA);
  });

  test('unlink from B (not linked there) is 404', async () => {
    expect((await t.request('DELETE', `/v1/contacts/${contactB}/documents/${id}`)).status).toBe(404);
  });

  test('unlink keeps the document, its file and its list entry; returns the document', async () => {
    const res = await t.request('DELETE', `/v1/contacts/${contactA}/documents/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, contact_id: null });
    const list = await t.request('GET', '/v1/documents');
    expect(list.body.data.map((d: { id: number }) => d.id)).toContain(id);
    const content = await t.request('GET', `/v1/documents/${id}/content`);
    expect(content.status).toBe(200);
    expect((await storedObjects(stack, t.tenantId)).keys).toHaveLength(1);
    expect((await t.request('GET', `/v1/contacts/${contactA}/documents`)).body.data).toEqual([]);
  });

  test('after unlinking, it can be linked to B', async () => {
    const res = await t.request('PUT', `/v1/contacts/${contactB}/documents/${id}`);
    expect(res.body.data.contact_id).toBe(contactB);
  });

  test('events: created, attached, linked, unlinked, linked — one per change, none for the idempotent relink', async () => {
    expect(await eventTypesOf(t, id)).toEqual([
      'document.created',
      'document.attached',
      'document.linked',
      'document.unlinked',
      'document.linked',
    ]);
  });

  test('unknown contact or document → 404', async () => {
    expect((await t.request('PUT', `/v1/contacts/nobody/documents/${id}`)).status).toBe(404);
    expect((await t.request('PUT', `/v1/contacts/${contactA}/documents/99999999`)).status).toBe(404);
  });
});

describe('opportunity attachment rules (spec §3)', () => {
  test('attach, re-attach (still one link), detach keeps document and file, detach again is 404', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const opportunity = await createOpportunity(t, contact);
    const id = (await uploadToContact(t, contact, 'sheet.xlsx', samples.xlsx!())).body.data.id;

    const first = await t.request('PUT', `/v1/opportunities/${opportunity}/documents/${id}`);
    expect(first.status).toBe(200);
    expect(first.body.data.opportunity_ids).toEqual([opportunity]);
    const second = await t.request('PUT', `/v1/opportunities/${opportunity}/documents/${id}`);
    expect(second.status).toBe(200);
    expect(second.body.data.opportunity_ids).toEqual([opportunity]);
    const { rows } = await stack.sql('select count(*)::int as n from documents.document_opportunities where document_id = $1', [id]);
    expect(rows[0].n).toBe(1);

    const detached = await t.request('DELETE', `/v1/opportunities/${opportunity}/documents/${id}`);
    expect(detached.status).toBe(200);
    expect(detached.body).toEqual({ detached: true });
    const after = await t.request('GET', `/v1/documents/${id}`);
    expect(after.body.data).toMatchObject({ id, contact_id: contact, opportunity_ids: [] });
    expect((await t.request('GET', `/v1/documents/${id}/content`)).status).toBe(200);
    expect((await t.request('DELETE', `/v1/opportunities/${opportunity}/documents/${id}`)).status).toBe(404);
    expect(await eventTypesOf(t, id)).toEqual(['document.created', 'document.linked', 'document.attached', 'document.detached']);
  });

  test('attach to an unknown opportunity → 404', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const id = (await uploadToContact(t, contact, 'a.pdf', pdf())).body.data.id;
    expect((await t.request('PUT', `/v1/opportunities/99999999/documents/${id}`)).status).toBe(404);
  });
});

describe('lists', () => {
  let t: TestTenant;
  let contact: number;
  let o1: number;
  let o2: number;
  const ids: number[] = [];

  beforeAll(async () => {
    t = await stack.createTenant();
    contact = await createContact(t, { cif: 'B12345678' });
    o1 = await createOpportunity(t, contact);
    o2 = await createOpportunity(t, contact);
    for (const name of ['a.pdf', 'b.pdf', 'c.pdf']) ids.push((await uploadToContact(t, 'B12345678', name, pdf())).body.data.id);
    ids.push((await uploadToOpportunity(t, o1, 'd.pdf', pdf())).body.data.id);
    await t.request('PUT', `/v1/opportunities/${o2}/documents/${ids[3]}`);
  });

  test('a document attached to two opportunities appears under each', async () => {
    const one = await t.request('GET', `/v1/opportunities/${o1}/documents`);
    const two = await t.request('GET', `/v1/opportunities/${o2}/documents`);
    expect(one.body.data.map((d: { id: number }) => d.id)).toEqual([ids[3]]);
    expect(two.body.data.map((d: { id: number }) => d.id)).toEqual([ids[3]]);
    expect(two.body.data[0].opportunity_ids).toEqual([o1, o2].sort((a, b) => a - b));
  });

  test("a contact's documents, paginated", async () => {
    const page1 = await t.request('GET', `/v1/contacts/${contact}/documents?per_page=2`);
    expect(page1.body.data.map((d: { id: number }) => d.id)).toEqual(ids.slice(0, 2));
    expect(page1.body.pagination).toEqual({
      total: 3,
      per_page: 2,
      current_page: 1,
      last_page: 2,
      has_more: true,
      next_cursor: expect.any(String),
    });
    const page2 = await t.request('GET', `/v1/contacts/${contact}/documents?per_page=2&page=2`);
    expect(page2.body.data.map((d: { id: number }) => d.id)).toEqual(ids.slice(2, 3));
    expect(page2.body.pagination.has_more).toBe(false);
  });

  test('GET /documents with filters and sort', async () => {
    const all = await t.request('GET', '/v1/documents?sort=-id');
    expect(all.body.data.map((d: { id: number }) => d.id)).toEqual([...ids].reverse());
    const byContact = await t.request('GET', `/v1/documents?contact_id=${contact}`);
    expect(byContact.body.pagination.total).toBe(3);
    const byOpportunity = await t.request('GET', `/v1/documents?opportunity_id=${o2}`);
    expect(byOpportunity.body.data.map((d: { id: number }) => d.id)).toEqual([ids[3]]);
    const category = all.body.data[0].category_id;
    expect((await t.request('GET', `/v1/documents?category_id=${category}`)).body.pagination.total).toBe(4);
    expect((await t.request('GET', `/v1/documents?category_id=${category + 1000}`)).body.data).toEqual([]);
  });

  test('out-of-range per_page and an unknown include value are 422', async () => {
    expect((await t.request('GET', '/v1/documents?per_page=0')).status).toBe(422);
    expect((await t.request('GET', `/v1/opportunities/${o1}/documents?include=everything`)).status).toBe(422);
  });
});

describe('include=metadata on documents created before metadata capture', () => {
  test('without the flag: nulls and no storage lookup; with it: one lookup per legacy row, saved back', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const opportunity = await createOpportunity(t, contact);
    const modern = (await uploadToOpportunity(t, opportunity, 'new.pdf', pdf())).body.data;
    const categories = await t.request('GET', '/v1/document-categories');
    const general = categories.body.data[0].id;
    const legacy: { id: number; size: number }[] = [];
    for (const [i, content] of [pdf(), samples.png!()].entries()) {
      const ext = i === 0 ? 'pdf' : 'png';
      const filename = `legacy-${crypto.randomUUID()}.${ext}`;
      await putObject(stack, `${t.tenantId}/${filename}`, content);
      const { rows } = await stack.sql(
        `insert into documents.documents (tenant_id, name, filename, extension, storage_key, category_id)
         values ($1, $2, $3, $4, $5, $6) returning id`,
        [t.tenantId, `Legacy ${i}`, filename, ext, `${t.tenantId}/${filename}`, general],
      );
      await stack.sql('insert into documents.document_opportunities (document_id, tenant_id, opportunity_id) values ($1, $2, $3)', [
        rows[0].id,
        t.tenantId,
        opportunity,
      ]);
      legacy.push({ id: Number(rows[0].id), size: content.length });
    }
    const lookups = async () =>
      (
        await stack.call('documents', 'GET', '/internal/storage-lookups', {
          headers: { 'x-internal-token': stack.internalToken, 'x-tenant-id': t.tenantId },
        })
      ).body.data.head_requests as number;

    const before = await lookups();
    const plain = await t.request('GET', `/v1/opportunities/${opportunity}/documents`);
    expect(plain.status).toBe(200);
    expect(
      plain.body.data.map((d: { id: number; mime_type: string | null; size_bytes: number | null }) => [d.id, d.mime_type, d.size_bytes]),
    ).toEqual([
      [modern.id, 'application/pdf', modern.size_bytes],
      [legacy[0]!.id, null, null],
      [legacy[1]!.id, null, null],
    ]);
    expect(await lookups()).toBe(before);

    const filled = await t.request('GET', `/v1/opportunities/${opportunity}/documents?include=metadata`);
    expect(filled.body.data.map((d: { mime_type: string | null; size_bytes: number | null }) => [d.mime_type, d.size_bytes])).toEqual([
      ['application/pdf', modern.size_bytes],
      ['application/pdf', legacy[0]!.size],
      ['image/png', legacy[1]!.size],
    ]);
    expect(await lookups()).toBe(before + 2);

    const { rows } = await stack.sql('select mime_type, size_bytes from documents.documents where id = any($1) order by id', [
      legacy.map((l) => l.id),
    ]);
    expect(rows).toEqual([
      { mime_type: 'application/pdf', size_bytes: legacy[0]!.size },
      { mime_type: 'image/png', size_bytes: legacy[1]!.size },
    ]);
    await t.request('GET', `/v1/opportunities/${opportunity}/documents?include=metadata`);
    expect(await lookups()).toBe(before + 2);
  });
});

describe('events in: deletions in sales clear links, documents stay (through NATS)', () => {
  test('deleting a contact clears its document links', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const other = await createContact(t);
    const mine = (await uploadToContact(t, contact, 'a.pdf', pdf())).body.data.id;
    const theirs = (await uploadToContact(t, other, 'b.pdf', pdf())).body.data.id;
    expect((await t.request('DELETE', `/v1/contacts/${contact}`)).status).toBe(200);
    const doc = await pollUntil(
      'contact link',
      async () => (await t.request('GET', `/v1/documents/${mine}`)).body.data,
      (d) => d.contact_id === null,
      { timeoutMs: 20_000, everyMs: 200 },
    );
    expect(doc.id).toBe(mine);
    expect((await t.request('GET', `/v1/documents/${mine}/content`)).status).toBe(200);
    expect((await t.request('GET', `/v1/documents/${theirs}`)).body.data.contact_id).toBe(other);
    const events = (await documentEvents(t)).filter((e) => e.data.id === mine);
    expect(events.map((e) => e.type)).toEqual(['document.created', 'document.linked', 'document.unlinked']);
    // The same payload as the unlink route's: the document as it is now, plus the contact it left.
    expect(events[2]?.data).toEqual({ ...doc, previous_contact_id: contact });
    for (const e of events) expect(eventPayloadErrors(e.type as EventType, e.data)).toEqual([]);
  });

  test('deleting an opportunity detaches its documents', async () => {
    const t = await stack.createTenant();
    const contact = await createContact(t);
    const o1 = await createOpportunity(t, contact);
    const o2 = await createOpportunity(t, contact);
    const id = (await uploadToOpportunity(t, o1, 'a.pdf', pdf())).body.data.id;
    await t.request('PUT', `/v1/opportunities/${o2}/documents/${id}`);
    expect((await t.request('DELETE', `/v1/opportunities/${o1}`)).status).toBe(200);
    const doc = await pollUntil(
      'opportunity link',
      async () => (await t.request('GET', `/v1/documents/${id}`)).body.data,
      (d) => d.opportunity_ids.length === 1,
      { timeoutMs: 20_000, everyMs: 200 },
    );
    expect(doc.opportunity_ids).toEqual([o2]);
    expect(doc.contact_id).toBeNull();
    const events = (await documentEvents(t)).filter((e) => e.data.id === id);
    expect(events.map((e) => e.type)).toEqual(['document.created', 'document.attached', 'document.attached', 'document.detached']);
    // The same payload as the detach route's: the document as it is now, plus the opportunity it left.
    expect(events[3]?.data).toEqual({ ...doc, opportunity_id: o1 });
    for (const e of events) expect(eventPayloadErrors(e.type as EventType, e.data)).toEqual([]);
  });
});

describe('events in that do not conform are terminated, not acted on', () => {
  test('a contact.deleted whose id is a string is logged and terminated; the links stay, later events go on', async () => {
    const t = await stack.createTenant();
    const [kept, deleted] = [await createContact(t), await createContact(t)];
    const keptDocument = (await uploadToContact(t, kept, 'a.pdf', pdf())).body.data.id;
    const deletedDocument = (await uploadToContact(t, deleted, 'b.pdf', pdf())).body.data.id;
    const nc = await connect({ servers: stack.natsUrl.replace(/^nats:\/\//, '') });
    const bad = newEventId();
    try {
      // Not the contract's payload ({ id: integer, reference? }): taken at face value, it would clear the links.
      const envelope = {
        id: bad,
        type: 'contact.deleted',
        tenant_id: t.tenantId,
        occurred_at: new Date().toISOString(),
        data: { id: String(kept) },
      };
      await nc.jetstream().publish(`${stack.subjectPrefix}.contact.deleted`, JSONCodec().encode(envelope), { msgID: bad });
    } finally {
      await nc.drain();
    }
    // A real deletion after it: the consumer takes events in stream order, so once this one is handled the bad one was too.
    expect((await t.request('DELETE', `/v1/contacts/${deleted}`)).status).toBe(200);
    await pollUntil(
      'the real deletion',
      async () => (await t.request('GET', `/v1/documents/${deletedDocument}`)).body.data.contact_id,
      (contactId) => contactId === null,
      { timeoutMs: 20_000, everyMs: 200 },
    );
    expect((await t.request('GET', `/v1/documents/${keptDocument}`)).body.data.contact_id).toBe(kept);
    const log = readFileSync(join(stack.logDir, 'documents.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes(bad));
    expect(log.some((line) => line.includes('event terminated') && line.includes('contact.deleted payload does not conform'))).toBe(true);
    expect(await eventTypesOf(t, keptDocument)).toEqual(['document.created', 'document.linked']);
  });
});

describe('isolation: another tenant sees 404 everywhere', () => {
  test("tenant B cannot read, download, link, attach, list or delete tenant A's documents", async () => {
    const a = await stack.createTenant();
    const b = await stack.createTenant();
    const contactA = await createContact(a, { name: 'Shared Name' });
    const opportunityA = await createOpportunity(a, contactA);
    const contactB = await createContact(b, { name: 'Other' });
    const opportunityB = await createOpportunity(b, contactB);
    const id = (await uploadToContact(a, contactA, 'secret.pdf', pdf())).body.data.id;

    for (const [method, path] of [
      ['GET', `/v1/documents/${id}`],
      ['GET', `/v1/documents/${id}/content`],
      ['DELETE', `/v1/documents/${id}`],
      ['PUT', `/v1/contacts/${contactB}/documents/${id}`],
      ['DELETE', `/v1/contacts/${contactB}/documents/${id}`],
      ['PUT', `/v1/opportunities/${opportunityB}/documents/${id}`],
      ['GET', `/v1/contacts/${contactA}/documents`],
      ['GET', '/v1/contacts/Shared%20Name/documents'],
      ['GET', `/v1/opportunities/${opportunityA}/documents`],
      ['PUT', `/v1/contacts/${contactA}/documents/${id}`],
    ] as const) {
      const res = await b.request(method, path);
      expect([method, path, res.status, res.body?.error?.type]).toEqual([method, path, 404, 'not_found']);
    }
    expect((await uploadToContact(b, contactA, 'x.pdf', pdf())).status).toBe(404);
    expect((await uploadToOpportunity(b, opportunityA, 'x.pdf', pdf())).status).toBe(404);
    expect((await b.request('GET', '/v1/documents')).body.data).toEqual([]);
    expect((await b.request('GET', `/v1/documents?contact_id=${contactA}`)).body.data).toEqual([]);
    const still = await a.request('GET', `/v1/documents/${id}`);
    expect(still.body.data).toMatchObject({ id, contact_id: contactA, opportunity_ids: [] });
  });
});

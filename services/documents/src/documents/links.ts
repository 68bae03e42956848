import type { Document } from '@crm/contracts';
import { inTransaction } from '@crm/db';
import { writeEvent, writeEvents } from '@crm/events';
import { AppError, notFound } from '@crm/http';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import {
  attachOpportunity,
  clearContactLinks,
  clearOpportunityLinks,
  detachOpportunity,
  findDocument,
  setContact,
  touchDocument,
} from './repo.ts';
import { loadDocument, lockedDocument, presentDocument } from './service.ts';

type Db = Kysely<DocumentsDatabase>;

// Every link change locks the document and checks If-Match (contract §24) against its
// representation before anything is written, so a 412 changes nothing and emits no event.

/** Links a document to a contact (spec §3): idempotent for the same contact, 409 when linked to another one. */
export function linkContact(db: Db, tenantId: string, id: number, contactId: number, ifMatch?: string): Promise<Document> {
  return inTransaction(db, async (trx) => {
    const current = await lockedDocument(trx, tenantId, id, ifMatch);
    if (current.contact_id === contactId) return current;
    if (current.contact_id !== null) throw new AppError('conflict', 'The document is linked to another contact; unlink it first');
    await setContact(trx, tenantId, id, contactId);
    const document = await loadDocument(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'document.linked', data: document });
    return document;
  });
}

/** Clears the document's link to this contact (document and file stay); 404 when it is not linked to it. */
export function unlinkContact(db: Db, tenantId: string, id: number, contactId: number, ifMatch?: string): Promise<Document> {
  return inTransaction(db, async (trx) => {
    const current = await lockedDocument(trx, tenantId, id, ifMatch);
    if (current.contact_id !== contactId) throw notFound('Document linked to this contact');
    await setContact(trx, tenantId, id, null);
    const document = await loadDocument(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'document.unlinked', data: { ...document, previous_contact_id: contactId } });
    return document;
  });
}

/** Attaches the document to an opportunity; attaching again changes nothing (still one link). */
export function attach(db: Db, tenantId: string, id: number, opportunityId: number, ifMatch?: string): Promise<Document> {
  return inTransaction(db, async (trx) => {
    const current = await lockedDocument(trx, tenantId, id, ifMatch);
    if (!(await attachOpportunity(trx, tenantId, id, opportunityId))) return current;
    await touchDocument(trx, tenantId, id);
    const document = await loadDocument(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'document.attached', data: { ...document, opportunity_id: opportunityId } });
    return document;
  });
}

/** Detaches the document from an opportunity (document and file stay); 404 when it is not attached. */
export function detach(db: Db, tenantId: string, id: number, opportunityId: number, ifMatch?: string): Promise<void> {
  return inTransaction(db, async (trx) => {
    await lockedDocument(trx, tenantId, id, ifMatch);
    if (!(await detachOpportunity(trx, tenantId, id, opportunityId))) throw notFound('Document attached to this opportunity');
    await touchDocument(trx, tenantId, id);
    const document = await loadDocument(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'document.detached', data: { ...document, opportunity_id: opportunityId } });
  });
}

/** The documents as the API returns them after a bulk change, in id order (one deleted meanwhile is left out). */
async function presentDocuments(trx: Db, tenantId: string, ids: number[]): Promise<Document[]> {
  const documents: Document[] = [];
  for (const id of [...ids].sort((a, b) => a - b)) {
    const row = await findDocument(trx, tenantId, id);
    if (row) documents.push(presentDocument(row));
  }
  return documents;
}

// The bulk changes below emit the same events, with the same payloads, as the single routes
// (`unlinkContact`, `detach`): a consumer cannot tell who cleared the link.

/** A contact was deleted: clears its links (documents stay) and emits `document.unlinked` for each. */
export function forgetContact(db: Db, tenantId: string, contactId: number): Promise<number> {
  return inTransaction(db, async (trx) => {
    const ids = await clearContactLinks(trx, tenantId, contactId);
    const documents = await presentDocuments(trx, tenantId, ids);
    await writeEvents(
      trx,
      documents.map((document) => ({
        tenantId,
        type: 'document.unlinked' as const,
        data: { ...document, previous_contact_id: contactId },
      })),
    );
    return ids.length;
  });
}

/** An opportunity was deleted: detaches its documents (documents stay) and emits `document.detached` for each. */
export function forgetOpportunity(db: Db, tenantId: string, opportunityId: number): Promise<number> {
  return inTransaction(db, async (trx) => {
    const ids = await clearOpportunityLinks(trx, tenantId, opportunityId);
    for (const id of ids) await touchDocument(trx, tenantId, id);
    const documents = await presentDocuments(trx, tenantId, ids);
    await writeEvents(
      trx,
      documents.map((document) => ({ tenantId, type: 'document.detached' as const, data: { ...document, opportunity_id: opportunityId } })),
    );
    return ids.length;
  });
}

import { listQuery, requestContext } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { SalesDirectory } from '../sales/client.ts';
import type { Storage } from '../storage/s3.ts';
import { uploadReader } from '../uploads/receive.ts';
import { attach, detach, linkContact, unlinkContact } from './links.ts';
import {
  ContactDocumentListQuery,
  ContactDocumentParams,
  ContactParams,
  DetachedResponse,
  DocumentListResponse,
  DocumentResponse,
  OpportunityDocumentListQuery,
  OpportunityDocumentParams,
  OpportunityParams,
  SORTABLE,
  uploadRequestBody,
} from './model.ts';
import { LIST_DESCRIPTION, WRITE_DESCRIPTION } from './openapi-text.ts';
import { listDocumentPage, readListRequest } from './service.ts';
import { uploadDocument, uploadedObjects } from './upload.ts';

const uploadDescription =
  'multipart/form-data with `file` (required, at most 20 MB = 20 × 1024 × 1024 bytes; 413 payload_too_large beyond, checked while streaming), ' +
  '`name` (optional, at most 255 characters; defaults to the file name without directory and extension) and `document_category_id` ' +
  '(optional, 1..2147483647; defaults to the General category). No other part is accepted, and no value may contain U+0000. Allowed types: pdf, doc, docx, xls, xlsx, csv, txt, png, jpg, jpeg, gif, webp; the ' +
  'extension must match the content (422 on `file` otherwise, and for an empty file).';

/**
 * Document operations under a contact: list, upload, link and unlink (contract §15). Writes go
 * through `write.db` (exactly-once with an Idempotency-Key, contract §21).
 */
export function contactDocumentsRoutes(db: Kysely<DocumentsDatabase>, storage: Storage, sales: SalesDirectory) {
  const tags = ['Documents', 'Contacts'];
  return new Elysia({ name: 'documents-contact-documents' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .use(uploadedObjects(db, storage))
    .get(
      '/v1/contacts/:identifier/documents',
      async ({ params, query, tenantId, requestId }) => {
        const contactId = await sales.resolveContact({ tenantId, requestId }, params.identifier);
        // The cursor is bound to the resolved contact: it continues under any identifier of that contact, no other.
        const request = readListRequest(query, { contact_id: contactId });
        return listDocumentPage(db, storage, tenantId, { contactId }, request, query.include === 'metadata');
      },
      {
        params: ContactParams,
        ...listQuery(ContactDocumentListQuery, SORTABLE),
        response: { 200: DocumentListResponse },
        detail: { summary: "List a contact's documents", description: LIST_DESCRIPTION, tags },
      },
    )
    .post(
      '/v1/contacts/:identifier/documents',
      async ({ params, request, tenantId, requestId, set, write, uploaded }) => {
        const reader = uploadReader(request);
        const target = async () => ({ contactId: await sales.resolveContact({ tenantId, requestId }, params.identifier) });
        set.status = 201;
        return uploadDocument({ write, uploaded, storage, tenantId, reader, target });
      },
      {
        parse: 'none',
        params: ContactParams,
        response: { 201: DocumentResponse },
        detail: { summary: 'Upload a document linked to a contact', description: uploadDescription, tags, requestBody: uploadRequestBody },
      },
    )
    .put(
      '/v1/contacts/:identifier/documents/:document',
      async ({ params, tenantId, requestId, ifMatch, write }) => {
        const contactId = await sales.resolveContact({ tenantId, requestId }, params.identifier);
        return { data: await linkContact(write.db, tenantId, params.document, contactId, ifMatch) };
      },
      {
        params: ContactDocumentParams,
        response: { 200: DocumentResponse },
        detail: {
          summary: 'Link a document to a contact',
          description: `Idempotent for the same contact; 409 conflict when the document is linked to another contact (it is not moved). ${WRITE_DESCRIPTION}`,
          tags,
        },
      },
    )
    .delete(
      '/v1/contacts/:identifier/documents/:document',
      async ({ params, tenantId, requestId, ifMatch, write }) => {
        const contactId = await sales.resolveContact({ tenantId, requestId }, params.identifier);
        return { data: await unlinkContact(write.db, tenantId, params.document, contactId, ifMatch) };
      },
      {
        params: ContactDocumentParams,
        response: { 200: DocumentResponse },
        detail: {
          summary: 'Unlink a document from a contact',
          description: `The document and its file are kept and stay listed; 404 when the document is not linked to this contact. ${WRITE_DESCRIPTION}`,
          tags,
        },
      },
    );
}

/**
 * Document operations under an opportunity: list, upload, attach and detach (contract §15).
 * Writes go through `write.db` (exactly-once with an Idempotency-Key, contract §21).
 */
export function opportunityDocumentsRoutes(db: Kysely<DocumentsDatabase>, storage: Storage, sales: SalesDirectory) {
  const tags = ['Documents', 'Opportunities'];
  return new Elysia({ name: 'documents-opportunity-documents' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .use(uploadedObjects(db, storage))
    .get(
      '/v1/opportunities/:id/documents',
      async ({ params, query, tenantId, requestId }) => {
        const opportunityId = await sales.requireOpportunity({ tenantId, requestId }, params.id);
        const request = readListRequest(query, { opportunity_id: opportunityId });
        return listDocumentPage(db, storage, tenantId, { opportunityId }, request, query.include === 'metadata');
      },
      {
        params: OpportunityParams,
        ...listQuery(OpportunityDocumentListQuery, SORTABLE),
        response: { 200: DocumentListResponse },
        detail: {
          summary: "List an opportunity's documents",
          description: `A document attached to several opportunities appears under each. ${LIST_DESCRIPTION}`,
          tags,
        },
      },
    )
    .post(
      '/v1/opportunities/:id/documents',
      async ({ params, request, tenantId, requestId, set, write, uploaded }) => {
        const reader = uploadReader(request);
        const target = async () => ({ opportunityId: await sales.requireOpportunity({ tenantId, requestId }, params.id) });
        set.status = 201;
        return uploadDocument({ write, uploaded, storage, tenantId, reader, target });
      },
      {
        parse: 'none',
        params: OpportunityParams,
        response: { 201: DocumentResponse },
        detail: {
          summary: 'Upload a document attached to an opportunity',
          description: uploadDescription,
          tags,
          requestBody: uploadRequestBody,
        },
      },
    )
    .put(
      '/v1/opportunities/:id/documents/:document',
      async ({ params, tenantId, requestId, ifMatch, write }) => {
        const opportunityId = await sales.requireOpportunity({ tenantId, requestId }, params.id);
        return { data: await attach(write.db, tenantId, params.document, opportunityId, ifMatch) };
      },
      {
        params: OpportunityDocumentParams,
        response: { 200: DocumentResponse },
        detail: {
          summary: 'Attach a document to an opportunity',
          description: `Idempotent: attaching again keeps one link. ${WRITE_DESCRIPTION}`,
          tags,
        },
      },
    )
    .delete(
      '/v1/opportunities/:id/documents/:document',
      async ({ params, tenantId, requestId, ifMatch, write }) => {
        const opportunityId = await sales.requireOpportunity({ tenantId, requestId }, params.id);
        await detach(write.db, tenantId, params.document, opportunityId, ifMatch);
        return { detached: true as const };
      },
      {
        params: OpportunityDocumentParams,
        response: { 200: DetachedResponse },
        detail: {
          summary: 'Detach a document from an opportunity',
          description: `The document and its file are kept; 404 when it is not attached. ${WRITE_DESCRIPTION}`,
          tags,
        },
      },
    );
}

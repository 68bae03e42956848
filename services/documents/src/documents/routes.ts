import { Deleted, listQuery, requestContext } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { Storage } from '../storage/s3.ts';
import {
  DocumentCategoryListQuery,
  DocumentCategoryListResponse,
  DocumentListQuery,
  DocumentListResponse,
  DocumentParams,
  DocumentResponse,
  downloadResponse,
  SORTABLE,
} from './model.ts';
import { deletedObjects, removeDeletedObject } from './object-deletions.ts';
import { LIST_DESCRIPTION, WRITE_DESCRIPTION } from './openapi-text.ts';
import { documentContent, listCategoryPage, listDocumentPage, loadDocument, readListRequest, removeDocument } from './service.ts';

const tags = ['Documents'];

/** Downloads are inert in a browser: nothing loads, nothing runs, the page is a unique origin. */
const DOWNLOAD_CSP = "default-src 'none'; sandbox";

/**
 * Document categories, the document list, one document, its content and its deletion (through
 * `write.db`: exactly-once with an Idempotency-Key, contract §21).
 */
export function documentsRoutes(db: Kysely<DocumentsDatabase>, storage: Storage) {
  return new Elysia({ name: 'documents-documents' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .use(deletedObjects(db, storage))
    .get(
      '/v1/document-categories',
      // per_page, page, sort, updated_since and the cursor's length were checked (one 422) by `listQuery`.
      ({ query, tenantId }) => listCategoryPage(db, tenantId, readListRequest(query)),
      {
        ...listQuery(DocumentCategoryListQuery, SORTABLE),
        response: { 200: DocumentCategoryListResponse },
        detail: {
          summary: "List the account's document categories",
          description: `Every account has a "General" category, used when an upload names none. ${LIST_DESCRIPTION}`,
          tags,
        },
      },
    )
    .get(
      '/v1/documents',
      ({ query, tenantId }) => {
        const { contact_id, opportunity_id, category_id } = query;
        const request = readListRequest(query, { contact_id, opportunity_id, category_id });
        const filters = { contactId: contact_id, opportunityId: opportunity_id, categoryId: category_id };
        return listDocumentPage(db, storage, tenantId, filters, request, query.include === 'metadata');
      },
      {
        ...listQuery(DocumentListQuery, SORTABLE),
        response: { 200: DocumentListResponse },
        detail: {
          summary: 'List documents',
          description: `Filters: contact_id, opportunity_id, category_id, updated_since. ${LIST_DESCRIPTION}`,
          tags,
        },
      },
    )
    .get('/v1/documents/:id', async ({ params, tenantId }) => ({ data: await loadDocument(db, tenantId, params.id) }), {
      params: DocumentParams,
      response: { 200: DocumentResponse },
      detail: {
        summary: 'Get a document',
        description:
          'Answers with a strong `ETag` of the document; with `If-None-Match` equal to it → 304 without a body. The ETag changes whenever the document does (name, links, attachments, metadata).',
        tags,
      },
    })
    .get(
      '/v1/documents/:id/content',
      async ({ params, tenantId }) => {
        const response = await documentContent(db, storage, tenantId, params.id);
        // Uploaded bytes are the tenant's, not ours: a browser that opens one must neither sniff it
        // into HTML nor run it with the API's origin (contract §20).
        response.headers.set('content-security-policy', DOWNLOAD_CSP);
        response.headers.set('x-content-type-options', 'nosniff');
        return response;
      },
      {
        params: DocumentParams,
        detail: {
          summary: "Download a document's file",
          description:
            "Streams the stored bytes with Content-Type, Content-Length, Content-Disposition (attachment, RFC 6266 filename*), X-Content-Type-Options: nosniff and Content-Security-Policy: default-src 'none'; sandbox.",
          tags,
          responses: { 200: downloadResponse },
        },
      },
    )
    .delete(
      '/v1/documents/:id',
      async ({ params, tenantId, ifMatch, write, deletedObjects }) => {
        const storageKey = await removeDocument(write.db, tenantId, params.id, ifMatch);
        // Without a key the delete has committed: the object goes now. A keyed write commits
        // after this handler, with its record: the object goes once the answer is out.
        if (write.open) deletedObjects.add(storageKey);
        else await removeDeletedObject(db, storage, storageKey);
        return { deleted: true as const };
      },
      {
        params: DocumentParams,
        response: { 200: Deleted },
        detail: {
          summary: 'Delete a document',
          description: `Removes the document, its contact and opportunity links and its stored file. The file is removed after the deletion commits; when storage cannot be reached then, the deletion still succeeds and the file is removed as soon as storage is back. ${WRITE_DESCRIPTION}`,
          tags,
        },
      },
    )
    .get('/internal/storage-lookups', ({ tenantId }) => ({ data: { head_requests: storage.headRequestsFor(tenantId) } }), {
      detail: { hide: true },
    });
}

import { pageRequest, paginationOf } from '@crm/db';
import { Deleted, IdParams, listQuery, requestContext } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { Storage } from '../storage/s3.ts';
import {
  CATEGORY_SORTABLE,
  CategoryListQuery,
  CategoryListResponse,
  DOCUMENT_SORTABLE,
  DocumentListQuery,
  DocumentListResponse,
  DocumentResponse,
} from './model.ts';
import { ensureGeneralCategory, listCategories } from './repo.ts';
import { documentContent, listDocumentPage, loadDocument, removeDocument } from './service.ts';

const tags = ['Documents'];

/** Downloads are inert in a browser: nothing loads, nothing runs, the page is a unique origin. */
const DOWNLOAD_CSP = "default-src 'none'; sandbox";

/** Document categories, the document list, one document, its content and its deletion. */
export function documentRoutes(db: Kysely<DocumentsDatabase>, storage: Storage) {
  return new Elysia({ name: 'documents-documents' })
    .use(requestContext)
    .get(
      '/v1/document-categories',
      async ({ query, tenantId }) => {
        // per_page, page, sort and updated_since were checked (one 422) by `listQuery`.
        const { request } = pageRequest(query, CATEGORY_SORTABLE);
        await ensureGeneralCategory(db, tenantId);
        const { total, rows } = await listCategories(db, tenantId, request);
        const data = rows.map((r) => ({
          id: Number(r.id),
          name: r.name,
          created_at: r.created_at.toISOString(),
          updated_at: r.updated_at.toISOString(),
        }));
        return { data, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(CategoryListQuery, CATEGORY_SORTABLE),
        response: { 200: CategoryListResponse },
        detail: {
          summary: "List the account's document categories",
          description: 'Every account has a "General" category, used when an upload names none.',
          tags,
        },
      },
    )
    .get(
      '/v1/documents',
      async ({ query, tenantId }) => {
        const { request } = pageRequest(query, DOCUMENT_SORTABLE);
        const filters = { contactId: query.contact_id, opportunityId: query.opportunity_id, categoryId: query.category_id };
        const { total, data } = await listDocumentPage(db, storage, tenantId, filters, request, query.include === 'metadata');
        return { data, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(DocumentListQuery, DOCUMENT_SORTABLE),
        response: { 200: DocumentListResponse },
        detail: {
          summary: 'List documents',
          description: 'Filters: contact_id, opportunity_id, category_id, updated_since; sort on id, name, created_at, updated_at.',
          tags,
        },
      },
    )
    .get('/v1/documents/:id', async ({ params, tenantId }) => ({ data: await loadDocument(db, tenantId, params.id) }), {
      params: IdParams,
      response: { 200: DocumentResponse },
      detail: { summary: 'Get a document', tags },
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
        params: IdParams,
        detail: {
          summary: "Download a document's file",
          description:
            "Streams the stored bytes with Content-Type, Content-Length, Content-Disposition (attachment, RFC 6266 filename*), X-Content-Type-Options: nosniff and Content-Security-Policy: default-src 'none'; sandbox.",
          tags,
          responses: {
            200: {
              description: 'The file bytes',
              content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            },
          },
        },
      },
    )
    .delete(
      '/v1/documents/:id',
      async ({ params, tenantId }) => {
        await removeDocument(db, storage, tenantId, params.id);
        return { deleted: true as const };
      },
      {
        params: IdParams,
        response: { 200: Deleted },
        detail: {
          summary: 'Delete a document',
          description: 'Removes the document, its contact and opportunity links and its stored file.',
          tags,
        },
      },
    )
    .get('/internal/storage-lookups', ({ tenantId }) => ({ data: { head_requests: storage.headRequestsFor(tenantId) } }), {
      detail: { hide: true },
    });
}

import { ListQuery, pageRequest, paginationOf } from '@crm/db';
import { notFound, requestContext, validationError } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { Storage } from '../storage/s3.ts';
import {
  CATEGORY_SORTABLE,
  CategoryListResponse,
  DeletedResponse,
  DOCUMENT_SORTABLE,
  DocumentListQuery,
  DocumentListResponse,
  DocumentResponse,
} from './model.ts';
import { ensureGeneralCategory, listCategories } from './repo.ts';
import { documentContent, listDocumentPage, loadDocument, removeDocument } from './service.ts';

const tags = ['Documents'];

/** A numeric document id from a path, or 404 (a non-number cannot name a document). */
export function documentIdFrom(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw notFound('Document');
  return Number(value);
}

/** Downloads are inert in a browser: nothing loads, nothing runs, the page is a unique origin. */
const DOWNLOAD_CSP = "default-src 'none'; sandbox";

/** Document categories, the document list, one document, its content and its deletion. */
export function documentRoutes(db: Kysely<DocumentsDatabase>, storage: Storage) {
  return new Elysia({ name: 'documents-documents' })
    .use(requestContext)
    .get(
      '/v1/document-categories',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, CATEGORY_SORTABLE);
        if (errors.length > 0) throw validationError(errors);
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
        query: ListQuery,
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
        const { request, errors } = pageRequest(query, DOCUMENT_SORTABLE);
        if (errors.length > 0) throw validationError(errors);
        const filters = { contactId: query.contact_id, opportunityId: query.opportunity_id, categoryId: query.category_id };
        const { total, data } = await listDocumentPage(db, storage, tenantId, filters, request, query.include === 'metadata');
        return { data, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        query: DocumentListQuery,
        response: { 200: DocumentListResponse },
        detail: {
          summary: 'List documents',
          description: 'Filters: contact_id, opportunity_id, category_id, updated_since; sort on id, name, created_at, updated_at.',
          tags,
        },
      },
    )
    .get('/v1/documents/:id', async ({ params, tenantId }) => ({ data: await loadDocument(db, tenantId, documentIdFrom(params.id)) }), {
      params: t.Object({ id: t.String() }),
      response: { 200: DocumentResponse },
      detail: { summary: 'Get a document', tags },
    })
    .get(
      '/v1/documents/:id/content',
      async ({ params, tenantId }) => {
        const response = await documentContent(db, storage, tenantId, documentIdFrom(params.id));
        // Uploaded bytes are the tenant's, not ours: a browser that opens one must neither sniff it
        // into HTML nor run it with the API's origin (contract §20).
        response.headers.set('content-security-policy', DOWNLOAD_CSP);
        response.headers.set('x-content-type-options', 'nosniff');
        return response;
      },
      {
        params: t.Object({ id: t.String() }),
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
        await removeDocument(db, storage, tenantId, documentIdFrom(params.id));
        return { deleted: true as const };
      },
      {
        params: t.Object({ id: t.String() }),
        response: { 200: DeletedResponse },
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

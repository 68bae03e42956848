import { Document, DocumentCategory } from '@crm/contracts';
import type { SortType } from '@crm/db';
import { Id, IdParams, ListPagination, ListQuery, listQueryWith, Name, PathId, QueryId } from '@crm/http';
import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { mimeTypes } from '../uploads/file-types.ts';

// Response schemas are the public ones of @crm/contracts (the event payloads use them too);
// only the request schemas live here.

export const DocumentResponse = t.Object({ data: Document }, { title: 'DocumentResponse' });
export const DocumentListResponse = t.Object({ data: t.Array(Document), pagination: ListPagination }, { title: 'DocumentListResponse' });
export const DocumentCategoryListResponse = t.Object(
  { data: t.Array(DocumentCategory), pagination: ListPagination },
  { title: 'DocumentCategoryListResponse' },
);
export const DetachedResponse = t.Object({ detached: t.Literal(true) }, { title: 'DetachedResponse' });

/** `{id}` of a document path: 1..2147483647, anything else is a 404. */
export const DocumentParams = IdParams;

/** `{identifier}`: sales resolves it (contract §11); a NUL in it is refused by the kit (422). */
const identifier = t.String({ description: 'Contact id, name, e-mail or CIF' });
/** Path parameters of the contact-scoped list and upload. */
export const ContactParams = t.Object({ identifier });
/** Path parameters of link and unlink. */
export const ContactDocumentParams = t.Object({ identifier, document: PathId('Document id') });
/** Path parameters of the opportunity-scoped list and upload. */
export const OpportunityParams = t.Object({ id: PathId('Opportunity id') });
/** Path parameters of attach and detach. */
export const OpportunityDocumentParams = t.Object({ id: PathId('Opportunity id'), document: PathId('Document id') });

const include = t.Optional(
  t.Literal('metadata', {
    description:
      'metadata: fill mime_type and size_bytes of documents created before metadata capture (one storage lookup per such row, so slower)',
  }),
);

/** Query of GET /document-categories. */
export const DocumentCategoryListQuery = ListQuery;

const scopedDocumentListQuery = listQueryWith({ include });
/** Query of GET /contacts/{identifier}/documents. */
export const ContactDocumentListQuery = scopedDocumentListQuery;
/** Query of GET /opportunities/{id}/documents. */
export const OpportunityDocumentListQuery = scopedDocumentListQuery;

/** Query of GET /documents. */
export const DocumentListQuery = listQueryWith({
  include,
  contact_id: QueryId('Only documents linked to this contact'),
  opportunity_id: QueryId('Only documents attached to this opportunity'),
  category_id: QueryId('Only documents of this category'),
});

/**
 * The text fields of an upload (the request body that creates a document, besides its `file`).
 * Multipart values arrive as strings, so they are checked like query values (`queryErrors`),
 * with the shared bounds and messages.
 */
export const DocumentCreate = Type.Object({
  name: Type.Optional(
    Name({
      pattern: '\\S',
      patternMessage: 'must not be empty',
      description: 'Display name, 1..255 characters, not only spaces; defaults to the file name without extension',
    }),
  ),
  document_category_id: Type.Optional(Id({ description: 'An existing document category (1..2147483647); defaults to General' })),
});

/** The multipart upload body, for the OpenAPI description (the service parses it as a stream). */
export const uploadRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object' as const,
        required: ['file'],
        additionalProperties: false,
        properties: {
          file: { type: 'string' as const, format: 'binary', description: 'The file, at most 20 MB; its extension must match its content' },
          // The same schemas that check the fields (typed loosely: OpenAPI's types predate JSON Schema 2020).
          ...(DocumentCreate.properties as Record<string, object>),
        },
        title: 'DocumentUpload',
        examples: [{ file: '<the bytes of contract.pdf>', name: 'Signed contract' }],
      },
    },
  },
};

const bytes = { schema: { type: 'string' as const, format: 'binary' } };

/**
 * The answer of `GET /documents/{id}/content`, for the OpenAPI description: the stored bytes with
 * the MIME type captured at upload (one of the allowed types), or `application/octet-stream`
 * for a document created before metadata capture.
 */
export const downloadResponse = {
  description: 'The file bytes',
  headers: {
    'Content-Disposition': {
      description:
        "`attachment; filename=\"<ASCII fallback>\"; filename*=UTF-8''<percent-encoded name>` (RFC 6266): the document's name and extension",
      schema: { type: 'string' as const },
    },
    'Content-Length': { description: 'The size in bytes', schema: { type: 'integer' as const, minimum: 0 } },
    'X-Content-Type-Options': { description: 'Always `nosniff`', schema: { type: 'string' as const, enum: ['nosniff'] } },
    'Content-Security-Policy': {
      description: "Always `default-src 'none'; sandbox`: a browser that opens the file runs nothing",
      schema: { type: 'string' as const },
    },
  },
  content: Object.fromEntries(['application/octet-stream', ...new Set(Object.values(mimeTypes))].map((type) => [type, bytes])),
};

/** Sortable fields of both lists and their column types (a cursor's key is cast back to it). */
export const SORT_TYPES = {
  id: 'bigint',
  name: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
} as const satisfies Record<string, SortType>;
export const SORTABLE = Object.keys(SORT_TYPES);

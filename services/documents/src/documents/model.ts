import { listQueryWith, Pagination } from '@crm/db';
import { t } from 'elysia';

/** A document as the API returns it (spec §2, contract §15). */
export const Document = t.Object({
  id: t.Integer(),
  name: t.String({ description: 'Display name, at most 255 characters; defaults to the uploaded file name without extension' }),
  filename: t.String({ description: 'Name of the stored object' }),
  extension: t.String({ description: 'Lower-case extension without the dot' }),
  mime_type: t.Union([t.String(), t.Null()], {
    description: 'Captured at upload; null for documents created before metadata capture unless include=metadata',
  }),
  size_bytes: t.Union([t.Integer(), t.Null()], {
    description: 'Captured at upload; null for documents created before metadata capture unless include=metadata',
  }),
  contact_id: t.Union([t.Integer(), t.Null()], { description: 'The single linked contact, if any' }),
  category_id: t.Integer({ description: "Document category; defaults to the tenant's General category" }),
  opportunity_ids: t.Array(t.Integer(), { description: 'Opportunities the document is attached to' }),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});
export type Document = typeof Document.static;

export const DocumentCategory = t.Object({
  id: t.Integer(),
  name: t.String(),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});

export const DocumentResponse = t.Object({ data: Document });
export const DocumentListResponse = t.Object({ data: t.Array(Document), pagination: Pagination });
export const CategoryListResponse = t.Object({ data: t.Array(DocumentCategory), pagination: Pagination });
export const DeletedResponse = t.Object({ deleted: t.Literal(true) });
export const DetachedResponse = t.Object({ detached: t.Literal(true) });

const include = t.Optional(
  t.Literal('metadata', {
    description:
      'metadata: fill mime_type and size_bytes of documents created before metadata capture (one storage lookup per such row, so slower)',
  }),
);

/** Query of the document lists scoped to a contact or an opportunity. */
export const ScopedListQuery = listQueryWith({ include });

/** Query of GET /documents. */
export const DocumentListQuery = listQueryWith({
  include,
  contact_id: t.Optional(t.Integer({ minimum: 1, description: 'Only documents linked to this contact' })),
  opportunity_id: t.Optional(t.Integer({ minimum: 1, description: 'Only documents attached to this opportunity' })),
  category_id: t.Optional(t.Integer({ minimum: 1, description: 'Only documents of this category' })),
});

/** The multipart upload body, for the OpenAPI description (the service parses it as a stream). */
export const uploadRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object' as const,
        required: ['file'],
        properties: {
          file: { type: 'string' as const, format: 'binary', description: 'The file, at most 20 MB; its extension must match its content' },
          name: { type: 'string' as const, maxLength: 255, description: 'Display name; defaults to the file name without extension' },
          document_category_id: { type: 'integer' as const, description: 'An existing document category; defaults to General' },
        },
      },
    },
  },
};

export const DOCUMENT_SORTABLE = ['id', 'name', 'created_at', 'updated_at'] as const;
export const CATEGORY_SORTABLE = ['id', 'name', 'created_at', 'updated_at'] as const;

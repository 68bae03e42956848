import { type Static, Type } from '@sinclair/typebox';
import { EXAMPLE_INSTANT, Instant, Nullable } from './common.ts';

const documentExample = {
  id: 1,
  name: 'Signed contract',
  filename: '3f2b8c1e-7a4d-4e9b-9c1f-2d6e8a0b5c47.pdf',
  extension: 'pdf',
  mime_type: 'application/pdf',
  size_bytes: 48213,
  contact_id: 1,
  category_id: 1,
  opportunity_ids: [1],
  created_at: EXAMPLE_INSTANT,
  updated_at: EXAMPLE_INSTANT,
};

/** A document as the API returns it (spec §2, contract §15). */
export const Document = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String({ description: 'Display name, at most 255 characters; defaults to the uploaded file name without extension' }),
    filename: Type.String({ description: 'Name of the stored object' }),
    extension: Type.String({ description: 'Lower-case extension without the dot' }),
    mime_type: Nullable(Type.String(), {
      description: 'Captured at upload; null for documents created before metadata capture unless include=metadata',
    }),
    size_bytes: Nullable(Type.Integer(), {
      description: 'Captured at upload; null for documents created before metadata capture unless include=metadata',
    }),
    contact_id: Nullable(Type.Integer(), { description: 'The single linked contact, if any' }),
    category_id: Type.Integer({ description: "Document category; defaults to the tenant's General category" }),
    opportunity_ids: Type.Array(Type.Integer(), { description: 'Opportunities the document is attached to' }),
    created_at: Instant(),
    updated_at: Instant(),
  },
  { title: 'Document', examples: [documentExample] },
);
export type Document = Static<typeof Document>;

/** A document category. */
export const DocumentCategory = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    created_at: Instant(),
    updated_at: Instant(),
  },
  { title: 'DocumentCategory', examples: [{ id: 1, name: 'General', created_at: EXAMPLE_INSTANT, updated_at: EXAMPLE_INSTANT }] },
);
export type DocumentCategory = Static<typeof DocumentCategory>;

/** `document.unlinked`: the document and the contact it was linked to. */
export const DocumentUnlinked = Type.Composite([Document, Type.Object({ previous_contact_id: Type.Integer() })], {
  title: 'DocumentUnlinked',
  examples: [{ ...documentExample, contact_id: null, previous_contact_id: 1 }],
});
/** `document.attached` / `document.detached`: the document and the opportunity. */
export const DocumentAttachment = Type.Composite([Document, Type.Object({ opportunity_id: Type.Integer() })], {
  title: 'DocumentAttachment',
  examples: [{ ...documentExample, opportunity_id: 1 }],
});

import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface DocumentCategoriesTable {
  id: Generated<number>;
  tenant_id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DocumentsTable {
  id: Generated<number>;
  tenant_id: string;
  name: string;
  /** The stored object's file name (`<uuid>.<extension>`). */
  filename: string;
  extension: string;
  /** Null on rows created before metadata capture; filled by `include=metadata`. */
  mime_type: string | null;
  size_bytes: number | null;
  /** Object key in the bucket: `<tenant_id>/<filename>`. */
  storage_key: string;
  contact_id: number | null;
  category_id: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DocumentOpportunitiesTable {
  document_id: number;
  tenant_id: string;
  opportunity_id: number;
  created_at: Timestamp;
}

/** Stored objects of deleted documents not yet removed from the bucket (0004). */
export interface ObjectDeletionsTable {
  storage_key: string;
  tenant_id: string;
  created_at: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
}

/** Tables of the documents schema. */
export interface DocumentsDatabase {
  document_categories: DocumentCategoriesTable;
  documents: DocumentsTable;
  document_opportunities: DocumentOpportunitiesTable;
  object_deletions: ObjectDeletionsTable;
}

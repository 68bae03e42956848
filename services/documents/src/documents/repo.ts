import { inIdOrder, type ListRequest, type PageOfIds, preparedStatement, readPageIds, tenantRowsByIds } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { DocumentsDatabase, DocumentsTable } from '../db/database.ts';

type Db = Kysely<DocumentsDatabase>;

export type DocumentRow = Omit<DocumentsTable, 'id' | 'created_at' | 'updated_at'> & {
  id: number;
  created_at: Date;
  updated_at: Date;
  opportunity_ids: number[];
};

export interface DocumentFilters {
  contactId?: number;
  opportunityId?: number;
  categoryId?: number;
}

const GENERAL = 'General';

/** The tenant's "General" category id, created on first use. */
export async function ensureGeneralCategory(db: Db, tenantId: string): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    insert into document_categories (tenant_id, name) values (${tenantId}, ${GENERAL})
    on conflict (tenant_id, name) do update set name = excluded.name
    returning id`.execute(db);
  return (rows[0] as { id: number }).id;
}

/** Whether the category exists in the tenant. */
export async function categoryExists(db: Db, tenantId: string, id: number): Promise<boolean> {
  const row = await db
    .selectFrom('document_categories')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

export interface CategoryRow {
  id: number;
  name: string;
  created_at: Date;
  updated_at: Date;
}

/** One page of the tenant's document categories (page or cursor mode) and its rows in list order. */
export async function listCategories(db: Db, tenantId: string, request: ListRequest): Promise<{ page: PageOfIds; rows: CategoryRow[] }> {
  let query = db.selectFrom('document_categories as c').where('c.tenant_id', '=', tenantId);
  if (request.updatedSince) query = query.where('c.updated_at', '>=', request.updatedSince);
  const page = await readPageIds(query, 'c', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const rows = await db
    .selectFrom('document_categories')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', page.ids)
    .execute();
  return { page, rows: inIdOrder(rows, page.ids) };
}

/** A document's columns (`d`) and its opportunity ids, in id order. */
const DOCUMENT_COLUMNS = `d.id, d.tenant_id, d.name, d.filename, d.extension, d.mime_type, d.size_bytes, d.storage_key, d.contact_id,
    d.category_id, d.created_at, d.updated_at,
    coalesce((select array_agg(o.opportunity_id order by o.opportunity_id) from document_opportunities o where o.document_id = d.id), '{}')
      as opportunity_ids`;

/**
 * One document of the tenant with its opportunity ids, as a named prepared statement (every read,
 * download and write of one document reads it). Sent as text, it was planned on every call: 0.20
 * ms of PostgreSQL CPU per `GET /v1/documents/{id}`, most of it planning (`loadtest/README.md`,
 * twelfth session).
 */
export const DOCUMENT_BY_ID = preparedStatement<DocumentRow>(
  `select ${DOCUMENT_COLUMNS}
  from documents d
  where d.tenant_id = $1 and d.id = $2`,
);

/**
 * The tenant's documents with these ids, with their opportunity ids, in no particular order (a
 * list page): a named prepared statement whose generic plan is kept (`tenantRowsByIds`). Sent as
 * an IN list, it was planned on every call.
 */
export const DOCUMENTS_BY_IDS = preparedStatement<DocumentRow>(
  `select ${DOCUMENT_COLUMNS} from (${tenantRowsByIds('documents', '*', 'd', 'bigint')}) as d`,
);

/** One document of the tenant with its opportunity ids (`DOCUMENT_BY_ID`), or undefined. */
export async function findDocument(db: Db, tenantId: string, id: number): Promise<DocumentRow | undefined> {
  const { rows } = await DOCUMENT_BY_ID.execute(db, [tenantId, id]);
  return rows[0];
}

/** The document row locked for update (link changes), or undefined. */
export async function lockDocument(db: Db, tenantId: string, id: number) {
  return db
    .selectFrom('documents')
    .select(['id', 'contact_id'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** The tenant's documents matching the filters, unordered: what a list walks and counts. */
function filteredDocuments(db: Db, tenantId: string, filters: DocumentFilters, updatedSince: Date | undefined) {
  let query = db.selectFrom('documents as d').where('d.tenant_id', '=', tenantId);
  if (filters.contactId !== undefined) query = query.where('d.contact_id', '=', filters.contactId);
  if (filters.categoryId !== undefined) query = query.where('d.category_id', '=', filters.categoryId);
  if (filters.opportunityId !== undefined) {
    const opportunityId = filters.opportunityId;
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('document_opportunities as o')
          .select('o.document_id')
          .whereRef('o.document_id', '=', 'd.id')
          .where('o.tenant_id', '=', tenantId)
          .where('o.opportunity_id', '=', opportunityId),
      ),
    );
  }
  if (updatedSince) query = query.where('d.updated_at', '>=', updatedSince);
  return query;
}

/** One page of the tenant's documents matching the filters (page or cursor mode) and its rows in list order. */
export async function listDocuments(
  db: Db,
  tenantId: string,
  filters: DocumentFilters,
  request: ListRequest,
): Promise<{ page: PageOfIds; rows: DocumentRow[] }> {
  const page = await readPageIds(filteredDocuments(db, tenantId, filters, request.updatedSince), 'd', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const { rows } = await DOCUMENTS_BY_IDS.execute(db, [tenantId, page.ids]);
  return { page, rows: inIdOrder(rows, page.ids) };
}

export interface NewDocument {
  tenantId: string;
  name: string;
  filename: string;
  extension: string;
  mimeType: string;
  sizeBytes: number;
  storageKey: string;
  contactId: number | null;
  categoryId: number;
}

/** Inserts a document row and returns its id. */
export async function insertDocument(db: Db, doc: NewDocument): Promise<number> {
  const row = await db
    .insertInto('documents')
    .values({
      tenant_id: doc.tenantId,
      name: doc.name,
      filename: doc.filename,
      extension: doc.extension,
      mime_type: doc.mimeType,
      size_bytes: doc.sizeBytes,
      storage_key: doc.storageKey,
      contact_id: doc.contactId,
      category_id: doc.categoryId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Sets (or clears) the document's contact link. */
export async function setContact(db: Db, tenantId: string, id: number, contactId: number | null): Promise<void> {
  await db
    .updateTable('documents')
    .set({ contact_id: contactId, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

/** Attaches the document to an opportunity; returns false when it already was. */
export async function attachOpportunity(db: Db, tenantId: string, documentId: number, opportunityId: number): Promise<boolean> {
  const result = await db
    .insertInto('document_opportunities')
    .values({ document_id: documentId, tenant_id: tenantId, opportunity_id: opportunityId })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Detaches the document from an opportunity; returns false when it was not attached. */
export async function detachOpportunity(db: Db, tenantId: string, documentId: number, opportunityId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('document_opportunities')
    .where('tenant_id', '=', tenantId)
    .where('document_id', '=', documentId)
    .where('opportunity_id', '=', opportunityId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Marks the document as changed (after a link change). */
export async function touchDocument(db: Db, tenantId: string, id: number): Promise<void> {
  await db.updateTable('documents').set({ updated_at: new Date() }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/** Deletes a document row (its opportunity links cascade). */
export async function deleteDocument(db: Db, tenantId: string, id: number): Promise<void> {
  await db.deleteFrom('documents').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/** Stores metadata looked up for a row created before metadata capture. */
export async function saveMetadata(db: Db, tenantId: string, id: number, mimeType: string, sizeBytes: number): Promise<void> {
  await db
    .updateTable('documents')
    .set({ mime_type: mimeType, size_bytes: sizeBytes })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

/** Clears every link to a deleted contact; returns the ids of the documents that were linked. */
export async function clearContactLinks(db: Db, tenantId: string, contactId: number): Promise<number[]> {
  const rows = await db
    .updateTable('documents')
    .set({ contact_id: null, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('contact_id', '=', contactId)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Detaches every document from a deleted opportunity; returns the ids of the documents that were attached. */
export async function clearOpportunityLinks(db: Db, tenantId: string, opportunityId: number): Promise<number[]> {
  const rows = await db
    .deleteFrom('document_opportunities')
    .where('tenant_id', '=', tenantId)
    .where('opportunity_id', '=', opportunityId)
    .returning('document_id')
    .execute();
  return rows.map((r) => r.document_id);
}

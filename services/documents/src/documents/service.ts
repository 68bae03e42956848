import type { Document, DocumentCategory } from '@crm/contracts';
import { inTransaction, type ListPagination, type ListParams, type ListRequest, listPagination, listRequest } from '@crm/db';
import { writeEvent } from '@crm/events';
import { AppError, assertIfMatch, type ErrorDetail, mergeDetails, notFound, queryErrors, throwIfInvalid, validationError } from '@crm/http';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { Storage } from '../storage/s3.ts';
import { isAllowedExtension, mimeTypes } from '../uploads/file-types.ts';
import type { ReceivedUpload, StoredFile } from '../uploads/receive.ts';
import { DocumentCreate, SORT_TYPES } from './model.ts';
import { scheduleObjectDeletion } from './object-deletions.ts';
import {
  type CategoryRow,
  categoryExists,
  type DocumentFilters,
  type DocumentRow,
  deleteDocument,
  ensureGeneralCategory,
  findDocument,
  insertDocument,
  listCategories,
  listDocuments,
  lockDocument,
  saveMetadata,
} from './repo.ts';

type Db = Kysely<DocumentsDatabase>;

/** Maps a row to the API's Document (every field present, empty ones null). */
export function presentDocument(row: DocumentRow): Document {
  return {
    id: row.id,
    name: row.name,
    filename: row.filename,
    extension: row.extension,
    mime_type: row.mime_type,
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
    contact_id: row.contact_id === null ? null : Number(row.contact_id),
    category_id: Number(row.category_id),
    opportunity_ids: row.opportunity_ids.map(Number),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The document as the API returns it (read inside the caller's transaction); 404 when missing. */
export async function loadDocument(db: Db, tenantId: string, id: number): Promise<Document> {
  const row = await findDocument(db, tenantId, id);
  if (!row) throw notFound('Document');
  return presentDocument(row);
}

/**
 * Locks the document for a write (404 when missing) and checks the client's If-Match against
 * its representation as the API returns it (412, contract §24). Under the lock a concurrent
 * writer with the same ETag waits, then sees the changed representation and gets its 412.
 */
export async function lockedDocument(trx: Db, tenantId: string, id: number, ifMatch?: string): Promise<Document> {
  if (!(await lockDocument(trx, tenantId, id))) throw notFound('Document');
  const current = await loadDocument(trx, tenantId, id);
  assertIfMatch(ifMatch, current);
  return current;
}

/** Where a new upload is linked. */
export type UploadTarget = { contactId: number } | { opportunityId: number };

/**
 * The upload's fields checked as one: the stream's findings (`file`, unknown parts), then the
 * schema of the text fields (NUL, lengths, integer bounds, shared messages), then the database
 * rule (the category exists) for a category id the schema accepted.
 */
async function validatedFields(db: Db, tenantId: string, upload: ReceivedUpload, file: StoredFile | undefined) {
  const fields = Object.fromEntries(upload.fields);
  const fromSchema = mergeDetails(upload.problems, queryErrors(DocumentCreate, fields));
  const invalid = new Set(fromSchema.map((d) => d.field));
  const name = fields.name ?? file?.baseName ?? '';
  const givenCategory = fields.document_category_id;
  const categoryId = givenCategory === undefined || invalid.has('document_category_id') ? undefined : Number(givenCategory.trim());
  const rules: ErrorDetail[] =
    categoryId !== undefined && !(await categoryExists(db, tenantId, categoryId))
      ? [{ field: 'document_category_id', message: 'does not exist' }]
      : [];
  return { name, categoryId, problems: mergeDetails(fromSchema, rules) };
}

/**
 * Turns a received upload into a document: validates every field, then inserts the row, its
 * link and `document.created` (plus `linked`/`attached`) in one transaction. On any failure
 * the stored object is deleted, so no orphan stays in the bucket.
 */
export async function createDocument(
  db: Db,
  storage: Storage,
  tenantId: string,
  upload: ReceivedUpload,
  target: UploadTarget,
): Promise<Document> {
  const file = upload.file;
  try {
    const { name, categoryId, problems } = await validatedFields(db, tenantId, upload, file);
    if (problems.length > 0 || !file) throw validationError(problems);
    return await inTransaction(db, async (trx) => {
      const category = categoryId ?? (await ensureGeneralCategory(trx, tenantId));
      const contactId = 'contactId' in target ? target.contactId : null;
      const id = await insertDocument(trx, {
        tenantId,
        name,
        filename: file.filename,
        extension: file.extension,
        mimeType: file.mimeType,
        sizeBytes: file.size,
        storageKey: file.key,
        contactId,
        categoryId: category,
      });
      if ('opportunityId' in target) {
        await trx
          .insertInto('document_opportunities')
          .values({ document_id: id, tenant_id: tenantId, opportunity_id: target.opportunityId })
          .execute();
      }
      const document = await loadDocument(trx, tenantId, id);
      await writeEvent(trx, { tenantId, type: 'document.created', data: document });
      if (contactId !== null) await writeEvent(trx, { tenantId, type: 'document.linked', data: document });
      if ('opportunityId' in target)
        await writeEvent(trx, { tenantId, type: 'document.attached', data: { ...document, opportunity_id: target.opportunityId } });
      return document;
    });
  } catch (error) {
    if (file) await storage.remove(file.key).catch(() => {});
    throw error;
  }
}

/** Fills mime_type/size_bytes of rows created before metadata capture: one storage lookup per such row, saved back. */
async function fillMissingMetadata(db: Db, storage: Storage, tenantId: string, rows: DocumentRow[]): Promise<void> {
  await Promise.all(
    rows
      .filter((row) => row.mime_type === null || row.size_bytes === null)
      .map(async (row) => {
        const info = await storage.head(row.storage_key);
        if (!info) return;
        const fromExtension = isAllowedExtension(row.extension) ? mimeTypes[row.extension] : undefined;
        const stored = info.contentType && info.contentType !== 'application/octet-stream' ? info.contentType : undefined;
        row.mime_type = row.mime_type ?? fromExtension ?? stored ?? 'application/octet-stream';
        row.size_bytes = row.size_bytes ?? info.size;
        await saveMetadata(db, tenantId, row.id, row.mime_type, row.size_bytes);
      }),
  );
}

/**
 * The list request of a documents or categories list (contract §4, §22): sort, page or cursor;
 * a cursor made for another sort or other `filters` is one 422 on `cursor`.
 */
export function readListRequest(params: ListParams, filters: Record<string, unknown> = {}): ListRequest {
  const { request, errors } = listRequest(params, SORT_TYPES, filters);
  throwIfInvalid(errors);
  return request;
}

/** One page of documents; with `includeMetadata`, missing metadata is looked up in storage. */
export async function listDocumentPage(
  db: Db,
  storage: Storage,
  tenantId: string,
  filters: DocumentFilters,
  request: ListRequest,
  includeMetadata: boolean,
): Promise<{ data: Document[]; pagination: ListPagination }> {
  const { page, rows } = await listDocuments(db, tenantId, filters, request);
  if (includeMetadata) await fillMissingMetadata(db, storage, tenantId, rows);
  return { data: rows.map(presentDocument), pagination: listPagination(page, request) };
}

/** Maps a row to the API's DocumentCategory. */
const presentDocumentCategory = (row: CategoryRow): DocumentCategory => ({
  id: Number(row.id),
  name: row.name,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** One page of the tenant's document categories ("General" exists once the tenant lists them). */
export async function listCategoryPage(db: Db, tenantId: string, request: ListRequest) {
  await ensureGeneralCategory(db, tenantId);
  const { page, rows } = await listCategories(db, tenantId, request);
  return { data: rows.map(presentDocumentCategory), pagination: listPagination(page, request) };
}

/**
 * Deletes the document and its links and writes `document.deleted` (If-Match checked on the
 * locked row), and schedules its stored object for removal in the same transaction
 * (`object_deletions`). Returns the object's key: the caller removes it once this commits
 * (`removeDeletedObject`), never before, so a rolled-back delete keeps its file.
 */
export async function removeDocument(db: Db, tenantId: string, id: number, ifMatch?: string): Promise<string> {
  return await inTransaction(db, async (trx) => {
    if (!(await lockDocument(trx, tenantId, id))) throw notFound('Document');
    const row = (await findDocument(trx, tenantId, id)) as DocumentRow;
    assertIfMatch(ifMatch, presentDocument(row));
    await deleteDocument(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'document.deleted', data: { id } });
    await scheduleObjectDeletion(trx, tenantId, row.storage_key);
    return row.storage_key;
  });
}

function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The stored bytes as a streaming response with Content-Type, Content-Length and Content-Disposition (RFC 6266). */
export async function documentContent(db: Db, storage: Storage, tenantId: string, id: number): Promise<Response> {
  const row = await findDocument(db, tenantId, id);
  if (!row) throw notFound('Document');
  const object = await storage.download(row.storage_key);
  if (!object) throw new AppError('not_found', 'The stored file of this document is missing');
  const downloadName = row.name.toLowerCase().endsWith(`.${row.extension}`) ? row.name : `${row.name}.${row.extension}`;
  const contentType = row.mime_type ?? (isAllowedExtension(row.extension) ? mimeTypes[row.extension] : 'application/octet-stream');
  return new Response(object.body, {
    headers: {
      'content-type': contentType,
      'content-length': String(object.size),
      'content-disposition': contentDisposition(downloadName),
    },
  });
}

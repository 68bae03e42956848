// An upload as one exactly-once write (contract §21). Its file goes into storage before its row
// exists, so the object is a side effect that the keyed write's rollback cannot undo by itself.
import type { Document } from '@crm/contracts';
import { type RecordedAnswer, type RequestWrite, replayAnswer } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { Storage } from '../storage/s3.ts';
import type { MultipartReader } from '../uploads/multipart.ts';
import { receiveUpload } from '../uploads/receive.ts';
import { createDocument, type UploadTarget } from './service.ts';

type Db = Kysely<DocumentsDatabase>;

/**
 * The object a keyed upload stored. A keyed write commits after the handler, together with its
 * record; when that commit does not happen, the object must go too.
 */
export class UploadedObject {
  #watched: { tenantId: string; documentId: number; key: string } | undefined;

  /** Keeps the object of a document created inside a keyed write, until the answer is out. */
  watch(tenantId: string, documentId: number, key: string): void {
    this.#watched = { tenantId, documentId, key };
  }

  /**
   * Once the answer is out: removes the object unless its document row committed. Never throws
   * (nobody awaits it); when the database cannot be asked the object stays, since an orphan
   * object is harmless and a document without its file is not.
   */
  async settle(db: Db, storage: Storage): Promise<void> {
    const watched = this.#watched;
    this.#watched = undefined;
    if (!watched) return;
    try {
      const row = await db
        .selectFrom('documents')
        .select('id')
        .where('tenant_id', '=', watched.tenantId)
        .where('id', '=', watched.documentId)
        .executeTakeFirst();
      if (!row) await storage.remove(watched.key);
    } catch {
      // Kept: see above.
    }
  }
}

/** Gives upload handlers `uploaded` and settles it after every answer (one instance per app). */
export function uploadedObjects(db: Db, storage: Storage) {
  return new Elysia({ name: 'documents-uploaded-objects' })
    .derive({ as: 'global' }, () => ({ uploaded: new UploadedObject() }))
    .onAfterResponse({ as: 'global' }, ({ uploaded }) => uploaded?.settle(db, storage));
}

export interface UploadRequest {
  write: RequestWrite;
  uploaded: UploadedObject;
  storage: Storage;
  tenantId: string;
  reader: MultipartReader;
  /** Where the document goes (the contact or opportunity, looked up in sales). */
  target: () => Promise<UploadTarget>;
}

/**
 * Receives an upload and creates its document, exactly once under an Idempotency-Key. The keyed
 * write is suspended while the file streams from the client into storage — a client-paced
 * upload of up to 20 MB must not hold a pooled connection and the key's lock — and resumed for
 * the row. A repeat of the key that committed meanwhile is answered instead and this request's
 * object removed, so one key makes one document and leaves one object.
 */
export async function uploadDocument(upload: UploadRequest): Promise<{ data: Document } | Response> {
  const { write, uploaded, storage, tenantId, reader } = upload;
  await write.suspend();
  const target = await upload.target();
  const received = await receiveUpload(reader, tenantId, storage);
  const discard = () => (received.file ? storage.remove(received.file.key).catch(() => {}) : undefined);
  let recorded: RecordedAnswer | undefined;
  try {
    recorded = await write.resume();
  } catch (error) {
    await discard();
    throw error;
  }
  if (recorded) {
    await discard();
    return replayAnswer(recorded);
  }
  const document = await createDocument(write.db, storage, tenantId, received, target);
  if (write.open && received.file) uploaded.watch(tenantId, document.id, received.file.key);
  return { data: document };
}

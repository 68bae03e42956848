// The stored object of a deleted document goes after the row's deletion commits (contract §15:
// DELETE /documents/{id} removes the stored object). The deleting transaction writes the key into
// `object_deletions`; after the commit the object is removed and the row with it. When storage
// cannot be reached then, the row stays and a background job retries until the bucket confirms,
// so the object is never lost track of — and the DELETE itself never depends on storage.
import { type RetentionLog, startRetentionJob } from '@crm/db';
import { Elysia } from 'elysia';
import { type Kysely, sql } from 'kysely';
import type { DocumentsDatabase } from '../db/database.ts';
import type { Storage } from '../storage/s3.ts';

type Db = Kysely<DocumentsDatabase>;

/** In the deleting transaction: the object must go once it commits. */
export async function scheduleObjectDeletion(trx: Db, tenantId: string, storageKey: string): Promise<void> {
  await trx
    .insertInto('object_deletions')
    .values({ storage_key: storageKey, tenant_id: tenantId })
    .onConflict((oc) => oc.column('storage_key').doNothing())
    .execute();
}

/** Removes one scheduled object, then its row; on a storage failure counts the attempt and rethrows. */
async function removeScheduled(db: Db, storage: Storage, storageKey: string): Promise<void> {
  try {
    await storage.remove(storageKey);
  } catch (error) {
    await db
      .updateTable('object_deletions')
      .set({ attempts: sql`attempts + 1`, last_error: error instanceof Error ? error.message : String(error) })
      .where('storage_key', '=', storageKey)
      .execute()
      .catch(() => {});
    throw error;
  }
  await db.deleteFrom('object_deletions').where('storage_key', '=', storageKey).execute();
}

/**
 * After the commit: removes the object if its deletion committed (its row exists; a rolled-back
 * delete left none). Never throws: whatever fails leaves the row to the retry job.
 */
export async function removeDeletedObject(db: Db, storage: Storage, storageKey: string): Promise<boolean> {
  try {
    const scheduled = await db
      .selectFrom('object_deletions')
      .select('storage_key')
      .where('storage_key', '=', storageKey)
      .executeTakeFirst();
    if (!scheduled) return false;
    await removeScheduled(db, storage, storageKey);
    return true;
  } catch {
    return false;
  }
}

/**
 * The objects a keyed DELETE scheduled: such a write commits after its handler, with its record,
 * so they are removed once the answer is out (by then committed or rolled back).
 */
export class DeletedObjects {
  #keys: string[] = [];

  add(storageKey: string): void {
    this.#keys.push(storageKey);
  }

  async settle(db: Db, storage: Storage): Promise<void> {
    const keys = this.#keys;
    this.#keys = [];
    for (const key of keys) await removeDeletedObject(db, storage, key);
  }
}

/** Gives handlers `deletedObjects` and settles it after every answer (one instance per app). */
export function deletedObjects(db: Db, storage: Storage) {
  return new Elysia({ name: 'documents-deleted-objects' })
    .derive({ as: 'global' }, () => ({ deletedObjects: new DeletedObjects() }))
    .onAfterResponse({ as: 'global' }, ({ deletedObjects }) => deletedObjects?.settle(db, storage));
}

/**
 * Retries the objects whose removal failed after their commit (storage down), oldest first,
 * soon after start and then every `intervalMs`; a storage failure ends the run (logged) and the
 * next run starts over.
 */
export function startObjectDeletionRetries(db: Db, storage: Storage, log: RetentionLog, intervalMs: number) {
  return startRetentionJob({
    name: 'objects of deleted documents',
    batchSize: 100,
    intervalMs,
    log,
    async deleteBatch(batchSize) {
      const rows = await db.selectFrom('object_deletions').select('storage_key').orderBy('created_at').limit(batchSize).execute();
      for (const row of rows) await removeScheduled(db, storage, row.storage_key);
      return rows.length;
    },
  });
}

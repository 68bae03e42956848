import { startRetentionJob } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { Logger } from './logger.ts';

/**
 * Deletes at most `batch` published outbox rows older than `days`, oldest first; unpublished
 * rows are never touched. Returns how many went.
 */
export async function purgePublishedOutbox(db: Kysely<any>, days: number, batch = 1000): Promise<number> {
  const result = await sql`delete from outbox where seq in (
    select seq from outbox where published_at is not null and published_at < now() - make_interval(days => ${days})
    order by seq limit ${batch} for update skip locked)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The published-outbox retention job (see libs/db `startRetentionJob`). */
export function startOutboxPurge(db: Kysely<any>, days: number, logger: Logger, intervalMs = 10 * 60_000) {
  return startRetentionJob({
    name: 'published outbox rows',
    deleteBatch: (n) => purgePublishedOutbox(db, days, n),
    batchSize: 1000,
    intervalMs,
    log: logger,
  });
}

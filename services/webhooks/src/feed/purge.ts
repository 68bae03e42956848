// Retention (contract §25): events are kept `EVENTS_RETENTION_DAYS` (default 30) after their
// timestamp, then purged in small batches so no statement holds many locks or runs long. An
// event whose delivery is still pending (an endpoint paused with a queue, a retry under way) is
// kept until that delivery ends. A purged event takes its delivery tasks and their attempt log
// with it (foreign keys, on delete cascade): the feed, the delivery log and manual retries share
// one retention.

import { startRetentionJob } from '@crm/db';
import type { Logger } from '@crm/http';
import { type Kysely, sql } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';

type Db = Kysely<WebhooksDatabase>;

/**
 * Deletes at most `batchSize` events older than the retention and without a pending delivery,
 * oldest first; returns how many. Rows another replica's purge holds are skipped, not waited for.
 */
export async function purgeExpiredEvents(db: Db, retentionDays: number, batchSize: number): Promise<number> {
  const result = await sql`
    delete from events where id in (
      select e.id from events e
      where e.occurred_at < now() - make_interval(days => ${retentionDays})
        and not exists (select 1 from delivery_tasks t where t.event_id = e.id and t.status = 'pending')
      order by e.occurred_at
      limit ${batchSize}
      for update of e skip locked
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

export interface EventPurgeOptions {
  db: Db;
  logger: Logger;
  retentionDays: number;
  intervalMs: number;
  batchSize: number;
}

/** The events retention job: batches of `batchSize` every `intervalMs` (see libs/db `startRetentionJob`). */
export function startEventPurge(options: EventPurgeOptions) {
  const { db, logger, retentionDays, intervalMs, batchSize } = options;
  return startRetentionJob({
    name: 'events',
    deleteBatch: (n) => purgeExpiredEvents(db, retentionDays, n),
    batchSize,
    intervalMs,
    log: logger,
  });
}

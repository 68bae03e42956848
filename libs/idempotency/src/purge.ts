import { type RetentionLog, startRetentionJob } from '@crm/db';
import { type Kysely, sql } from 'kysely';

/** How long a service keeps an exactly-once record: as long as the gateway keeps its own (contract §8). */
export const RECORD_TTL_HOURS = 24;

/** Deletes at most `batch` expired exactly-once records; returns how many went. */
export async function purgeIdempotencyRecords(db: Kysely<any>, ttlHours = RECORD_TTL_HOURS, batch = 1000): Promise<number> {
  const result = await sql`delete from idempotency_records where ctid in (
    select ctid from idempotency_records where created_at < now() - make_interval(hours => ${ttlHours}) limit ${batch})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The exactly-once records retention job (see libs/db `startRetentionJob`). */
export function startIdempotencyPurge(db: Kysely<any>, log: RetentionLog, intervalMs = 10 * 60_000) {
  return startRetentionJob({
    name: 'exactly-once records',
    deleteBatch: (n) => purgeIdempotencyRecords(db, RECORD_TTL_HOURS, n),
    batchSize: 1000,
    intervalMs,
    log,
  });
}

import { type Kysely, sql } from 'kysely';

/** How long a service keeps an exactly-once record: as long as the gateway keeps its own (contract §8). */
export const RECORD_TTL_HOURS = 24;

/** Deletes expired exactly-once records in batches of `batch`; returns how many went. */
export async function purgeIdempotencyRecords(db: Kysely<any>, ttlHours = RECORD_TTL_HOURS, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql`delete from idempotency_records where ctid in (
      select ctid from idempotency_records where created_at < now() - make_interval(hours => ${ttlHours}) limit ${batch})`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** Purges expired records every `intervalMs`; `stop()` ends it. Failures are logged and retried next time. */
export function startIdempotencyPurge(db: Kysely<any>, log: (error: unknown) => void, intervalMs = 10 * 60_000) {
  const timer = setInterval(() => purgeIdempotencyRecords(db).catch(log), intervalMs);
  (timer as { unref?: () => void }).unref?.();
  return { stop: async () => clearInterval(timer) };
}

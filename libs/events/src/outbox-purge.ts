import { type Kysely, sql } from 'kysely';

/**
 * Deletes published outbox rows older than `days`, `batch` rows per statement (short locks,
 * small WAL bursts), until none is left; unpublished rows are never touched. Returns the count.
 */
export async function purgePublishedOutbox(db: Kysely<any>, days: number, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql`delete from outbox where seq in (
      select seq from outbox where published_at is not null and published_at < now() - make_interval(days => ${days})
      order by seq limit ${batch})`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** Purges published outbox rows every `intervalMs`; failures are logged and retried next time. */
export function startOutboxPurge(db: Kysely<any>, days: number, log: (error: unknown) => void, intervalMs = 10 * 60_000) {
  const run = () => purgePublishedOutbox(db, days).catch(log);
  const timer = setInterval(run, intervalMs);
  (timer as { unref?: () => void }).unref?.();
  return { stop: async () => clearInterval(timer) };
}

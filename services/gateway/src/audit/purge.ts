// Retention of the audit log (issue 16): records are kept `AUDIT_RETENTION_DAYS` (90) after
// `occurred_at`, then deleted in small batches — one short statement per batch, oldest first on
// the `audit_logs_occurred_at` index (migration 0007), so no statement holds many row locks or
// writes a burst of WAL. Every gateway replica runs the job; rows another replica's purge holds
// are skipped, not waited for.
import type { Logger } from '@crm/http';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';

/** Deletes at most `batchSize` records older than `retentionDays`, oldest first; returns how many. */
export async function purgeExpiredAuditLogs(db: Kysely<GatewayDatabase>, retentionDays: number, batchSize: number): Promise<number> {
  const result = await sql`
    delete from audit_logs where id in (
      select id from audit_logs
      where occurred_at < now() - make_interval(days => ${retentionDays})
      order by occurred_at
      limit ${batchSize}
      for update skip locked
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

export interface AuditPurgeOptions {
  db: Kysely<GatewayDatabase>;
  logger: Logger;
  retentionDays: number;
  intervalMs: number;
  batchSize: number;
}

/**
 * Runs the purge shortly after start (10 s, or `intervalMs` if shorter) and then every
 * `intervalMs`, batch after batch until a batch is not full. A failure (database down) is logged
 * and the next run tries again.
 */
export function startAuditPurge(options: AuditPurgeOptions) {
  const { db, logger, retentionDays, intervalMs, batchSize } = options;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();

  async function purgeAll(): Promise<void> {
    let purged = 0;
    for (;;) {
      const deleted = await purgeExpiredAuditLogs(db, retentionDays, batchSize);
      purged += deleted;
      if (deleted < batchSize || stopped) break;
    }
    if (purged > 0) logger.info('expired audit records purged', { count: purged, retention_days: retentionDays });
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      running = purgeAll()
        .catch((error) => logger.warn('audit purge failed; retried on the next run', { error: String(error) }))
        .finally(() => {
          if (!stopped) schedule(intervalMs);
        });
    }, delayMs);
  }

  schedule(Math.min(intervalMs, 10_000));
  return {
    /** Stops scheduling; a run under way ends after its current batch. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}

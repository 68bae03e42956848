// Retention of the audit log (issue 16): records are kept `AUDIT_RETENTION_DAYS` (90) after
// `occurred_at`, then deleted in small batches — one short statement per batch, oldest first on
// the `audit_logs_occurred_at` index (migration 0007), so no statement holds many row locks or
// writes a burst of WAL. Every gateway replica runs the job; rows another replica's purge holds
// are skipped, not waited for.

import { startRetentionJob } from '@crm/db';
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

/** The audit records retention job: batches of `batchSize` every `intervalMs` (see libs/db `startRetentionJob`). */
export function startAuditPurge(options: AuditPurgeOptions) {
  const { db, logger, retentionDays, intervalMs, batchSize } = options;
  return startRetentionJob({
    name: 'audit records',
    deleteBatch: (n) => purgeExpiredAuditLogs(db, retentionDays, n),
    batchSize,
    intervalMs,
    log: logger,
  });
}

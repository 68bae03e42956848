import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * An index on `audit_logs (occurred_at)` for the retention purge (`src/audit/purge.ts`), which
 * deletes the oldest records across all tenants in batches: without it every batch would scan
 * the whole table. `if not exists`: on a large table an operator can build it beforehand without
 * blocking writes (`create index concurrently audit_logs_occurred_at on gateway.audit_logs
 * (occurred_at)`), and this migration then does nothing; otherwise it is built here, and audit
 * writes wait (buffered in the gateway's memory) while it is.
 */
export const m0007AuditRetention: Migration = {
  name: '0007_audit_retention',
  async up(db) {
    await sql`create index if not exists audit_logs_occurred_at on audit_logs (occurred_at)`.execute(db);
  },
};

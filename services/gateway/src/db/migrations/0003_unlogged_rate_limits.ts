import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Rate-limit buckets are disposable (a lost bucket only means a fresh budget), so their table
 * skips the WAL: no disk flush on every request. Measured in loadtest/ratelimit-store.ts.
 */
export const m0003UnloggedRateLimits: Migration = {
  name: '0003_unlogged_rate_limits',
  async up(db) {
    await sql`alter table rate_limits set unlogged`.execute(db);
  },
};

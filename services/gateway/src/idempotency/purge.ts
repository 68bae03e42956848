import type { Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { purgeExpiredIdempotencyKeys } from './store.ts';

/**
 * Periodically deletes idempotency records past their 24 h retention. Every replica runs it; the
 * deletes are idempotent.
 */
export function startIdempotencyPurge(db: Kysely<GatewayDatabase>, logger: Logger, intervalMs: number) {
  const run = async () => {
    try {
      const purged = await purgeExpiredIdempotencyKeys(db);
      if (purged > 0) logger.info('expired idempotency records purged', { purged });
    } catch (error) {
      logger.warn('purge failed; will retry', { error: String(error) });
    }
  };
  const timer = setInterval(() => void run(), intervalMs);
  return {
    stop: async () => clearInterval(timer),
  };
}

import type { Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import type { RateLimiter } from '../rate-limit/limiter.ts';
import { purgeExpiredIdempotencyKeys } from './store.ts';

/**
 * Periodically deletes idempotency records past their 24 h retention and rate-limit buckets
 * that have refilled. Every replica runs it; the deletes are idempotent.
 */
export function startPurgeJob(db: Kysely<GatewayDatabase>, limiter: RateLimiter, logger: Logger, intervalMs: number) {
  const run = async () => {
    try {
      const purged = await purgeExpiredIdempotencyKeys(db);
      await limiter.purgeIdle();
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

import type { Logger } from '@crm/http';
import type { RateLimiter } from './limiter.ts';

/**
 * Periodically deletes buckets that have refilled completely: a missing row is a full budget, so
 * this only keeps the table small. Every replica runs it; the deletes are idempotent.
 */
export function startIdleBucketPurge(limiter: RateLimiter, logger: Logger, intervalMs: number) {
  const run = async () => {
    try {
      await limiter.purgeIdle();
    } catch (error) {
      logger.warn('purge of idle rate-limit buckets failed; will retry', { error: String(error) });
    }
  };
  const timer = setInterval(() => void run(), intervalMs);
  return { stop: async () => clearInterval(timer) };
}

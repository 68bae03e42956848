import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';

const PERIOD_MS = 60_000;
/** Float slack so that e.g. 7 × (60000 / 7) still counts as within the period (as in gcra_consume). */
const EPSILON_MS = 0.001;

export type PolicyName = 'read' | 'write' | 'ip';

export interface RateVerdict {
  policy: PolicyName;
  limit: number;
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Seconds until the bucket is completely refilled. */
  resetSeconds: number;
  /** Seconds to wait before a refused request can pass (0 when allowed). */
  retryAfterSeconds: number;
}

function verdictOf(policy: PolicyName, limit: number, tatMs: number, nowMs: number, allowed: boolean): RateVerdict {
  const interval = PERIOD_MS / limit;
  const ahead = Math.max(0, tatMs - nowMs);
  return {
    policy,
    limit,
    allowed,
    remaining: Math.max(0, Math.floor((PERIOD_MS - ahead) / interval + EPSILON_MS)),
    resetSeconds: Math.ceil(ahead / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((ahead + interval - PERIOD_MS) / 1000)),
  };
}

interface Waiter {
  resolve: (verdict: RateVerdict) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  policy: PolicyName;
  limit: number;
  waiters: Waiter[];
}

/**
 * GCRA over a PostgreSQL row per bucket (`gcra_consume`, migration 0004). The bucket's
 * "theoretical arrival time" (tat) advances by period/limit per allowed request; a request is
 * allowed while tat stays within one period of now, so a fresh bucket admits exactly `limit`
 * requests at once and then one per interval — no fixed-window boundary doubling. The row
 * lock serialises replicas and the database clock is the only clock, so the budget is exact
 * across replicas. Within one replica, requests for a bucket that arrive while its statement
 * is in flight wait and then go together as one statement for k requests: under load one
 * round trip serves many requests instead of each queueing on the same row lock.
 */
export function createRateLimiter(db: Kysely<GatewayDatabase>) {
  const pending = new Map<string, Batch>();
  const inFlight = new Set<string>();

  async function send(bucket: string): Promise<void> {
    const batch = pending.get(bucket);
    if (!batch) return;
    pending.delete(bucket);
    inFlight.add(bucket);
    const { policy, limit, waiters } = batch;
    const interval = PERIOD_MS / limit;
    try {
      const { rows } = await sql<{ tat_ms: number; granted: number; now_ms: number }>`
        select tat_ms, granted, now_ms from gcra_consume(${bucket}, ${interval}::float8, ${PERIOD_MS}::float8, ${waiters.length}::integer)`.execute(
        db,
      );
      const row = rows[0] as { tat_ms: number; granted: number; now_ms: number };
      const tat = Number(row.tat_ms);
      const base = tat - row.granted * interval;
      waiters.forEach((waiter, i) => {
        const allowed = i < row.granted;
        waiter.resolve(verdictOf(policy, limit, allowed ? base + (i + 1) * interval : tat, Number(row.now_ms), allowed));
      });
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    } finally {
      inFlight.delete(bucket);
      if (pending.has(bucket)) void send(bucket);
    }
  }

  function consume(bucket: string, policy: PolicyName, limit: number): Promise<RateVerdict> {
    return new Promise((resolve, reject) => {
      let batch = pending.get(bucket);
      if (!batch) {
        batch = { policy, limit, waiters: [] };
        pending.set(bucket, batch);
      }
      batch.waiters.push({ resolve, reject });
      if (!inFlight.has(bucket)) void send(bucket);
    });
  }

  /** The bucket's state without spending from it (for requests that are not counted, like OPTIONS). */
  async function peek(bucket: string, policy: PolicyName, limit: number): Promise<RateVerdict> {
    const { rows } = await sql<{ tat_ms: number | null; now_ms: number }>`
      select (select tat_ms from rate_limits where bucket = ${bucket}) as tat_ms, extract(epoch from now()) * 1000 as now_ms`.execute(db);
    const row = rows[0] as { tat_ms: number | null; now_ms: number };
    return verdictOf(policy, limit, Number(row.tat_ms ?? 0), Number(row.now_ms), true);
  }

  /** Deletes buckets that are completely refilled (their row carries no information any more). */
  async function purgeIdle(): Promise<void> {
    await sql`delete from rate_limits where tat_ms < extract(epoch from now()) * 1000`.execute(db);
  }

  return { consume, peek, purgeIdle };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** The IETF draft headers every /v1 response carries: `RateLimit-Policy` and `RateLimit`. */
export function rateLimitHeaders(verdict: RateVerdict): Record<string, string> {
  return {
    'ratelimit-policy': `"${verdict.policy}";q=${verdict.limit};w=60`,
    ratelimit: `"${verdict.policy}";r=${verdict.remaining};t=${verdict.resetSeconds}`,
  };
}

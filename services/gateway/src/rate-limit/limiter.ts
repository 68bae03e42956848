import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';

const PERIOD_MS = 60_000;
/** Float slack so that e.g. 7 × (60000 / 7) still counts as within the period. */
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

/**
 * GCRA over a PostgreSQL row per bucket, one atomic statement per request (the row lock
 * serialises concurrent replicas). The bucket's "theoretical arrival time" (tat) advances by
 * period/limit per allowed request; a request is allowed while tat stays within one period
 * of now, so a fresh bucket admits exactly `limit` requests at once and then one per
 * interval — no fixed-window boundary doubling. The database clock is the only clock, so
 * replicas with skewed clocks still share one budget.
 */
export function createRateLimiter(db: Kysely<GatewayDatabase>) {
  async function consume(bucket: string, policy: PolicyName, limit: number): Promise<RateVerdict> {
    const interval = PERIOD_MS / limit;
    const { rows } = await sql<{ tat_ms: number; allowed: boolean; now_ms: number }>`
      insert into rate_limits as r (bucket, tat_ms, allowed)
      values (${bucket}, extract(epoch from now()) * 1000 + ${interval}::float8, true)
      on conflict (bucket) do update set
        allowed = greatest(r.tat_ms, excluded.tat_ms - ${interval}::float8) + ${interval}::float8
                  <= excluded.tat_ms - ${interval}::float8 + ${PERIOD_MS + EPSILON_MS}::float8,
        tat_ms = case
          when greatest(r.tat_ms, excluded.tat_ms - ${interval}::float8) + ${interval}::float8
               <= excluded.tat_ms - ${interval}::float8 + ${PERIOD_MS + EPSILON_MS}::float8
          then greatest(r.tat_ms, excluded.tat_ms - ${interval}::float8) + ${interval}::float8
          else r.tat_ms end
      returning tat_ms, allowed, extract(epoch from now()) * 1000 as now_ms`.execute(db);
    const row = rows[0] as { tat_ms: number; allowed: boolean; now_ms: number };
    return verdictOf(policy, limit, Number(row.tat_ms), Number(row.now_ms), row.allowed);
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

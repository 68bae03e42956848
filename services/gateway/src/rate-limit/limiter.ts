import { preparedStatement } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { emissionInterval, PERIOD_MS, SLACK_MS } from './gcra.ts';
import type { Budget } from './policy.ts';
import { type RateVerdict, verdictOf } from './verdict.ts';

/**
 * GCRA for `k` requests of one bucket (gcra.ts `grant`) in ONE statement on the bucket's row: a
 * fresh bucket is inserted already charged; an existing one is updated under its row lock (the
 * database clock `now()` is the only clock). It returns the arrival time the grant started from
 * (`base_ms`, never earlier than now), how many were granted and the database clock; `returning`
 * sees only the updated row, hence the row's `base_ms`/`granted` columns (migration 0008, which
 * also makes `gcra_consume` the same statement for replicas of the previous release).
 * Parameters: bucket, k, emission interval, period, slack (all in milliseconds). Each expression
 * is the same float arithmetic as `grant`, in the same order, so both agree bit for bit.
 */
export const CONSUME_SQL = `insert into rate_limits as r (bucket, tat_ms, allowed, base_ms, granted)
select $1::text, f.now_ms + f.granted * $3::float8, f.granted > 0, f.now_ms, f.granted
  from (select n.now_ms, least($2::integer, greatest(0, floor((n.now_ms + $4::float8 + $5::float8 - n.now_ms) / $3::float8)))::integer as granted
          from (select (extract(epoch from now()) * 1000)::float8 as now_ms) n) f
on conflict (bucket) do update set
  base_ms = greatest(r.tat_ms, excluded.base_ms),
  granted = least($2::integer, greatest(0, floor((excluded.base_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, excluded.base_ms)) / $3::float8)))::integer,
  tat_ms = greatest(r.tat_ms, excluded.base_ms)
    + least($2::integer, greatest(0, floor((excluded.base_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, excluded.base_ms)) / $3::float8)))::integer * $3::float8,
  allowed = least($2::integer, greatest(0, floor((excluded.base_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, excluded.base_ms)) / $3::float8))) > 0
returning r.base_ms, r.granted, (extract(epoch from now()) * 1000)::float8 as now_ms`;

// One constant text, sent as a named prepared statement with its values: no query building per
// call, and PostgreSQL parses and plans it once per connection.
const CONSUME = preparedStatement<{ base_ms: number; granted: number; now_ms: number }>(CONSUME_SQL);

interface Waiter {
  resolve: (verdict: RateVerdict) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  budget: Budget;
  waiters: Waiter[];
}

/**
 * The buckets' store: GCRA (`gcra.ts`) over a PostgreSQL row per bucket, applied by
 * `CONSUME_SQL` with the constants of `gcra.ts` as arguments. The row lock
 * serialises replicas and the database clock is the only clock, so the budget is exact across
 * replicas. Within one replica, requests for a bucket that arrive while its statement is in
 * flight wait and then go together as one statement for k requests: under load one round trip
 * serves many requests instead of each queueing on the same row lock.
 */
export function createRateLimiter(db: Kysely<GatewayDatabase>) {
  const pending = new Map<string, Batch>();
  const inFlight = new Set<string>();

  async function send(bucket: string): Promise<void> {
    const batch = pending.get(bucket);
    if (!batch) return;
    pending.delete(bucket);
    inFlight.add(bucket);
    const { budget, waiters } = batch;
    const interval = emissionInterval(budget.limit);
    try {
      const { rows } = await db.executeQuery(CONSUME.compile([bucket, waiters.length, interval, PERIOD_MS, SLACK_MS]));
      const row = rows[0] as { base_ms: number; granted: number; now_ms: number };
      const base = Number(row.base_ms);
      const now = Number(row.now_ms);
      // In arrival order: the first `granted` pass, each one interval further; the rest see the bucket full.
      waiters.forEach((waiter, i) => {
        const allowed = i < row.granted;
        waiter.resolve(verdictOf(budget, base + (allowed ? i + 1 : row.granted) * interval, now, allowed));
      });
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    } finally {
      inFlight.delete(bucket);
      if (pending.has(bucket)) void send(bucket);
    }
  }

  function consume(budget: Budget): Promise<RateVerdict> {
    return new Promise((resolve, reject) => {
      let batch = pending.get(budget.bucket);
      if (!batch) {
        batch = { budget, waiters: [] };
        pending.set(budget.bucket, batch);
      }
      batch.waiters.push({ resolve, reject });
      if (!inFlight.has(budget.bucket)) void send(budget.bucket);
    });
  }

  /** The bucket's state without spending from it (for requests that are not counted, like OPTIONS). */
  async function peek(budget: Budget): Promise<RateVerdict> {
    const { rows } = await sql<{ tat_ms: number | null; now_ms: number }>`
      select (select tat_ms from rate_limits where bucket = ${budget.bucket}) as tat_ms, extract(epoch from now()) * 1000 as now_ms`.execute(
      db,
    );
    const row = rows[0] as { tat_ms: number | null; now_ms: number };
    return verdictOf(budget, Number(row.tat_ms ?? 0), Number(row.now_ms), true);
  }

  /** Spends from the budget (or only looks, for a budget a request does not spend) and says what is left. */
  function take(budget: Budget): Promise<RateVerdict> {
    return budget.spends ? consume(budget) : peek(budget);
  }

  /** Deletes buckets that are completely refilled (their row carries no information any more). */
  async function purgeIdle(): Promise<number> {
    const result = await sql`delete from rate_limits where tat_ms < extract(epoch from now()) * 1000`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }

  return { take, purgeIdle };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

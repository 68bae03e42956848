// The rate limiter's store on a real PostgreSQL: the limiter's single statement (`CONSUME_SQL`)
// and `gcra_consume` (migration 0008: the same statement, for replicas of the previous release)
// apply the rule of rate-limit/gcra.ts exactly, with the constants the code passes in; the limiter batches
// concurrent requests of a bucket without changing who passes, and arms no timer for an idle one;
// looking does not spend; the purge drops refilled buckets only. The client-visible behaviour is
// in gateway-rate-limit.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createDb, migrate, statementCount } from '@crm/db';
import { dropRunResources, prepareRun, type RunResources } from '@crm/testing';
import fc from 'fast-check';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../services/gateway/src/db/database.ts';
import { PREVIOUS_CONSUME_SQL } from '../services/gateway/src/db/migrations/0010_gcra_whole_intervals.ts';
import { migrations } from '../services/gateway/src/db/migrations/index.ts';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../services/gateway/src/idempotency/store.ts';
import { bucketOf, emissionInterval, grant, PERIOD_MS, SLACK_MS, tatOf } from '../services/gateway/src/rate-limit/gcra.ts';
import { CONSUME_SQL, createRateLimiter } from '../services/gateway/src/rate-limit/limiter.ts';
import { addressBudget, tenantBudget } from '../services/gateway/src/rate-limit/policy.ts';
import type { RateVerdict } from '../services/gateway/src/rate-limit/verdict.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let run: RunResources;
let db: Kysely<GatewayDatabase>;
let pool: { end: () => Promise<void> };

beforeAll(async () => {
  run = await prepareRun('test');
  ({ db, pool } = createDb<GatewayDatabase>({ url: run.databaseUrl, schema: 'gateway', max: 4 }));
  await migrate(db, 'gateway', migrations);
}, 120_000);

afterAll(async () => {
  await db.destroy();
  await pool.end().catch(() => {});
  await dropRunResources(run);
});

/** A rollback that carries the values read inside the transaction out of it. */
class Rollback extends Error {
  constructor(readonly values: unknown) {
    super('rollback');
  }
}

/** What a grant returns, in the terms of each caller: where the bucket's count started, how many passed, the clock. */
interface Consumed {
  /** The bucket's arrival time before the grant. */
  base_ms: number;
  granted: number;
  now_ms: number;
}

/** The limiter's statement, as it sends it (parameters: bucket, k, interval, period, slack). */
async function consumeStatement(trx: Kysely<GatewayDatabase>, bucket: string, k: number, limit: number): Promise<Consumed> {
  const { rows } = await trx.executeQuery<{ anchor_ms: number; intervals: number; granted: number; now_ms: number }>(
    CompiledQuery.raw(CONSUME_SQL, [bucket, k, emissionInterval(limit), PERIOD_MS, SLACK_MS]),
  );
  const row = rows[0] as { anchor_ms: number; intervals: number; granted: number; now_ms: number };
  return {
    base_ms: tatOf({ anchorMs: row.anchor_ms, intervals: row.intervals - row.granted }, limit),
    granted: row.granted,
    now_ms: row.now_ms,
  };
}

/** The function replicas of release 1.1.0 call (same arguments). */
async function consumeFunction(trx: Kysely<GatewayDatabase>, bucket: string, k: number, limit: number): Promise<Consumed> {
  const { rows } = await sql<Consumed>`
    select * from gcra_consume(${bucket}, ${k}::integer, ${emissionInterval(limit)}::float8, ${PERIOD_MS}::float8, ${SLACK_MS}::float8)`.execute(
    trx,
  );
  return rows[0] as Consumed;
}

/** The grant of releases 1.2.0–1.2.4 (it reads and moves `tat_ms` only), as their replicas send it during a rolling update. */
async function consumePrevious(trx: Kysely<GatewayDatabase>, bucket: string, k: number, limit: number): Promise<Consumed> {
  const { rows } = await trx.executeQuery<Consumed>(
    CompiledQuery.raw(PREVIOUS_CONSUME_SQL, [bucket, k, emissionInterval(limit), PERIOD_MS, SLACK_MS]),
  );
  return rows[0] as Consumed;
}

/** A bucket row before a grant: none, one arrival time (a row of the previous release), or anchored, its tat matching or moved since. */
type RowState = { kind: 'none' } | { kind: 'tat'; offset: number } | { kind: 'anchored'; offset: number; intervals: number; moved: number };

const rowStates: fc.Arbitrary<RowState> = fc.oneof(
  fc.constant<RowState>({ kind: 'none' }),
  fc.double({ min: -200_000, max: 120_000, noNaN: true }).map((offset): RowState => ({ kind: 'tat', offset })),
  fc
    .record({
      offset: fc.double({ min: -200_000, max: 10_000, noNaN: true }),
      intervals: fc.integer({ min: 0, max: 100_000 }),
      moved: fc.oneof(fc.constant(0), fc.double({ min: -5_000, max: 5_000, noNaN: true })),
    })
    .map((r): RowState => ({ kind: 'anchored', ...r })),
);

/** Writes the row for `state` at the transaction's now(), with its tat computed by PostgreSQL as gcra.ts `tatOf` does. */
async function writeRow(trx: Kysely<GatewayDatabase>, state: RowState, limit: number): Promise<void> {
  const now = sql`(extract(epoch from now()) * 1000)::float8`;
  if (state.kind === 'tat') {
    await sql`insert into rate_limits (bucket, tat_ms, allowed) values ('p', ${now} + ${state.offset}::float8, true)`.execute(trx);
  } else if (state.kind === 'anchored') {
    await sql`insert into rate_limits (bucket, tat_ms, allowed, anchor_ms, intervals)
      select 'p', a.anchor + ${state.intervals}::bigint::float8 * ${emissionInterval(limit)}::float8 + ${state.moved}::float8, true, a.anchor, ${state.intervals}::bigint
        from (select ${now} + ${state.offset}::float8 as anchor) a`.execute(trx);
  }
}

describe.each([
  ['the limiter statement (CONSUME_SQL)', consumeStatement],
  ['gcra_consume (1.1.0 replicas)', consumeFunction],
])('%s applies the rule of gcra.ts', (_name, consume) => {
  test('for any bucket state, limit and batch size: the same grants and the same arrival time, bit for bit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 500 }), rowStates, async (limit, k, state) => {
        type Row = { tat_ms: number; anchor_ms: number | null; intervals: number | null };
        const outcome = await db
          .transaction()
          .execute(async (trx) => {
            // One transaction: now() is the same instant for the insert and the grant.
            await writeRow(trx, state, limit);
            const read = () => sql<Row>`select tat_ms, anchor_ms, intervals from rate_limits where bucket = 'p'`.execute(trx);
            const before = (await read()).rows[0];
            const result = await consume(trx, 'p', k, limit);
            throw new Rollback({ before, result, stored: (await read()).rows[0] });
          })
          .catch((error) => {
            if (error instanceof Rollback) return error.values as { before: Row | undefined; result: Consumed; stored: Row };
            throw error;
          });
        const now = outcome.result.now_ms;
        const { before } = outcome;
        const from = before
          ? bucketOf({ tatMs: before.tat_ms, anchorMs: before.anchor_ms, intervals: before.intervals }, limit)
          : { anchorMs: 0, intervals: 0 };
        const expected = grant(from, now, k, limit);
        expect(outcome.result.granted).toBe(expected.granted);
        expect(outcome.stored).toEqual({
          tat_ms: tatOf(expected.bucket, limit),
          anchor_ms: expected.bucket.anchorMs,
          intervals: expected.bucket.intervals,
        });
        expect(outcome.result.base_ms).toBe(tatOf({ ...expected.bucket, intervals: expected.bucket.intervals - expected.granted }, limit));
      }),
      { numRuns: 100 },
    );
  });

  test('a bucket spent call after call: exactly the limit passes, then nothing', async () => {
    const bucket = `seq-${crypto.randomUUID()}`;
    const granted: number[] = [];
    for (const k of [3, 1, 4, 1, 5]) granted.push((await consume(db, bucket, k, 7)).granted);
    expect(granted).toEqual([3, 1, 3, 0, 0]);
  });
});

test("during a rolling update, the previous release's statement and this one spend one budget: exactly the limit passes", async () => {
  const bucket = `mix-${crypto.randomUUID()}`;
  // Limit 7: one request back every 8.6 s, far longer than these calls take.
  const calls: [typeof consumeStatement, number][] = [
    [consumeStatement, 2],
    [consumePrevious, 1],
    [consumeStatement, 1],
    [consumePrevious, 2],
    [consumeStatement, 2],
    [consumePrevious, 1],
    [consumeStatement, 1],
  ];
  const granted: number[] = [];
  for (const [consume, k] of calls) granted.push((await consume(db, bucket, k, 7)).granted);
  expect(granted).toEqual([2, 1, 1, 2, 1, 0, 0]);
  // This release's last grant (one request) counted from the tat the previous statement had just
  // moved: anchored there, one interval on; the two refusals after it left the row as it was.
  const { rows } = await sql<{ tat_ms: number; anchor_ms: number; intervals: number }>`
    select tat_ms, anchor_ms, intervals from rate_limits where bucket = ${bucket}`.execute(db);
  expect(rows[0]?.intervals).toBe(1);
  expect(rows[0]?.tat_ms).toBe(tatOf({ anchorMs: rows[0]?.anchor_ms as number, intervals: 1 }, 7));
});

test('the four-argument gcra_consume of migration 0004 is gone; the five-argument one remains', async () => {
  const { rows } = await sql<{ args: string }>`
    select pg_get_function_identity_arguments(p.oid) as args from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'gateway' and p.proname = 'gcra_consume'`.execute(db);
  expect(rows.map((r) => r.args)).toEqual([
    'p_bucket text, p_k integer, p_interval_ms double precision, p_period_ms double precision, p_slack_ms double precision',
  ]);
});

describe('the limiter', () => {
  test('concurrent requests of one bucket are batched, and exactly the limit passes, remaining counting down', async () => {
    const limiter = createRateLimiter(db);
    const budget = tenantBudget('POST', { tenantId: crypto.randomUUID(), readPerMinute: 100, writePerMinute: 30 });
    const before = statementCount();
    const verdicts = await Promise.all(Array.from({ length: 100 }, () => limiter.take(budget)));
    // Far fewer statements than requests: those that arrived while one was in flight went together.
    expect(statementCount() - before).toBeLessThan(50);
    const allowed = verdicts.filter((v) => v.allowed);
    expect(allowed.length).toBe(30);
    expect(allowed.map((v) => v.remaining)).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i));
    for (const refused of verdicts.filter((v) => !v.allowed)) {
      expect(refused).toMatchObject({ policy: 'write', limit: 30, remaining: 0, resetSeconds: 60 });
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(2);
    }
  });

  test('a request for an idle bucket goes at once; those arriving within coalesceMs of the last statement go together in the next', async () => {
    // coalesceMs far longer than the test's timeout: a first request that waited for it would fail the test.
    const idle = createRateLimiter(db, { coalesceMs: 60_000 });
    const fresh = tenantBudget('GET', { tenantId: crypto.randomUUID(), readPerMinute: 10, writePerMinute: 30 });
    expect(await idle.take(fresh)).toMatchObject({ allowed: true, remaining: 9 });

    const limiter = createRateLimiter(db, { coalesceMs: 1000 });
    const budget = tenantBudget('GET', { tenantId: crypto.randomUUID(), readPerMinute: 10, writePerMinute: 30 });
    const before = statementCount();
    const first = await limiter.take(budget);
    const followers: Promise<RateVerdict>[] = [];
    for (let i = 0; i < 12; i++) {
      followers.push(limiter.take(budget));
      await sleep(1);
    }
    const verdicts = [first, ...(await Promise.all(followers))];
    // Two statements for 13 requests, and exactly the limit passed, in arrival order.
    expect(statementCount() - before).toBe(2);
    expect(verdicts.map((v) => v.allowed)).toEqual([...Array(10).fill(true), false, false, false]);
    expect(verdicts.slice(0, 10).map((v) => v.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  });

  test('a bucket with nothing waiting arms no timer: at low rates the gateway wakes for its requests only', async () => {
    // The limiter's timers wait at most coalesceMs; an odd value tells them from the pool's own (30 s).
    const coalesceMs = 1_777;
    const limiterTimers: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = ((handler: TimerHandler, delay?: number, ...args: unknown[]) => {
      if (delay !== undefined && delay > coalesceMs - 1000 && delay <= coalesceMs) limiterTimers.push(delay);
      return realSetTimeout(handler, delay, ...args);
    }) as typeof setTimeout;
    try {
      const limiter = createRateLimiter(db, { coalesceMs });
      const budget = tenantBudget('GET', { tenantId: crypto.randomUUID(), readPerMinute: 10, writePerMinute: 30 });
      expect(await limiter.take(budget)).toMatchObject({ allowed: true, remaining: 9 });
      await sleep(20);
      expect(limiterTimers).toEqual([]);
      // A request within coalesceMs of that statement still waits for the window: the one timer there is.
      const before = statementCount();
      const second = limiter.take(budget);
      await sleep(20);
      expect(limiterTimers.length).toBe(1);
      expect(statementCount()).toBe(before);
      expect(await second).toMatchObject({ allowed: true, remaining: 8 });
      expect(statementCount()).toBe(before + 1);
      // Answered, with nothing waiting: no timer again.
      await sleep(20);
      expect(limiterTimers.length).toBe(1);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
  });

  test('beyond maxBuckets a new bucket evicts the idle ones: their next request goes at once', async () => {
    // coalesceMs far longer than the test's timeout: a request that waited for it would fail the test.
    const limiter = createRateLimiter(db, { coalesceMs: 60_000, maxBuckets: 1 });
    const budget = () => tenantBudget('GET', { tenantId: crypto.randomUUID(), readPerMinute: 10, writePerMinute: 30 });
    const a = budget();
    const b = budget();
    expect(await limiter.take(a)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await limiter.take(b)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await limiter.take(a)).toMatchObject({ allowed: true, remaining: 8 });
  });

  test('a budget that is not spent (OPTIONS) is only looked at', async () => {
    const limiter = createRateLimiter(db);
    const tenant = { tenantId: crypto.randomUUID(), readPerMinute: 3, writePerMinute: 3 };
    for (let i = 0; i < 5; i++) expect(await limiter.take(tenantBudget('OPTIONS', tenant))).toMatchObject({ allowed: true, remaining: 3 });
    expect(await limiter.take(tenantBudget('GET', tenant))).toMatchObject({ allowed: true, remaining: 2 });
    expect(await limiter.take(tenantBudget('OPTIONS', tenant))).toMatchObject({ allowed: true, remaining: 2, policy: 'read' });
  });

  test('the purge drops refilled buckets only', async () => {
    const limiter = createRateLimiter(db);
    const busy = addressBudget(`192.0.2.${Math.floor(Math.random() * 250)}`, 60);
    await limiter.take(busy);
    await sql`insert into rate_limits (bucket, tat_ms, allowed) values ('idle-bucket', extract(epoch from now()) * 1000 - 1, true)`.execute(
      db,
    );
    expect(await limiter.purgeIdle()).toBeGreaterThanOrEqual(1);
    const left = await sql<{ bucket: string }>`select bucket from rate_limits where bucket in (${busy.bucket}, 'idle-bucket')`.execute(db);
    expect(left.rows).toEqual([{ bucket: busy.bucket }]);
  });
});

describe('what the gateway writes per request commits without a WAL flush of its own', () => {
  /**
   * WAL syncs (fsyncs of the log) since the server started, with `one`'s pending statistics
   * flushed first (PostgreSQL 15 publishes a backend's counts at most once a second otherwise).
   */
  async function walSyncs(one: Kysely<GatewayDatabase>): Promise<number> {
    await sql`select pg_stat_force_next_flush()`.execute(one);
    await sql`select 1`.execute(one);
    await sleep(100);
    return Number((await sql<{ n: string }>`select wal_sync::text as n from pg_stat_wal`.execute(db)).rows[0]?.n);
  }

  test('100 grants, claims, records and releases: far fewer WAL syncs than commits; the setting stays per statement', async () => {
    // One connection, so every statement's statistics are the ones flushed above.
    const single = createDb<GatewayDatabase>({ url: run.databaseUrl, schema: 'gateway', max: 1 });
    try {
      const one = single.db;
      const limiter = createRateLimiter(one, { coalesceMs: 0 });
      const budget = tenantBudget('POST', { tenantId: crypto.randomUUID(), readPerMinute: 1000, writePerMinute: 1000 });
      const tenantId = crypto.randomUUID();
      const before = await walSyncs(one);
      for (let i = 0; i < 100; i++) {
        expect((await limiter.take(budget)).allowed).toBe(true);
        const claim = await claimIdempotencyKey(one, tenantId, `k-${i}`, 'fingerprint', 30_000);
        if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
        await completeIdempotencyKey(one, tenantId, `k-${i}`, claim.token, { status: 201, headers: {}, body: new Uint8Array([1]) });
        const again = await claimIdempotencyKey(one, tenantId, `r-${i}`, 'fingerprint', 30_000);
        if (again.kind !== 'claimed') throw new Error(`not claimed: ${again.kind}`);
        await releaseIdempotencyKey(one, tenantId, `r-${i}`, again.token);
      }
      // 500 commits (the grants' table is unlogged: migration 0003); flushing the claims and records
      // would be 300 syncs or more (the WAL writer adds a few per 200 ms).
      expect((await walSyncs(one)) - before).toBeLessThan(50);
      // Off for those statements' own transactions only: a later transaction on the connection flushes again.
      const { rows } = await sql<{ s: string }>`select current_setting('synchronous_commit') as s`.execute(one);
      expect(rows[0]?.s).toBe('on');
    } finally {
      await single.db.destroy();
    }
  });
});

describe("the limiter's estimate of a bucket's room (likelyAllows)", () => {
  test('yes with two or more left after the requests it has sent, no below that or for a bucket it has not seen', async () => {
    const limiter = createRateLimiter(db, { coalesceMs: 0 });
    const budget = tenantBudget('GET', { tenantId: crypto.randomUUID(), readPerMinute: 4, writePerMinute: 4 });
    expect(limiter.likelyAllows(budget)).toBe(false);
    expect((await limiter.take(budget)).remaining).toBe(3);
    expect(limiter.likelyAllows(budget)).toBe(true);
    const pending = limiter.take(budget); // sent: 2 left by the estimate until it answers
    expect(limiter.likelyAllows(budget)).toBe(true);
    const third = limiter.take(budget); // 1 left by the estimate
    expect(limiter.likelyAllows(budget)).toBe(false);
    expect((await pending).remaining).toBe(2);
    expect((await third).remaining).toBe(1);
    expect(limiter.likelyAllows(budget)).toBe(false);
  });
});

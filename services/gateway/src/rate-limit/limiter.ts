import { type PreparedStatement, preparedStatement } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { admissible, type Bucket, bucketOf, emissionInterval, PERIOD_MS, SLACK_MS } from './gcra.ts';
import type { Budget } from './policy.ts';
import { type RateVerdict, verdictOf } from './verdict.ts';

// The grant's expressions on the bucket's row `r`, at now = `excluded.anchor_ms` (what a fresh row
// would be anchored at). Parameters: $2 k, $3 emission interval, $4 period, $5 slack (ms).
/** The row's anchor and intervals give its tat (gcra.ts `bucketOf`) and it has not refilled (`current`). */
const ANCHORED = `(r.tat_ms > excluded.anchor_ms and r.tat_ms = r.anchor_ms + r.intervals * $3::float8)`;
/** The anchor the grant counts from: the row's, else its tat or now, whichever is later. */
const ANCHOR = `case when ${ANCHORED} then r.anchor_ms else greatest(r.tat_ms, excluded.anchor_ms) end`;
/** The whole intervals after that anchor. */
const INTERVALS = `case when ${ANCHORED} then r.intervals else 0 end`;
/** How many of the k requests pass (gcra.ts `grant`: at most what the bucket admits). */
const GRANTED = `least($2::float8, greatest(0, floor((excluded.anchor_ms + $4::float8 + $5::float8 - ${ANCHOR}) / $3::float8 - ${INTERVALS})))`;

/**
 * GCRA for `k` requests of one bucket (gcra.ts `grant`) in ONE statement on the bucket's row: a
 * fresh bucket is inserted already charged; an existing one is updated under its row lock (the
 * database clock `now()` is the only clock). The row keeps the bucket as gcra.ts does, an anchor
 * and a whole number of intervals (migration 0010), and its `tat_ms`, the float sum of both, for
 * what reads a bucket as one instant (the purge, a look, the statement of the previous release).
 * It returns the anchor and intervals after the grant, how many were granted and the database
 * clock. Parameters: bucket, k, emission interval, period, slack (all in milliseconds). Each
 * expression is the same float arithmetic as gcra.ts, in the same order, so both agree bit for
 * bit. The expressions are written out in each column they set: PostgreSQL prepares a statement's
 * expressions on every execution, and this costs less than a sub-select that names them once
 * (loadtest/README.md, issue 18, fifteenth session).
 */
export const CONSUME_SQL = `insert into rate_limits as r (bucket, tat_ms, allowed, anchor_ms, intervals, granted)
select $1::text, f.now_ms + f.granted * $3::float8, f.granted > 0, f.now_ms, f.granted, f.granted
  from (select n.now_ms, least($2::float8, greatest(0, floor((n.now_ms + $4::float8 + $5::float8 - n.now_ms) / $3::float8))) as granted
          from (select (extract(epoch from now()) * 1000)::float8 as now_ms) n) f
on conflict (bucket) do update set
  anchor_ms = ${ANCHOR},
  intervals = ${INTERVALS} + ${GRANTED},
  granted = ${GRANTED},
  tat_ms = ${ANCHOR} + (${INTERVALS} + ${GRANTED}) * $3::float8
returning r.anchor_ms, r.intervals, r.granted, (extract(epoch from now()) * 1000)::float8 as now_ms`;

// One constant text, sent as a named prepared statement with its values: no query building per
// call, and PostgreSQL parses and plans it once per connection.
/** What CONSUME_SQL returns: the bucket after the grant (anchor, intervals), how many passed, the database clock. */
export interface Consumed {
  anchor_ms: number;
  intervals: number;
  granted: number;
  now_ms: number;
}

const CONSUME = preparedStatement<Consumed>(CONSUME_SQL);

interface Waiter {
  resolve: (verdict: RateVerdict) => void;
  reject: (error: unknown) => void;
}

/** Requests of one bucket waiting for its next statement, with the budget of the first of them. */
interface Batch {
  budget: Budget;
  waiters: Waiter[];
}

/**
 * A bucket this replica has sent a statement for. An idle one (no batch, nothing in flight, no
 * timer) stays in the map for its `lastSentAt` until `evictIdle` drops it: forgetting it on a
 * timer would wake the event loop once more for nearly every read at low rates.
 */
interface BucketState {
  /** Requests waiting for the next statement. */
  batch: Batch | undefined;
  inFlight: boolean;
  /** When the last statement was sent (performance.now()). */
  lastSentAt: number;
  /** Armed for `lastSentAt + coalesceMs` while a batch waits: then it is sent. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface RateLimiterOptions {
  /**
   * A bucket's statements start at least this many milliseconds apart: its requests that arrive
   * meanwhile (or while a statement is in flight) wait and go together as the next statement. A
   * request for a bucket that had no statement for that long goes at once. 0: requests wait only
   * for a statement in flight.
   */
  coalesceMs?: number;
  /**
   * A batch that holds this many requests goes as soon as no statement of its bucket is in flight,
   * without waiting for the rest of `coalesceMs` (0: off). The window is there to save
   * statements; a batch this large already shares one statement among as many requests as the
   * window gathers under load, so waiting longer would only add latency. A closed loop of this many
   * concurrent requests no longer waits for the window on every round trip.
   */
  fullBatch?: number;
  /**
   * Buckets whose batching state is kept at most (MAX_BUCKETS, 10,000, when not given): beyond it a new bucket
   * first evicts every idle one. An evicted bucket's next request goes at once, as one whose last
   * statement is older than `coalesceMs`; what a bucket grants is in the database either way.
   */
  maxBuckets?: number;
}

/**
 * `coalesceMs` when not given (the gateway's `RATE_LIMIT_COALESCE_MS`). Measured under the bench's
 * gateway read (one tenant, 16 connections): 0 → 0.35 statements per request, 2 → 0.15, 4 → 0.09
 * (loadtest/README.md).
 */
export const COALESCE_MS_DEFAULT = 2;

/**
 * `fullBatch` when not given (the gateway's `RATE_LIMIT_FULL_BATCH`; what it gains and costs at 16
 * and 64 connections and open loop, and why not 8: the gateway README, "A full batch goes at once").
 */
export const FULL_BATCH_DEFAULT = 16;

/**
 * How long this replica trusts what its last statement told it about a bucket (`likelyAllows`):
 * other replicas spend from the same bucket meanwhile, so the estimate only ever errs by what
 * they spent in that time.
 */
const HEADROOM_FRESH_MS = 1000;

/** Requests a bucket must have left, by this replica's estimate, before `likelyAllows` says yes. */
const HEADROOM_MARGIN = 2;

/**
 * Buckets a replica keeps state for at most, by default: their batching state (`maxBuckets`, idle
 * ones evicted) and their headroom estimate (the busiest ones; the map is cleared when it is full).
 */
const MAX_BUCKETS = 10_000;

/** What the last statement for a bucket said was left, minus the requests this replica sent since. */
interface Headroom {
  left: number;
  at: number;
}

/**
 * The buckets' store: GCRA (`gcra.ts`) over a PostgreSQL row per bucket, applied by
 * `CONSUME_SQL` with the constants of `gcra.ts` as arguments. The row lock serialises replicas
 * and the database clock is the only clock, so the budget is exact across replicas. Within one
 * replica, requests for a bucket go together as one statement for k requests when they arrive
 * while its statement is in flight or less than `coalesceMs` after the last one started: under
 * load one round trip serves many requests instead of each queueing on the same row lock. The
 * grant stays exact: k requests together get what k statements at that instant would, in arrival
 * order. The cost is latency: a request may wait up to `coalesceMs` (plus a statement in flight)
 * when its bucket had a statement less than `coalesceMs` ago; one whose bucket had none goes at
 * once (a client sending one request at a time, each slower than `coalesceMs`, never waits), and
 * so does a batch of `fullBatch` requests once no statement of its bucket is in flight.
 */
export function createRateLimiter(db: Kysely<GatewayDatabase>, options: RateLimiterOptions = {}) {
  const coalesceMs = options.coalesceMs ?? COALESCE_MS_DEFAULT;
  const fullBatch = options.fullBatch ?? FULL_BATCH_DEFAULT;
  const maxBuckets = options.maxBuckets ?? MAX_BUCKETS;
  const buckets = new Map<string, BucketState>();
  const headroom = new Map<string, Headroom>();

  /** Remembers what a statement left in the bucket (at the database's `now`), less `queued` requests sent since. */
  function noteHeadroom(budget: Budget, left: Bucket, nowMs: number, queued = 0): void {
    if (headroom.size >= MAX_BUCKETS) headroom.clear();
    headroom.set(budget.bucket, { left: admissible(left, nowMs, budget.limit) - queued, at: performance.now() });
  }

  /**
   * Sends the waiting batch if the bucket may have a statement now (or the batch is full), else
   * arms its timer; an idle bucket needs neither.
   */
  function schedule(bucket: string, state: BucketState): void {
    if (state.inFlight || !state.batch) return;
    const full = fullBatch > 0 && state.batch.waiters.length >= fullBatch;
    if (state.timer !== undefined) {
      if (!full) return;
      clearTimeout(state.timer);
      state.timer = undefined;
    }
    const wait = full ? 0 : state.lastSentAt + coalesceMs - performance.now();
    if (wait > 0) {
      state.timer = setTimeout(() => {
        state.timer = undefined;
        schedule(bucket, state);
      }, wait);
    } else void send(bucket, state, state.batch);
  }

  /** Drops the idle buckets' states (a dropped bucket's next request goes at once, as after `coalesceMs`). */
  function evictIdle(): void {
    for (const [bucket, state] of buckets) if (!state.batch && !state.inFlight && state.timer === undefined) buckets.delete(bucket);
  }

  async function send(bucket: string, state: BucketState, batch: Batch): Promise<void> {
    state.batch = undefined;
    state.inFlight = true;
    state.lastSentAt = performance.now();
    const { budget, waiters } = batch;
    try {
      const { rows } = await db.executeQuery(
        CONSUME.compile([bucket, waiters.length, emissionInterval(budget.limit), PERIOD_MS, SLACK_MS]),
      );
      const row = rows[0] as Consumed;
      const { anchor_ms: anchorMs, intervals, granted, now_ms: now } = row;
      // In arrival order: the first `granted` pass, each one interval further; the rest see the bucket full.
      waiters.forEach((waiter, i) => {
        const allowed = i < granted;
        waiter.resolve(verdictOf(budget, { anchorMs, intervals: intervals - granted + (allowed ? i + 1 : granted) }, now, allowed));
      });
      // What is left after this statement, less the requests queued for the next one.
      noteHeadroom(budget, { anchorMs, intervals }, now, (state.batch as Batch | undefined)?.waiters.length ?? 0);
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    } finally {
      state.inFlight = false;
      schedule(bucket, state);
    }
  }

  function consume(budget: Budget): Promise<RateVerdict> {
    return new Promise((resolve, reject) => {
      let state = buckets.get(budget.bucket);
      if (!state) {
        if (buckets.size >= maxBuckets) evictIdle();
        state = { batch: undefined, inFlight: false, lastSentAt: Number.NEGATIVE_INFINITY, timer: undefined };
        buckets.set(budget.bucket, state);
      }
      state.batch ??= { budget, waiters: [] };
      state.batch.waiters.push({ resolve, reject });
      const known = headroom.get(budget.bucket);
      if (known) known.left -= 1;
      schedule(budget.bucket, state);
    });
  }

  /**
   * One request's grant and, in the same statement, what the caller does only if it passed: a
   * statement made of `with g as (CONSUME_SQL) …` (its first five parameters are the grant's,
   * `extra` follow) that returns g's anchor_ms, intervals, granted and now_ms with its own columns. The
   * request does not wait for its bucket's batch: concurrent statements of a bucket queue on its
   * row, and the grant is exactly `take`'s. The gateway claims a write's Idempotency-Key this
   * way: one round trip for both (idempotency/store.ts `CLAIM_WITH_GRANT`).
   */
  async function takeWith<R extends Consumed>(budget: Budget, statement: PreparedStatement<R>, extra: readonly unknown[]) {
    const { rows } = await statement.execute(db, [budget.bucket, 1, emissionInterval(budget.limit), PERIOD_MS, SLACK_MS, ...extra]);
    const row = rows[0] as R;
    const after: Bucket = { anchorMs: row.anchor_ms, intervals: row.intervals };
    noteHeadroom(budget, after, row.now_ms);
    return { verdict: verdictOf(budget, after, row.now_ms, row.granted > 0), row };
  }

  /** The bucket's state without spending from it (for requests that are not counted, like OPTIONS). */
  async function peek(budget: Budget): Promise<RateVerdict> {
    const { rows } = await sql<{ tat_ms: number | null; anchor_ms: number | null; intervals: number | null; now_ms: number }>`
      select b.tat_ms, b.anchor_ms, b.intervals, (extract(epoch from now()) * 1000)::float8 as now_ms
        from (select 1) one left join rate_limits b on b.bucket = ${budget.bucket}`.execute(db);
    const row = rows[0] as { tat_ms: number | null; anchor_ms: number | null; intervals: number | null; now_ms: number };
    // No row: a bucket whose tat (0) is long past, i.e. full.
    const bucket = bucketOf({ tatMs: row.tat_ms ?? 0, anchorMs: row.anchor_ms, intervals: row.intervals }, budget.limit);
    return verdictOf(budget, bucket, row.now_ms, true);
  }

  /**
   * Whether the bucket will very likely grant a request now: its last statement on this replica,
   * less than HEADROOM_FRESH_MS ago, left at least HEADROOM_MARGIN more requests than this replica
   * has sent since. Only an estimate (other replicas spend too): the verdict is still `take`'s.
   * The gateway uses it to forward a read while its grant is on the way (public-api.ts).
   */
  function likelyAllows(budget: Budget): boolean {
    const known = headroom.get(budget.bucket);
    if (!known) return false;
    if (performance.now() - known.at > HEADROOM_FRESH_MS) {
      headroom.delete(budget.bucket);
      return false;
    }
    return known.left >= HEADROOM_MARGIN;
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

  return { take, takeWith, likelyAllows, purgeIdle };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

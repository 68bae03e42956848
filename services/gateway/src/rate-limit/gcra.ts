// The maths of GCRA (generic cell rate algorithm) as the limiter uses it, as pure functions. A
// bucket's state is its theoretical arrival time (tat): the instant at which it would be empty
// again if it took no more requests. Each admitted request pushes tat one emission interval
// (period / limit) further; a request is admitted while tat stays within one period of now. So a
// fresh bucket admits exactly `limit` requests at once, then one per interval — no fixed window
// whose boundary lets twice the limit through. The limiter's statement (`CONSUME_SQL` in
// limiter.ts) applies `grant` under the bucket's row lock with the database clock; these
// constants are its arguments.
//
// tat is kept as an anchor instant plus a whole number of intervals (`Bucket`), not as one sum:
// epoch milliseconds near 1.8e12 are floats with a resolution of 2^-12 ms, so `tat + granted ×
// interval` rounds, and when tat lay within that rounding of an interval boundary the bucket
// admitted one request fewer afterwards than it had said before (e.g. limit 3092, tat 0.85 µs
// after now: 3092 admissible, 379 granted, 2712 left instead of 2713). Counting whole intervals
// is exact: every grant only adds integers, and the requests left after it are exactly the
// requests left before it less those granted.

/** Every budget is expressed per minute (contract §7: `w=60`). */
export const PERIOD_MS = 60_000;

/**
 * Float slack, in milliseconds, when comparing an arrival time against the period: without it
 * 60000 / (60000 / 29) rounds to 28.999… and a fresh bucket with limit 29 would admit only 28.
 */
export const SLACK_MS = 0.001;

/** Milliseconds between two requests at the steady rate of `limit` per period (GCRA's T). */
export function emissionInterval(limit: number): number {
  return PERIOD_MS / limit;
}

/** A bucket's tat as `anchorMs + intervals × emissionInterval(limit)`, `intervals` a whole number ≥ 0. */
export interface Bucket {
  anchorMs: number;
  intervals: number;
}

/** A bucket's row: its tat, and the anchor and intervals the last grant of this release wrote (null before). */
export interface BucketRow {
  tatMs: number;
  anchorMs: number | null;
  intervals: number | null;
}

/** The bucket's tat in epoch milliseconds (rounded to a float: for headers and for the row's `tat_ms`). */
export function tatOf(bucket: Bucket, limit: number): number {
  return bucket.anchorMs + bucket.intervals * emissionInterval(limit);
}

/**
 * The bucket a row holds under `limit`: its anchor and intervals while they still give its
 * `tat_ms` bit for bit; otherwise anchored at `tat_ms` with no intervals. The second case is a
 * row that a grant of the previous release's statement moved (it writes `tat_ms` only), a row
 * from before anchors existed, or a bucket whose limit changed since (the same intervals give
 * another tat).
 */
export function bucketOf(row: BucketRow, limit: number): Bucket {
  const { tatMs, anchorMs, intervals } = row;
  return anchorMs !== null && intervals !== null && tatMs === anchorMs + intervals * emissionInterval(limit)
    ? { anchorMs, intervals }
    : { anchorMs: tatMs, intervals: 0 };
}

/** What a grant at `nowMs` counts from: the bucket, or a fresh one anchored at now once it has refilled (tat ≤ now). */
export function current(bucket: Bucket, nowMs: number, limit: number): Bucket {
  return tatOf(bucket, limit) <= nowMs ? { anchorMs: nowMs, intervals: 0 } : bucket;
}

/**
 * How many requests the bucket admits at `nowMs` (the burst left): the intervals that fit between
 * tat (or now, for a bucket that has refilled) and now + one period, counted from the anchor.
 */
export function admissible(bucket: Bucket, nowMs: number, limit: number): number {
  const { anchorMs, intervals } = current(bucket, nowMs, limit);
  return Math.max(0, Math.floor((nowMs + PERIOD_MS + SLACK_MS - anchorMs) / emissionInterval(limit) - intervals));
}

/** Seconds until the bucket is completely refilled (the `t` of the RateLimit header). */
export function resetSeconds(bucket: Bucket, nowMs: number, limit: number): number {
  return Math.ceil(Math.max(0, tatOf(bucket, limit) - nowMs) / 1000);
}

/** Seconds until one more request is admitted (`Retry-After` of a refused request; at least 1). */
export function retryAfterSeconds(bucket: Bucket, nowMs: number, limit: number): number {
  const ahead = Math.max(0, tatOf(bucket, limit) - nowMs);
  return Math.max(1, Math.ceil((ahead + emissionInterval(limit) - PERIOD_MS - SLACK_MS) / 1000));
}

/** What one call for `k` requests leaves behind: how many were admitted and the bucket after them. */
export interface Grant {
  granted: number;
  bucket: Bucket;
}

/**
 * `k` requests arriving together at `nowMs`: the first ones the bucket admits pass (in arrival
 * order), each advancing tat by one interval. The same rule `CONSUME_SQL` (limiter.ts) applies in
 * SQL, with the same float operations in the same order.
 */
export function grant(bucket: Bucket, nowMs: number, k: number, limit: number): Grant {
  const from = current(bucket, nowMs, limit);
  const granted = Math.min(k, admissible(from, nowMs, limit));
  return { granted, bucket: { anchorMs: from.anchorMs, intervals: from.intervals + granted } };
}

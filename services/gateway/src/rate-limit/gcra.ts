// The maths of GCRA (generic cell rate algorithm) as the limiter uses it, as pure functions. A
// bucket holds one number, its theoretical arrival time (tat): the instant at which it would be
// empty again if it took no more requests. Each admitted request pushes tat one emission interval
// (period / limit) further; a request is admitted while tat stays within one period of now. So a
// fresh bucket admits exactly `limit` requests at once, then one per interval — no fixed window
// whose boundary lets twice the limit through. The limiter's statement (`CONSUME_SQL` in
// limiter.ts) applies `grant` under the bucket's row lock with the database clock; these
// constants are its arguments.

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

/**
 * How many requests the bucket admits at `nowMs` (the burst left): the intervals that fit between
 * tat (or now, for a bucket that has refilled) and now + one period.
 */
export function admissible(tatMs: number, nowMs: number, limit: number): number {
  const base = Math.max(tatMs, nowMs);
  return Math.max(0, Math.floor((nowMs + PERIOD_MS + SLACK_MS - base) / emissionInterval(limit)));
}

/** Seconds until the bucket is completely refilled (the `t` of the RateLimit header). */
export function resetSeconds(tatMs: number, nowMs: number): number {
  return Math.ceil(Math.max(0, tatMs - nowMs) / 1000);
}

/** Seconds until one more request is admitted (`Retry-After` of a refused request; at least 1). */
export function retryAfterSeconds(tatMs: number, nowMs: number, limit: number): number {
  const ahead = Math.max(0, tatMs - nowMs);
  return Math.max(1, Math.ceil((ahead + emissionInterval(limit) - PERIOD_MS - SLACK_MS) / 1000));
}

/** What one call for `k` requests leaves behind: how many were admitted and the bucket's new tat. */
export interface Grant {
  granted: number;
  tatMs: number;
}

/**
 * `k` requests arriving together at `nowMs`: the first ones the bucket admits pass (in arrival
 * order), each advancing tat by one interval. The same rule `CONSUME_SQL` (limiter.ts) applies in SQL.
 */
export function grant(tatMs: number, nowMs: number, k: number, limit: number): Grant {
  const granted = Math.min(k, admissible(tatMs, nowMs, limit));
  return { granted, tatMs: Math.max(tatMs, nowMs) + granted * emissionInterval(limit) };
}

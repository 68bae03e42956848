import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  admissible,
  type Bucket,
  bucketOf,
  emissionInterval,
  grant,
  PERIOD_MS,
  resetSeconds,
  retryAfterSeconds,
  SLACK_MS,
  tatOf,
} from './gcra.ts';

/** A realistic clock: epoch milliseconds with a fraction, as the database reports them. */
const NOW = 1_795_000_000_123.456;

/** A bucket nobody has used (the limiter's look at a missing row). */
const FRESH: Bucket = { anchorMs: 0, intervals: 0 };

/** A row as the previous release's statement leaves it: one arrival time, no anchor. */
const atTat = (tatMs: number): Bucket => bucketOf({ tatMs, anchorMs: null, intervals: null }, 1);

/**
 * Admits requests one call at a time, as separate statements would, until the bucket refuses.
 * Calls are `stepMs` apart (0: all at the same instant).
 */
function oneByOne(bucket: Bucket, now: number, limit: number, stepMs: number): { admitted: number; bucket: Bucket } {
  let b = bucket;
  let admitted = 0;
  for (let at = now; admitted <= limit; at += stepMs) {
    const step = grant(b, at, 1, limit);
    if (step.granted === 0) break;
    b = step.bucket;
    admitted++;
  }
  return { admitted, bucket: b };
}

/** Any bucket state: one arrival time around now (a row of the previous release), or an anchor with whole intervals. */
const anyBucket = (limit: number) =>
  fc.oneof(
    fc.double({ min: -120_000, max: 90_000, noNaN: true }).map((offset) => atTat(NOW + offset)),
    fc
      .record({ anchor: fc.double({ min: -200_000, max: 10_000, noNaN: true }), intervals: fc.integer({ min: 0, max: 3 * limit }) })
      .map(({ anchor, intervals }) => ({ anchorMs: NOW + anchor, intervals })),
  );

describe('GCRA maths', () => {
  test('the emission interval is the period over the limit', () => {
    expect(emissionInterval(30)).toBe(2000);
    expect(emissionInterval(120)).toBe(500);
    expect(emissionInterval(7)).toBeCloseTo(8571.428571, 5);
    expect(PERIOD_MS).toBe(60_000);
  });

  test('a fresh bucket admits exactly its limit at once (the float slack keeps e.g. 29 from becoming 28)', () => {
    for (let limit = 1; limit <= 5000; limit++) expect({ limit, burst: admissible(FRESH, NOW, limit) }).toEqual({ limit, burst: limit });
    // Without the slack the same division falls short: the case SLACK_MS exists for.
    expect(Math.floor((NOW + PERIOD_MS - NOW) / emissionInterval(29))).toBe(28);
    expect(SLACK_MS).toBeLessThan(emissionInterval(5000));
  });

  test('one request at a time admits exactly the limit, then refuses: 1 µs apart, and all at the same instant', () => {
    for (let limit = 1; limit <= 2000; limit++) {
      expect({ limit, ...oneByOne(FRESH, NOW, limit, 0.001) }).toMatchObject({ limit, admitted: limit });
      // At one instant too: each grant adds a whole interval, so nothing accumulates rounding.
      expect({ limit, ...oneByOne(FRESH, NOW, limit, 0) }).toMatchObject({
        limit,
        admitted: limit,
        bucket: { anchorMs: NOW, intervals: limit },
      });
    }
  });

  test('one call for k requests grants what the bucket admits, and the remaining count agrees with it', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 60_000 })
          .chain((limit) => fc.tuple(fc.constant(limit), fc.integer({ min: 1, max: 1000 }), anyBucket(limit))),
        ([limit, k, bucket]) => {
          const before = admissible(bucket, NOW, limit);
          const after = grant(bucket, NOW, k, limit);
          expect(after.granted).toBe(Math.min(k, before));
          // What the RateLimit header reports after the call is what the next call would get.
          expect(admissible(after.bucket, NOW, limit)).toBe(before - after.granted);
          // Never more than the limit (while the interval, here ≥ 1 ms, exceeds the slack).
          expect(before).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('an arrival time within float rounding of an interval boundary: the requests left after a grant are exactly those before less those granted', () => {
    // With tat as one float sum (tat + granted × interval) these lost one request: limit 3092 with
    // tat 0.8545 µs after now admitted 3092, granted 379 and then admitted 2712, not 2713. Found
    // by the property above (seed 334777688) in about 0.6 % of its runs.
    let checked = 0;
    for (const limit of [3092, 29, 7, 60, 1000, 12_345, 59_999]) {
      for (let j = 0; j <= 4000; j++) {
        const bucket = atTat(NOW + 0.0005 + j * 2.5e-7);
        const before = admissible(bucket, NOW, limit);
        for (const k of [1, 379, 5000]) {
          const after = grant(bucket, NOW, k, limit);
          const left = admissible(after.bucket, NOW, limit);
          if (left !== before - after.granted)
            expect({ limit, offset: 0.0005 + j * 2.5e-7, k, before, granted: after.granted, left }).toBeNull();
          checked++;
        }
      }
    }
    expect(checked).toBe(7 * 4001 * 3);
  });

  test('calls at one instant, whatever their sizes, grant in total exactly what the bucket admitted', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 60_000 })
          .chain((limit) =>
            fc.tuple(fc.constant(limit), anyBucket(limit), fc.array(fc.integer({ min: 1, max: 2000 }), { minLength: 1, maxLength: 40 })),
          ),
        ([limit, bucket, sizes]) => {
          const before = admissible(bucket, NOW, limit);
          let b = bucket;
          let total = 0;
          for (const k of sizes) {
            const step = grant(b, NOW, k, limit);
            total += step.granted;
            b = step.bucket;
          }
          expect(total).toBe(
            Math.min(
              before,
              sizes.reduce((a, k) => a + k, 0),
            ),
          );
          expect(admissible(b, NOW, limit)).toBe(before - total);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a row counts from its anchor while anchor and intervals give its tat bit for bit, else from its tat', () => {
    const limit = 7;
    const anchored = { anchorMs: NOW, intervals: 5 };
    const tatMs = tatOf(anchored, limit);
    expect(bucketOf({ tatMs, anchorMs: NOW, intervals: 5 }, limit)).toEqual(anchored);
    // The previous release's statement moved tat (two grants): the row counts from there.
    const moved = tatMs + 2 * emissionInterval(limit);
    expect(bucketOf({ tatMs: moved, anchorMs: NOW, intervals: 5 }, limit)).toEqual({ anchorMs: moved, intervals: 0 });
    // The limit changed: the same intervals are another tat, so the row counts from its tat.
    expect(bucketOf({ tatMs, anchorMs: NOW, intervals: 5 }, 8)).toEqual({ anchorMs: tatMs, intervals: 0 });
    // A row from before anchors existed.
    expect(bucketOf({ tatMs, anchorMs: null, intervals: null }, limit)).toEqual({ anchorMs: tatMs, intervals: 0 });
    // Either way the same requests are admitted from the same arrival time (here 2 of 7).
    expect(admissible(anchored, NOW, limit)).toBe(2);
    expect(admissible(atTat(tatMs), NOW, limit)).toBe(2);
  });

  test('a refilled bucket starts again from now with no intervals', () => {
    const old = { anchorMs: NOW - 10 * PERIOD_MS, intervals: 30 };
    expect(grant(old, NOW, 1, 30)).toEqual({ granted: 1, bucket: { anchorMs: NOW, intervals: 1 } });
    expect(admissible(old, NOW, 30)).toBe(30);
  });

  test('after the burst, one request per interval: Retry-After says when the next one passes', () => {
    const limit = 60; // one per second
    const full = grant(FRESH, NOW, limit, limit);
    expect(full).toEqual({ granted: 60, bucket: { anchorMs: NOW, intervals: 60 } });
    expect(tatOf(full.bucket, limit)).toBe(NOW + PERIOD_MS);
    expect(admissible(full.bucket, NOW, limit)).toBe(0);
    expect(retryAfterSeconds(full.bucket, NOW, limit)).toBe(1);
    expect(admissible(full.bucket, NOW + 999, limit)).toBe(0);
    expect(admissible(full.bucket, NOW + 1000, limit)).toBe(1);
    // 30 per minute: one every 2 s.
    const writes = grant(FRESH, NOW, 31, 30);
    expect(writes.granted).toBe(30);
    expect(retryAfterSeconds(writes.bucket, NOW + 5, 30)).toBe(2);
    expect(retryAfterSeconds(writes.bucket, NOW + 1500, 30)).toBe(1);
  });

  test('remaining counts down from limit − 1 and reset is the time to a full bucket', () => {
    let bucket = FRESH;
    for (let i = 0; i < 30; i++) {
      bucket = grant(bucket, NOW, 1, 30).bucket;
      expect(admissible(bucket, NOW, 30)).toBe(29 - i);
    }
    expect(resetSeconds(bucket, NOW, 30)).toBe(60);
    expect(resetSeconds(bucket, NOW + 59_001, 30)).toBe(1);
    expect(resetSeconds(bucket, NOW + PERIOD_MS, 30)).toBe(0);
    expect(resetSeconds(FRESH, NOW, 30)).toBe(0);
    // A bucket refills at the steady rate: after half a period half of it is back.
    expect(admissible(bucket, NOW + PERIOD_MS / 2, 30)).toBe(15);
    expect(admissible(bucket, NOW + 2 * PERIOD_MS, 30)).toBe(30);
  });

  test('a refused request leaves the bucket as it was', () => {
    const full = grant(FRESH, NOW, 3, 3);
    expect(grant(full.bucket, NOW, 5, 3)).toEqual({ granted: 0, bucket: full.bucket });
  });
});

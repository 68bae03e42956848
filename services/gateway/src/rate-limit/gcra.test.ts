import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { admissible, emissionInterval, grant, PERIOD_MS, resetSeconds, retryAfterSeconds, SLACK_MS } from './gcra.ts';

/** A realistic clock: epoch milliseconds with a fraction, as the database reports them. */
const NOW = 1_795_000_000_123.456;

/**
 * Admits requests one call at a time, as separate statements would, until the bucket refuses.
 * Calls are `stepMs` apart: separate transactions see PostgreSQL clock readings at least 1 µs
 * apart (its resolution). At the very same instant, each addition to a tat of 1.8e12 ms rounds
 * by up to 1.2e-4 ms and after a dozen of them the sum outgrows SLACK_MS.
 */
function oneByOne(tatMs: number, now: number, limit: number, stepMs = 0.001): { admitted: number; tatMs: number } {
  let tat = tatMs;
  let admitted = 0;
  for (let at = now; admitted <= limit; at += stepMs) {
    const step = grant(tat, at, 1, limit);
    if (step.granted === 0) break;
    tat = step.tatMs;
    admitted++;
  }
  return { admitted, tatMs: tat };
}

describe('GCRA maths', () => {
  test('the emission interval is the period over the limit', () => {
    expect(emissionInterval(30)).toBe(2000);
    expect(emissionInterval(120)).toBe(500);
    expect(emissionInterval(7)).toBeCloseTo(8571.428571, 5);
    expect(PERIOD_MS).toBe(60_000);
  });

  test('a fresh bucket admits exactly its limit at once (the float slack keeps e.g. 29 from becoming 28)', () => {
    for (let limit = 1; limit <= 5000; limit++) expect({ limit, burst: admissible(0, NOW, limit) }).toEqual({ limit, burst: limit });
    // Without the slack the same division falls short: the case SLACK_MS exists for.
    expect(Math.floor((NOW + PERIOD_MS - NOW) / emissionInterval(29))).toBe(28);
    expect(SLACK_MS).toBeLessThan(emissionInterval(5000));
  });

  test('one request at a time admits exactly the limit, then refuses', () => {
    for (let limit = 1; limit <= 2000; limit++) expect({ limit, ...oneByOne(0, NOW, limit) }).toMatchObject({ limit, admitted: limit });
  });

  test('one call for k requests grants what the bucket admits, and the remaining count agrees with it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.double({ min: -120_000, max: 90_000, noNaN: true }),
        (limit, k, offset) => {
          const tat = NOW + offset;
          const before = admissible(tat, NOW, limit);
          const after = grant(tat, NOW, k, limit);
          expect(after.granted).toBe(Math.min(k, before));
          // What the RateLimit header reports after the call is what the next call would get.
          expect(admissible(after.tatMs, NOW, limit)).toBe(before - after.granted);
          // Never more than the limit (while the interval, here ≥ 1 ms, exceeds the slack).
          expect(before).toBeLessThanOrEqual(limit);
        },
      ),
    );
  });

  test('after the burst, one request per interval: Retry-After says when the next one passes', () => {
    const limit = 60; // one per second
    const full = grant(0, NOW, limit, limit);
    expect(full).toEqual({ granted: 60, tatMs: NOW + PERIOD_MS });
    expect(admissible(full.tatMs, NOW, limit)).toBe(0);
    expect(retryAfterSeconds(full.tatMs, NOW, limit)).toBe(1);
    expect(admissible(full.tatMs, NOW + 999, limit)).toBe(0);
    expect(admissible(full.tatMs, NOW + 1000, limit)).toBe(1);
    // 30 per minute: one every 2 s.
    const writes = grant(0, NOW, 31, 30);
    expect(writes.granted).toBe(30);
    expect(retryAfterSeconds(writes.tatMs, NOW + 5, 30)).toBe(2);
    expect(retryAfterSeconds(writes.tatMs, NOW + 1500, 30)).toBe(1);
  });

  test('remaining counts down from limit − 1 and reset is the time to a full bucket', () => {
    let tat = 0;
    for (let i = 0; i < 30; i++) {
      tat = grant(tat, NOW, 1, 30).tatMs;
      expect(admissible(tat, NOW, 30)).toBe(29 - i);
    }
    expect(resetSeconds(tat, NOW)).toBe(60);
    expect(resetSeconds(tat, NOW + 59_001)).toBe(1);
    expect(resetSeconds(tat, NOW + PERIOD_MS)).toBe(0);
    expect(resetSeconds(0, NOW)).toBe(0);
    // A bucket refills at the steady rate: after half a period half of it is back.
    expect(admissible(tat, NOW + PERIOD_MS / 2, 30)).toBe(15);
    expect(admissible(tat, NOW + 2 * PERIOD_MS, 30)).toBe(30);
  });

  test('a refused request leaves the bucket as it was', () => {
    const full = grant(0, NOW, 3, 3);
    expect(grant(full.tatMs, NOW, 5, 3)).toEqual({ granted: 0, tatMs: full.tatMs });
  });
});

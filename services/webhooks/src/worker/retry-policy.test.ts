import { describe, expect, test } from 'bun:test';
import { judgeAttempt, nextRetryDelayMs, retryAfterMs } from './retry-policy.ts';

const result = (statusCode: number | null) => ({ statusCode, retryAfter: null, excerpt: null, error: null, durationMs: 1 });
const schedule = [5_000, 300_000, 1_800_000];

describe('retry policy', () => {
  test('2xx delivered, 410 gone, everything else retried', () => {
    expect(judgeAttempt(result(200))).toBe('delivered');
    expect(judgeAttempt(result(204))).toBe('delivered');
    expect(judgeAttempt(result(410))).toBe('gone');
    for (const code of [301, 302, 400, 404, 429, 500, 503, null]) expect(judgeAttempt(result(code))).toBe('retryable');
  });

  test('the schedule entry with ±20 % jitter, then nothing', () => {
    expect(nextRetryDelayMs(1, schedule, 0.2, null, () => 0)).toBe(4_000);
    expect(nextRetryDelayMs(1, schedule, 0.2, null, () => 1)).toBe(6_000);
    expect(nextRetryDelayMs(2, schedule, 0.2, null, () => 0.5)).toBe(300_000);
    expect(nextRetryDelayMs(4, schedule, 0.2, null)).toBeUndefined();
  });

  test('Retry-After lengthens the wait but never shortens it', () => {
    expect(nextRetryDelayMs(1, schedule, 0, '60')).toBe(60_000);
    expect(nextRetryDelayMs(2, schedule, 0, '1')).toBe(300_000);
    const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString();
    expect(retryAfterMs(inTwoMinutes)).toBeGreaterThan(110_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('999999999')).toBe(24 * 3600 * 1000);
  });
});

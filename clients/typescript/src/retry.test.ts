import { describe, expect, test } from 'bun:test';
import { backoffMs, isRetryableStatus, parseRetryAfter, retryDelayMs, retryPolicy } from './retry.ts';

describe('retry policy', () => {
  test('retries 5xx, 429 and 409 idempotency_key_in_use; never another 4xx', () => {
    for (const status of [500, 502, 503, 504]) expect(isRetryableStatus(status, 'service_unavailable')).toBe(true);
    expect(isRetryableStatus(429, 'rate_limited')).toBe(true);
    expect(isRetryableStatus(409, 'idempotency_key_in_use')).toBe(true);
    expect(isRetryableStatus(409, 'conflict')).toBe(false);
    for (const status of [400, 401, 403, 404, 412, 413, 422]) expect(isRetryableStatus(status, 'whatever')).toBe(false);
  });

  test('Retry-After in seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });

  test('backoff doubles up to the cap, with half of it random', () => {
    const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1000 });
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, policy, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  });

  test('stops when out of retries or when the wait would end past the budget; Retry-After is never shortened', () => {
    const policy = retryPolicy({ maxRetries: 2, budgetMs: 10_000, baseDelayMs: 100 });
    expect(retryDelayMs(1, 0, null, policy, () => 1)).toBe(100);
    expect(retryDelayMs(2, 0, 4, policy)).toBe(4000);
    expect(retryDelayMs(3, 0, null, policy)).toBeNull();
    expect(retryDelayMs(1, 7000, 3, policy)).toBeNull();
    expect(retryDelayMs(1, 9950, null, policy, () => 1)).toBeNull();
    expect(retryDelayMs(1, 0, null, retryPolicy({ maxRetries: 0 }))).toBeNull();
  });
});
